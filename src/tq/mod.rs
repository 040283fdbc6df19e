//! TQ, the task query language (spec/tq.md): text → tokens → forms → typed
//! query → plan → SQL → rows → text.

pub mod ast;
pub mod cache;
pub mod check;
pub mod diagnostic;
pub mod engine;
pub mod exec;
pub mod exec_pg;
pub mod front;
pub mod ir;
pub mod json;
pub mod lexer;
pub mod mutate;
mod mutate_pg;
pub mod parser;
pub mod plan;
pub mod print;
pub mod reference;
pub mod registry;
pub mod render;
pub mod sql;

pub use ast::Surface;
pub use diagnostic::{DiagKind, Diagnostic};
pub use engine::Engine;
pub use front::compile;
pub use print::print;
