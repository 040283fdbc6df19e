//! Observation search on PostgreSQL (spec/team.md "The same on both
//! engines": the same SET of tasks for the same query and sanitiser rules;
//! the order within a search is engine-defined; docs/team.md "Search").
//!
//! PostgreSQL's own text parser splits `file.rs:45-78` differently from
//! SQLite's FTS5 `unicode61` tokenizer, so cairn tokenizes in Rust, the
//! same way on both sides of the index: a token is a run of letters and
//! digits (Unicode) and `_ : - .` (FTS5's `tokenchars`), lowercased. The
//! fold stores each observation's tokens with their positions as a
//! `tsvector` literal ([`tsvector_literal`]); a sanitised FTS5 expression
//! becomes a `tsquery` ([`tsquery_of`]): terms ANDed, a quoted term a
//! phrase (`<->`), a trailing `*` a prefix (`:*`). The snippet is cut in
//! Rust ([`snippet`]): the 12-token window with the most matches.
//!
//! Limits (PostgreSQL's): a token over [`MAX_TOKEN_BYTES`] is indexed and
//! searched by its hash (an exact match finds it; a prefix does not),
//! positions past 16,383 count as 16,383, and an observation's index stops
//! at [`MAX_TSVECTOR_BYTES`] of literal (a note of about 1 MB of distinct
//! words); such text is still stored whole.

use crate::store::parts::identifier_parts;

/// The longest token indexed as itself, in bytes (PostgreSQL refuses
/// lexemes of 2 KiB); longer ones are indexed by their hash.
pub const MAX_TOKEN_BYTES: usize = 2000;

/// The largest `tsvector` literal built for one observation, in bytes
/// (PostgreSQL's limit is 1 MiB of tsvector).
pub const MAX_TSVECTOR_BYTES: usize = 900_000;

/// Tokens per snippet window (FTS5's `snippet(..., 12)`).
pub const SNIPPET_TOKENS: usize = 12;

fn token_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | ':' | '-' | '.')
}

/// The relevance of a match of tsvector `tsv` against tsquery `q` (SQL
/// expressions): `ts_rank`, as `float8`, higher is better; the same in
/// `task_search` and TQ's `(search …)`.
pub fn rank_expr(tsv: &str, q: &str) -> String {
    format!("ts_rank({tsv}, {q})::float8")
}

/// The identifier parts of `text` (`store::parts`) joined by spaces: the
/// `parts` column of a SQLite observation (FTS5 tokenizes it back into the
/// same tokens; issue 26).
pub fn parts_text(text: &str) -> String {
    let toks: Vec<String> = tokens(text).into_iter().map(|t| t.2).collect();
    identifier_parts(toks.iter().map(String::as_str)).join(" ")
}

/// The tokens of `text`: `(byte start, byte end, lowercased token)`.
pub fn tokens(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match (token_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i, text[s..i].to_lowercase()));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len(), text[s..].to_lowercase()));
    }
    out
}

/// `tok` quoted as a tsvector/tsquery lexeme: `'…'` with `'` doubled and
/// `\` escaped. A token over [`MAX_TOKEN_BYTES`] (PostgreSQL refuses
/// lexemes of 2 KiB) is indexed and searched as `~` and its SHA-256 (hex),
/// the same on both sides, so an exact match still finds it.
fn lexeme(tok: &str) -> String {
    if tok.len() > MAX_TOKEN_BYTES {
        use sha2::{Digest, Sha256};
        return format!("'~{}'", hex::encode(Sha256::digest(tok.as_bytes())));
    }
    format!("'{}'", tok.replace('\\', "\\\\").replace('\'', "''"))
}

/// The `tsvector` literal of `text`: every token with its 1-based position
/// at weight `A`, then (from two positions past the last token, so no
/// phrase spans the two, as SQLite's two columns) the identifier parts of
/// `store::parts` at weight `D`: `ts_rank` counts a whole match ten times
/// a part's. [`tsvector_of`] of the one text.
pub fn tsvector_literal(text: &str) -> String {
    tsvector_of(&[text])
}

/// The `tsvector` literal of several texts indexed as one document (a
/// task's name and description, `store::texts`, as SQLite's `task_fts`
/// row of columns): each text's tokens at weight `A`, each text starting
/// two positions past the previous one's last token (no phrase spans two
/// texts, as no FTS5 phrase spans two columns), then the identifier parts
/// of all their tokens, in order, at weight `D`, after the same gap.
pub fn tsvector_of(texts: &[&str]) -> String {
    let mut toks: Vec<(usize, String)> = Vec::new();
    let mut pos = 1;
    for text in texts {
        let mut any = false;
        for t in tokens(text) {
            toks.push((pos, t.2));
            pos += 1;
            any = true;
        }
        if any {
            pos += 1;
        }
    }
    let parts = identifier_parts(toks.iter().map(|t| t.1.as_str()));
    let weighted = toks
        .iter()
        .map(|(p, t)| (*p, t, "A"))
        .chain(parts.iter().enumerate().map(|(i, t)| (pos + i, t, "")));
    let mut out = String::new();
    for (pos, tok, weight) in weighted {
        let entry = format!("{}:{}{weight}", lexeme(tok), pos.min(16_383));
        if out.len() + entry.len() + 1 > MAX_TSVECTOR_BYTES {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&entry);
    }
    out
}

/// One term of a sanitised expression: its tokens (a phrase) and whether
/// the last one is a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The tokens, in order.
    pub tokens: Vec<String>,
    /// A trailing `*`.
    pub prefix: bool,
}

/// The terms of a sanitised FTS5 expression (`store::search::sanitize`'s
/// output: barewords and `"quoted"` phrases, each maybe followed by `*`,
/// separated by spaces).
pub fn terms(expr: &str) -> Vec<Term> {
    let mut out = Vec::new();
    let mut chars = expr.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c == ' ' {
            chars.next();
            continue;
        }
        let mut word = String::new();
        if c == '"' {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        word.push('"');
                    } else {
                        break;
                    }
                } else {
                    word.push(c);
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ' ' || c == '*' {
                    break;
                }
                word.push(c);
                chars.next();
            }
        }
        let prefix = chars.peek() == Some(&'*');
        if prefix {
            chars.next();
        }
        let toks: Vec<String> = tokens(&word).into_iter().map(|(_, _, t)| t).collect();
        if !toks.is_empty() {
            out.push(Term {
                tokens: toks,
                prefix,
            });
        }
    }
    out
}

/// The `tsquery` text of `terms`, or `None` when there is none.
pub fn tsquery_of(terms: &[Term]) -> Option<String> {
    let parts: Vec<String> = terms
        .iter()
        .map(|t| {
            let n = t.tokens.len();
            let words: Vec<String> = t
                .tokens
                .iter()
                .enumerate()
                .map(|(i, tok)| {
                    let mut w = lexeme(tok);
                    if t.prefix && i + 1 == n && tok.len() <= MAX_TOKEN_BYTES {
                        w.push_str(":*");
                    }
                    w
                })
                .collect();
            format!("({})", words.join(" <-> "))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" & "))
}

/// True when token `tok` (lowercased) matches some token of `terms` (a
/// trailing `*` term by prefix): what [`snippet`] brackets.
pub fn token_matches(tok: &str, terms: &[Term]) -> bool {
    matches(tok, terms)
}

fn matches(tok: &str, terms: &[Term]) -> bool {
    terms.iter().any(|t| {
        let n = t.tokens.len();
        t.tokens.iter().enumerate().any(|(i, q)| {
            if t.prefix && i + 1 == n {
                tok.starts_with(q.as_str())
            } else {
                tok == q
            }
        })
    })
}

/// The snippet of `text` for `terms`: the [`SNIPPET_TOKENS`]-token window
/// with the most matching tokens (the earliest on ties), matches in
/// `[`brackets`]`, `…` where text was cut.
pub fn snippet(text: &str, terms: &[Term]) -> String {
    let toks = tokens(text);
    if toks.is_empty() {
        return String::new();
    }
    let hit: Vec<bool> = toks.iter().map(|(_, _, t)| matches(t, terms)).collect();
    let w = SNIPPET_TOKENS.min(toks.len());
    let mut best = (0usize, 0usize);
    for start in 0..=toks.len() - w {
        let n = hit[start..start + w].iter().filter(|h| **h).count();
        if n > best.1 {
            best = (start, n);
        }
    }
    let (first, last) = (best.0, best.0 + w - 1);
    let mut out = String::new();
    if first > 0 {
        out.push('…');
    }
    let mut at = toks[first].0;
    for (i, (s, e, _)) in toks.iter().enumerate().take(last + 1).skip(first) {
        out.push_str(&text[at..*s]);
        if hit[i] {
            out.push('[');
            out.push_str(&text[*s..*e]);
            out.push(']');
        } else {
            out.push_str(&text[*s..*e]);
        }
        at = *e;
    }
    if last + 1 < toks.len() {
        out.push('…');
    } else {
        out.push_str(&text[at..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_stay_whole_and_case_folds() {
        let t: Vec<String> = tokens("See file.rs:45-78, Café it's")
            .into_iter()
            .map(|t| t.2)
            .collect();
        assert_eq!(t, vec!["see", "file.rs:45-78", "café", "it", "s"]);
    }

    #[test]
    fn literals_quote_lexemes() {
        assert_eq!(
            tsvector_literal("it's a\\b"),
            "'it':1A 's':2A 'a':3A 'b':4A"
        );
        assert_eq!(tsvector_literal("see a.b"), "'see':1A 'a.b':2A 'a':4 'b':5");
        assert_eq!(tsvector_literal(""), "");
        assert_eq!(
            tsvector_of(&["fix a.b", "", "it"]),
            "'fix':1A 'a.b':2A 'it':4A 'a':6 'b':7"
        );
        let q = tsquery_of(&terms("\"it's\" pre* \"say\"\"hi\"\"\"")).unwrap();
        assert_eq!(q, "('it' <-> 's') & ('pre':*) & ('say' <-> 'hi')");
    }

    #[test]
    fn snippets_mark_matches_and_cut() {
        let text =
            "one two three four five six seven eight nine ten eleven twelve thirteen fourteen";
        assert_eq!(
            snippet(text, &terms("fourteen")),
            "…three four five six seven eight nine ten eleven twelve thirteen [fourteen]"
        );
        assert_eq!(snippet("a ranking b", &terms("rank*")), "a [ranking] b");
    }
}
