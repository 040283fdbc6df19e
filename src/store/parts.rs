//! The parts of identifiers, indexed beside the whole (issue 26; spec/tq.md
//! §10, docs/store.md "Search"): `file.rs:45-78` is one token of the search
//! index, so `file.rs` alone found nothing in it. Both engines index, next
//! to an observation's own tokens, every run of the parts of each token
//! that holds a separator (`_ : - .`, the tokenizer's `tokenchars`), joined
//! by the separators written between them, except the whole token itself:
//! for `file.rs:45-78` that is `file`, `file.rs`, `file.rs:45`, `rs`,
//! `rs:45`, `rs:45-78`, `45`, `45-78` and `78` (and `file.rs:45-78` stays
//! a token of the text). SQLite keeps them in the `parts` column of
//! `observations` (the second column of `obs_fts`, weighted below the text
//! in the ranking); PostgreSQL in the same `tsvector`, after the text's
//! positions with a gap and at a lower weight. A whole-identifier match
//! ranks above a match of a part.

/// The most parts of one token whose runs are indexed; a token with more
/// has only its single parts indexed (bounds the index: at most 36 runs).
pub const MAX_PARTS: usize = 8;

fn separator(c: char) -> bool {
    matches!(c, '_' | ':' | '-' | '.')
}

/// The runs of parts of one (lowercased) token, in order, distinct, the
/// whole token excluded; empty for a token without a separator.
pub fn runs(token: &str) -> Vec<String> {
    // Parts as byte ranges into the token.
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in token.char_indices() {
        match (separator(c), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                parts.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        parts.push((s, token.len()));
    }
    let mut out: Vec<String> = Vec::new();
    if parts.is_empty() || (parts.len() == 1 && parts[0] == (0, token.len())) {
        return out;
    }
    let longest = if parts.len() > MAX_PARTS {
        1
    } else {
        parts.len()
    };
    for (i, &(start, _)) in parts.iter().enumerate() {
        for &(_, end) in &parts[i..parts.len().min(i + longest)] {
            let run = &token[start..end];
            if run != token && !out.iter().any(|o| o == run) {
                out.push(run.to_string());
            }
        }
    }
    out
}

/// The parts of every identifier among `tokens` (the index's own tokens of
/// a text, lowercased: `store::pg::search::tokens`), [`runs`] of each, in
/// token order.
pub fn identifier_parts<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    tokens.into_iter().flat_map(runs).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::pg::search::tokens;

    fn of(text: &str) -> Vec<String> {
        let toks: Vec<String> = tokens(text).into_iter().map(|t| t.2).collect();
        identifier_parts(toks.iter().map(String::as_str))
    }

    #[test]
    fn every_run_of_parts_but_the_whole() {
        assert_eq!(
            of("See File.rs:45-78, plain words"),
            vec![
                "file",
                "file.rs",
                "file.rs:45",
                "rs",
                "rs:45",
                "rs:45-78",
                "45",
                "45-78",
                "78"
            ]
        );
        assert_eq!(of("token_fix end."), vec!["token", "fix", "end"]);
        assert_eq!(of("a..b -x"), vec!["a", "b", "x"]);
        assert!(of("plain words only").is_empty());
        let many = of("a.b.c.d.e.f.g.h.i");
        assert_eq!(many, vec!["a", "b", "c", "d", "e", "f", "g", "h", "i"]);
    }
}
