//! When a TQ form is complete (issue 6: "a form spans lines until its parens
//! balance"): a scan that knows strings (`"..."` with `\"` and `\\`) and
//! `;` comments, used by the REPL's validator and its piped reader.

/// The paren state of some TQ text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balance {
    /// Open parens minus close parens outside strings and comments; negative
    /// after a stray `)`.
    pub depth: i64,
    /// The text ends inside a string literal.
    pub in_string: bool,
    /// Something other than whitespace and comments was seen.
    pub content: bool,
}

impl Balance {
    /// True when the text is a whole input: something was written, no string
    /// is open and no paren is left open (a stray `)` counts as complete, so
    /// the parser reports it).
    pub fn is_complete(&self) -> bool {
        self.content && !self.in_string && self.depth <= 0
    }
}

/// Scans `text` (spec/tq.md §1 lexical rules) and returns its [`Balance`].
pub fn balance(text: &str) -> Balance {
    let mut b = Balance {
        depth: 0,
        in_string: false,
        content: false,
    };
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if b.in_string {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => b.in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            ';' => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
            }
            '"' => {
                b.in_string = true;
                b.content = true;
            }
            '(' => {
                b.depth += 1;
                b.content = true;
            }
            ')' => {
                b.depth -= 1;
                b.content = true;
            }
            c if c.is_whitespace() => {}
            _ => b.content = true,
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_and_closed_forms() {
        assert!(balance("(-> (all) (:ids))").is_complete());
        assert_eq!(balance("(-> (all)\n  (:where").depth, 2);
        assert!(!balance("(-> (all)\n  (:where").is_complete());
        assert!(balance("(all))").is_complete());
        assert_eq!(balance("(all))").depth, -1);
    }

    #[test]
    fn strings_and_comments_hide_parens() {
        assert!(!balance(r#"(node "a)"#).is_complete());
        assert!(balance(r#"(node "a)")"#).is_complete());
        assert!(balance(r#"(node "a\")")"#).is_complete());
        assert!(!balance("(all ; )\n").is_complete());
        assert!(balance("(all ; (\n)").is_complete());
        assert!(balance(r#"(node "\\")"#).is_complete());
        assert!(balance(r#"(node "x"#).in_string);
    }

    #[test]
    fn blank_and_comment_only_are_not_inputs() {
        assert!(!balance("").is_complete());
        assert!(!balance("  \n ; nothing here\n").is_complete());
        assert!(balance(":help").is_complete());
    }
}
