//! TQ, the task query language (spec/tq.md): text → tokens → forms → typed
//! query → plan → SQL → rows → text.

pub mod ast;
pub mod check;
pub mod diagnostic;
pub mod front;
pub mod lexer;
pub mod parser;
pub mod print;
pub mod reference;
pub mod registry;

pub use ast::Surface;
pub use diagnostic::{DiagKind, Diagnostic};
pub use front::compile;
pub use print::print;
