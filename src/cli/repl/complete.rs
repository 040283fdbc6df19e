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
    /// A `:keyword` (`(:fol`): steps, fields, metadata keys, `:asc`, `:desc`.
    Keyword,
    /// A `:keyword` argument of `:follow`, `:back`, `:closure`, `:link!`,
    /// `:unlink!`: edges.
    Edge,
    /// The argument of `:set-status!`: statuses.
    Status,
    /// A meta command (`:he` at the start of the input).
    Meta,
    /// Inside a string after `(node `, or the argument of `:current`: task slugs.
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
    let mut open: Vec<usize> = Vec::new();
    let mut iter = before.char_indices();
    while let Some((i, c)) = iter.next() {
        match (in_string, c) {
            (Some(_), '\\') => {
                iter.next();
            }
            (Some(_), '"') => in_string = None,
            (Some(_), _) => {}
            (None, '"') => in_string = Some(i + 1),
            (None, '(') => open.push(i + 1),
            (None, ')') => {
                open.pop();
            }
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
    let head = open
        .last()
        .and_then(|&o| before.get(o..start))
        .and_then(|t| t.split_whitespace().next())
        .map(str::to_ascii_lowercase);
    let meta_current = before
        .trim_start()
        .to_ascii_lowercase()
        .starts_with(":current ");
    let ctx = if meta_current && start > 0 {
        Context::Slug
    } else if word.starts_with(':') {
        match head.as_deref() {
            _ if before[..start].trim().is_empty() => Context::Meta,
            Some(":follow" | ":back" | ":closure" | ":link!" | ":unlink!") => Context::Edge,
            Some(":set-status!") => Context::Status,
            _ => Context::Keyword,
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

/// The edges as keywords (`:phase-of` ...), in registry order.
pub fn edge_keywords() -> Vec<String> {
    registry::edges()
        .iter()
        .map(|e| format!(":{}", e.edge.as_str()))
        .collect()
}

/// The statuses as keywords (`:open` ...).
pub fn status_keywords() -> Vec<String> {
    Status::ALL
        .iter()
        .map(|s| format!(":{}", s.as_str()))
        .collect()
}

/// Every other `:keyword`: steps, declared fields, `meta_keys`, `:asc`
/// and `:desc`, sorted.
pub fn keywords(meta_keys: &[String]) -> Vec<String> {
    let mut out: Vec<String> = registry::forms()
        .iter()
        .filter(|f| f.category == Category::Step)
        .map(|f| format!(":{}", f.name))
        .collect();
    out.extend(registry::fields().iter().map(|f| format!(":{}", f.name)));
    out.extend(meta_keys.iter().map(|k| format!(":{k}")));
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
        assert_eq!(context(":current 2026", 13), (9, Context::Slug));
        assert_eq!(context(":current ", 9), (9, Context::Slug));
        assert_eq!(context(r#"(= :status "ac"#, 14), (12, Context::None));
        assert_eq!(context(r#"(node "a") (:wh"#, 15), (12, Context::Keyword));
        assert_eq!(context("(-> (all) (:follow :ph", 22), (19, Context::Edge));
        assert_eq!(context("(:where (any (:BACK :d", 22), (20, Context::Edge));
        assert_eq!(
            context("(-> (all) (:set-status! :c", 26),
            (24, Context::Status)
        );
        assert_eq!(context("(-> (all) (:sort :up", 20), (17, Context::Keyword));
    }

    #[test]
    fn pools() {
        let k = keywords(&["priority".to_string()]);
        assert_eq!(matching(&k, ":fol"), vec![":follow"]);
        assert_eq!(matching(&k, ":pri"), vec![":priority"]);
        assert_eq!(matching(&k, ":DESC"), vec![":desc", ":description"]);
        assert_eq!(matching(&edge_keywords(), ":phase"), vec![":phase-of"]);
        assert_eq!(
            matching(&status_keywords(), ":a"),
            vec![":active", ":abandoned"]
        );
        let w = words();
        assert_eq!(matching(&w, "dor"), vec!["dormant"]);
        assert_eq!(matching(&w, "def"), vec!["define!"]);
        assert_eq!(matching(&w, "-"), vec!["->"]);
        assert!(matching(&w, "follow").is_empty());
    }
}
