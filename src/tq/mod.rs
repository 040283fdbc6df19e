//! TQ, the task query language (spec/tq.md): text → tokens → forms → typed
//! query → plan → SQL → rows → text.

pub mod ast;
pub mod diagnostic;
pub mod lexer;
pub mod parser;
pub mod registry;

pub use ast::Surface;
