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

use super::pg::search::tokens;

/// The most parts of one token whose runs are indexed; a token with more
/// has only its single parts indexed (bounds the index: at most 36 runs).
pub const MAX_PARTS: usize = 8;

fn separator(c: char) -> bool {
    matches!(c, '_' | ':' | '-' | '.')
}

/// The runs of parts of one (lowercased) token, in order, distinct, the
/// whole token excluded; empty for a token without a separator.
fn runs(token: &str) -> Vec<String> {
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

/// The parts of every identifier of `text` ([`runs`] of each token), in
/// token order, lowercased (as the index folds case).
pub fn identifier_parts(text: &str) -> Vec<String> {
    tokens(text)
        .into_iter()
        .flat_map(|(_, _, t)| runs(&t))
        .collect()
}

/// [`identifier_parts`] joined by spaces: the `parts` column of a SQLite
/// observation (FTS5 tokenizes it back into the same tokens).
pub fn parts_text(text: &str) -> String {
    identifier_parts(text).join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_of_parts_but_the_whole() {
        assert_eq!(
            identifier_parts("See File.rs:45-78, plain words"),
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
        assert_eq!(
            identifier_parts("token_fix end."),
            vec!["token", "fix", "end"]
        );
        assert_eq!(identifier_parts("a..b -x"), vec!["a", "b", "x"]);
        assert!(identifier_parts("plain words only").is_empty());
        let many = identifier_parts("a.b.c.d.e.f.g.h.i");
        assert_eq!(many, vec!["a", "b", "c", "d", "e", "f", "g", "h", "i"]);
    }
}
