//! REPL tab completion (issue 6): from the registry (sources, steps,
//! predicates, write forms, fields, edges), the live metadata keys, view
//! names inside `(query "`, task slugs inside `(node "`, and the meta
//! commands at the start of the input.

use crate::store::model::Status;
use crate::tq::registry::{self, Category};

/// The meta commands, as typed.
pub const META_COMMANDS: [&str; 8] = [
    ":current", ":explain", ":help", ":quit", ":schema", ":sql", ":views", ":write",
];

/// What the text before the cursor asks to complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Context {
    /// A bare word (`(al`): sources, predicates, write forms, `->`, `count`.
    Word,
    /// A `:keyword` (`(:fol`): steps, fields, metadata keys, edges,
    /// directions, statuses.
    Keyword,
    /// A meta command (`:he` at the start of the input).
    Meta,
    /// Inside a string after `(node `: task slugs.
    Slug,
    /// Inside a string after `(query `, `(define! ` or `(undefine! `: view names.
    View,
    /// Nothing to complete (inside another string).
    None,
}

/// Where the partial word before `pos` starts in `line` and what it is.
pub fn context(line: &str, pos: usize) -> (usize, Context) {
    let pos = pos.min(line.len());
    let before = line.get(..pos).unwrap_or(line);
    // Find an open string: scan like the lexer.
    let mut in_string: Option<usize> = None;
    let mut iter = before.char_indices();
    while let Some((i, c)) = iter.next() {
        match (in_string, c) {
            (Some(_), '\\') => {
                iter.next();
            }
            (Some(_), '"') => in_string = None,
            (Some(_), _) => {}
            (None, '"') => in_string = Some(i + 1),
            (None, ';') => {
                for (_, d) in iter.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
            }
            (None, _) => {}
        }
    }
    if let Some(start) = in_string {
        let head = before[..start - 1].trim_end().to_ascii_lowercase();
        let ctx = if head.ends_with("(node") {
            Context::Slug
        } else if head.ends_with("(query")
            || head.ends_with("(define!")
            || head.ends_with("(undefine!")
        {
            Context::View
        } else {
            Context::None
        };
        return (start, ctx);
    }
    let start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace() || matches!(c, '(' | ')' | '"'))
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0);
    let word = &before[start..];
    let ctx = if word.starts_with(':') {
        if before[..start].trim().is_empty() {
            Context::Meta
        } else {
            Context::Keyword
        }
    } else {
        Context::Word
    };
    (start, ctx)
}

/// Every bare word a form may start with: sources, predicates, write forms,
/// `->` and `count`, sorted.
pub fn words() -> Vec<String> {
    let mut out: Vec<String> = registry::forms()
        .iter()
        .filter(|f| f.category != Category::Step)
        .map(|f| f.name.to_string())
        .collect();
    out.push("->".into());
    out.push("count".into());
    out.sort();
    out.dedup();
    out
}

/// Every `:keyword`: steps, declared fields, `meta_keys`, edges, `:asc`,
/// `:desc` and the statuses, sorted.
pub fn keywords(meta_keys: &[String]) -> Vec<String> {
    let mut out: Vec<String> = registry::forms()
        .iter()
        .filter(|f| f.category == Category::Step)
        .map(|f| format!(":{}", f.name))
        .collect();
    out.extend(registry::fields().iter().map(|f| format!(":{}", f.name)));
    out.extend(meta_keys.iter().map(|k| format!(":{k}")));
    out.extend(
        registry::edges()
            .iter()
            .map(|e| format!(":{}", e.edge.as_str())),
    );
    out.extend(Status::ALL.iter().map(|s| format!(":{}", s.as_str())));
    out.push(":asc".into());
    out.push(":desc".into());
    out.sort();
    out.dedup();
    out
}

/// The candidates among `pool` that start with `prefix` (ASCII
/// case-insensitive), in pool order.
pub fn matching(pool: &[String], prefix: &str) -> Vec<String> {
    let p = prefix.to_ascii_lowercase();
    pool.iter()
        .filter(|c| c.to_ascii_lowercase().starts_with(&p))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts() {
        assert_eq!(context("(:fol", 5), (1, Context::Keyword));
        assert_eq!(context("(al", 3), (1, Context::Word));
        assert_eq!(context(":he", 3), (0, Context::Meta));
        assert_eq!(context(":sql (-> (al", 12), (10, Context::Word));
        assert_eq!(context(r#"(node "tun"#, 10), (7, Context::Slug));
        assert_eq!(context(r#"(NODE  "tun"#, 11), (8, Context::Slug));
        assert_eq!(context(r#"(query "fr"#, 10), (8, Context::View));
        assert_eq!(context(r#"(= :status "ac"#, 14), (12, Context::None));
        assert_eq!(context(r#"(node "a") (:wh"#, 15), (12, Context::Keyword));
    }

    #[test]
    fn pools() {
        let k = keywords(&["priority".to_string()]);
        assert_eq!(matching(&k, ":fol"), vec![":follow"]);
        assert_eq!(matching(&k, ":pri"), vec![":priority"]);
        assert_eq!(matching(&k, ":phase"), vec![":phase-of"]);
        assert_eq!(matching(&k, ":DESC"), vec![":desc"]);
        let w = words();
        assert_eq!(matching(&w, "dor"), vec!["dormant"]);
        assert_eq!(matching(&w, "def"), vec!["define!"]);
        assert_eq!(matching(&w, "-"), vec!["->"]);
        assert!(matching(&w, "follow").is_empty());
    }
}
