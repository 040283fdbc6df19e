//! TQ, the task query language (spec/tq.md): text → tokens → forms → typed
//! query → plan → SQL → rows → text.

pub mod ast;
pub mod exec;
pub mod plan;
pub mod render;
pub mod sql;
mod standin;

// STAND-IN until the front-end lands.
pub use standin::{diagnostic, front, print, registry};

pub use ast::Surface;
