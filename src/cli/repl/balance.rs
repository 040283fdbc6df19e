//! When a TQ form is complete (issue 6: "a form spans lines until its parens
//! balance"): a scan that knows strings (`"..."` with `\"` and `\\`) and
//! `;` comments, used by the REPL's validator and its piped reader. The
//! piped reader feeds a [`Balancer`] one line at a time, so reading a form
//! costs time linear in its length.

/// The paren state of some TQ text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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

/// A running [`balance`] scan: text is fed in pieces (lines) and the state
/// carried between them — an open string, a `;` comment not yet ended by a
/// newline, a `\` escape waiting for its character — so feeding `a` then `b`
/// gives the same [`Balance`] as `balance(a + b)`, in time linear in the
/// text fed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Balancer {
    state: Balance,
    in_comment: bool,
    escaped: bool,
}

impl Balancer {
    /// A balancer that has seen nothing (`depth` 0, no content).
    pub fn new() -> Balancer {
        Balancer::default()
    }

    /// The state after everything fed so far.
    pub fn state(&self) -> Balance {
        self.state
    }

    /// Scans `text` (spec/tq.md §1 lexical rules) on from the current state.
    pub fn feed(&mut self, text: &str) {
        let b = &mut self.state;
        for c in text.chars() {
            if self.escaped {
                self.escaped = false;
                continue;
            }
            if self.in_comment {
                self.in_comment = c != '\n';
                continue;
            }
            if b.in_string {
                match c {
                    '\\' => self.escaped = true,
                    '"' => b.in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                ';' => self.in_comment = true,
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
    }
}

/// Scans `text` (spec/tq.md §1 lexical rules) and returns its [`Balance`].
pub fn balance(text: &str) -> Balance {
    let mut b = Balancer::new();
    b.feed(text);
    b.state()
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
    fn feeding_in_pieces_equals_one_scan() {
        let text =
            "(-> (node \"a)\\\"b\")\n  ; a comment (\n  (:where (= :x \"y\\\\\"))\n  (:ids))\n";
        let whole = balance(text);
        assert!(whole.is_complete());
        // Every split point, including inside a string, an escape and a comment.
        for (i, _) in text.char_indices() {
            let mut b = Balancer::new();
            b.feed(&text[..i]);
            b.feed(&text[i..]);
            assert_eq!(b.state(), whole, "split at {i}");
        }
        let mut b = Balancer::new();
        for line in ["(-> (all)", "  ; (", "  (:count))"] {
            b.feed(line);
            b.feed("\n");
        }
        assert_eq!(
            b.state(),
            Balance {
                depth: 0,
                in_string: false,
                content: true
            }
        );
    }

    #[test]
    fn blank_and_comment_only_are_not_inputs() {
        assert!(!balance("").is_complete());
        assert!(!balance("  \n ; nothing here\n").is_complete());
        assert!(balance(":help").is_complete());
    }
}
