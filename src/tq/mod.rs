//! TQ, the task query language (spec/tq.md): text → tokens → forms → typed
//! query → plan → SQL → rows → text.

pub mod ast;

pub use ast::Surface;
