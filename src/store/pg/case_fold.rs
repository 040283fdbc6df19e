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
//!   An all-ASCII text (as many bytes as characters) takes
//!   `lower(x COLLATE "C")` instead, which lowers ASCII letters only and is
//!   what `to_lowercase` does to ASCII; any other text goes to
//!   `tq_fold_full(text)`, the generated mapping (the regular expression
//!   alone costs ~150 µs a call). `tq_fold` is a one-line SQL function and
//!   not `STRICT` (a NULL folds to NULL all the same), so PostgreSQL
//!   inlines it into the statement instead of calling it per row;
//!   `tq_fold_full` is PL/pgSQL, so it is never inlined and an `EXPLAIN`
//!   shows its name, not the mapping.
//! - `tq_stale_catalog() → boolean`: raises [`STALE_CATALOG_MARK`]; the
//!   gate of a read compiled against a catalog that has since changed
//!   (`tq::exec_pg::gated`). `STABLE`: so the gate is a one-time filter
//!   (a `VOLATILE` call would be evaluated per row) and is not evaluated
//!   while planning (as an `IMMUTABLE` one would be).
//! - `tq_missing_current(slug text) → bigint`: raises
//!   [`MISSING_CURRENT_MARK`] followed by the slug (`tq` maps it to the same
//!   sentence as on SQLite).

use std::fmt::Write as _;
use std::sync::OnceLock;

/// The version of [`functions_ddl`], stamped as `schema_meta.functions`:
/// a schema whose stamp is lower (or absent) gets the functions replaced
/// when a store opens it, without a schema version of its own (the tables
/// are unchanged). 2: the ASCII fast path of `tq_fold`, inlinable (not
/// `STRICT`), `tq_fold_full` and `tq_stale_catalog`.
pub const FUNCTIONS_VERSION: i64 = 2;

/// The message `tq_stale_catalog` raises: a read compiled against an
/// older catalog found a newer one (`tq::exec_pg::gated`), and is compiled
/// again.
pub const STALE_CATALOG_MARK: &str = "tq-stale-catalog";

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
        "CREATE OR REPLACE FUNCTION tq_fold_full(x text) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $full$ BEGIN RETURN translate({body}, {}, {}); END $full$;
CREATE OR REPLACE FUNCTION tq_fold(x text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fold$ SELECT CASE WHEN octet_length(x) = char_length(x) THEN lower(x COLLATE \"C\") ELSE tq_fold_full(x) END $fold$;
CREATE OR REPLACE FUNCTION tq_missing_current(slug text) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $missing$
BEGIN
    RAISE EXCEPTION USING MESSAGE = {} || slug, ERRCODE = 'P0001';
END
$missing$;
CREATE OR REPLACE FUNCTION tq_stale_catalog() RETURNS boolean LANGUAGE plpgsql STABLE AS $stale$
BEGIN
    RAISE EXCEPTION USING MESSAGE = {}, ERRCODE = 'P0001';
END
$stale$;",
        lit(&from),
        lit(&to),
        lit(MISSING_CURRENT_MARK),
        lit(STALE_CATALOG_MARK)
    )
}
