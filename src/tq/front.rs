//! The front door of the TQ front-end: text → typed query (spec/tq.md §1, §2, §7).

use crate::tq::ast::Query;
use crate::tq::check::check;
use crate::tq::diagnostic::Diagnostic;
use crate::tq::parser::parse;

/// Lexes, parses and checks `text` into a [`Query`]. `meta_keys` are the live
/// metadata keys accepted as text fields (e.g. `Store::metadata_keys()`).
/// Errors: `Parse error` diagnostics from the lexer/parser (size limit 64 KiB,
/// nesting 128, malformed text) and `Query error` diagnostics from the checker
/// (unknown names with suggestions, arity, field types, dates).
pub fn compile(text: &str, meta_keys: &[String]) -> Result<Query, Diagnostic> {
    let form = parse(text)?;
    check(&form, text, meta_keys)
}
