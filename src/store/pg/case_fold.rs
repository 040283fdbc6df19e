//! The SQL functions TQ's PostgreSQL statements call (issue 21;
//! spec/team.md "The same on both engines"), created in the project's
//! schema with the tables:
//!
//! - `tq_fold(text) → text`: the case fold of `(node ...)` and `(matches
//!   ...)`, byte-identical to Rust's `str::to_lowercase` (what SQLite's
//!   registered `tq_fold` runs). PostgreSQL's `lower()` depends on the
//!   collation (ASCII only under `"C"`) and maps characters one by one, so
//!   the function is generated from Rust's own mapping instead: the final
//!   sigma rule (`Σ` → `ς` at the end of a word) by a regular expression over
//!   the Case_Ignorable and Cased classes, the mappings longer than one
//!   character (`İ` → `i̇`) by `replace`, every other mapping by one
//!   `translate`. The classes and the tables are read off `to_lowercase`
//!   itself, so they are those of the binary that created the schema.
//! - `tq_missing_current(slug text) → bigint`: raises
//!   [`MISSING_CURRENT_MARK`] followed by the slug (`tq` maps it to the same
//!   sentence as on SQLite).

use std::fmt::Write as _;
use std::sync::OnceLock;

/// The start of the message `tq_missing_current` raises; the slug follows.
pub const MISSING_CURRENT_MARK: &str = "tq-missing-current: ";

/// Every Unicode scalar value but NUL (PostgreSQL text holds no NUL).
fn scalars() -> impl Iterator<Item = char> {
    (1u32..=0x10FFFF).filter_map(char::from_u32)
}

/// `c` is Cased and not Case_Ignorable: the first non-ignorable character
/// before a `Σ` that makes it final (read off `to_lowercase`).
fn cased(c: char) -> bool {
    format!("{c}Σ").to_lowercase().ends_with('ς')
}

/// `c` is Case_Ignorable (skipped when looking for the cased neighbour).
fn ignorable(c: char) -> bool {
    !cased(c) && format!("A{c}Σ").to_lowercase().ends_with('ς')
}

/// A regular-expression bracket expression of the characters `keep`
/// selects, as `\U` escapes and ranges.
fn class(keep: impl Fn(char) -> bool) -> String {
    let mut out = String::from("[");
    let mut run: Option<(u32, u32)> = None;
    let flush = |out: &mut String, (a, b): (u32, u32)| {
        if a == b {
            let _ = write!(out, "\\U{a:08X}");
        } else {
            let _ = write!(out, "\\U{a:08X}-\\U{b:08X}");
        }
    };
    for c in scalars() {
        if !keep(c) {
            continue;
        }
        let u = c as u32;
        run = match run {
            Some((a, b)) if b + 1 == u => Some((a, u)),
            Some(r) => {
                flush(&mut out, r);
                Some((u, u))
            }
            None => Some((u, u)),
        };
    }
    if let Some(r) = run {
        flush(&mut out, r);
    }
    out.push(']');
    out
}

/// `s` as an SQL string literal.
fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The DDL of `tq_fold` and `tq_missing_current` (idempotent: `CREATE OR
/// REPLACE`), run in the project's schema; built once per process (it scans
/// every Unicode scalar value).
pub fn functions_ddl() -> &'static str {
    static DDL: OnceLock<String> = OnceLock::new();
    DDL.get_or_init(build)
}

fn build() -> String {
    let (mut from, mut to) = (String::new(), String::new());
    let mut longer = Vec::new();
    for c in scalars() {
        let l: String = c.to_lowercase().collect();
        let mut it = l.chars();
        match (it.next(), it.next()) {
            (Some(one), None) if one == c => {}
            (Some(one), None) => {
                from.push(c);
                to.push(one);
            }
            _ => longer.push((c, l)),
        }
    }
    let cased_class = class(cased);
    let ign = class(ignorable);
    let sigma = format!("(?<={cased_class}{ign}*)\u{3A3}(?!{ign}*{cased_class})");
    let mut body = format!("regexp_replace(x, {}, 'ς', 'g')", lit(&sigma));
    for (c, l) in &longer {
        body = format!("replace({body}, {}, {})", lit(&c.to_string()), lit(l));
    }
    format!(
        "CREATE OR REPLACE FUNCTION tq_fold(x text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fold$ SELECT translate({body}, {}, {}) $fold$;
CREATE OR REPLACE FUNCTION tq_missing_current(slug text) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $missing$
BEGIN
    RAISE EXCEPTION USING MESSAGE = {} || slug, ERRCODE = 'P0001';
END
$missing$;",
        lit(&from),
        lit(&to),
        lit(MISSING_CURRENT_MARK)
    )
}
