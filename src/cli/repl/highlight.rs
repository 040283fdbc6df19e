//! REPL highlighting (issue 6): keywords, strings, parens, known form
//! names, numbers and comments in ANSI colours (`anstyle` styles). Used
//! only when the terminal takes colour (`NO_COLOR` unset).

use crate::tq::registry;

use anstyle::{AnsiColor, Style};

/// Parens: bold.
const PAREN: Style = Style::new().bold();
/// `:keywords`: cyan.
const KEYWORD: Style = AnsiColor::Cyan.on_default();
/// `"strings"`: green.
const STRING: Style = AnsiColor::Green.on_default();
/// Known form names (`all`, `matches`, `->`, `define!`): magenta.
const FORM: Style = AnsiColor::Magenta.on_default();
/// Numbers: yellow.
const NUMBER: Style = AnsiColor::Yellow.on_default();
/// `; comments`: dim.
const COMMENT: Style = Style::new().dimmed();

fn is_form_name(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    w == "->"
        || w == "count"
        || registry::forms()
            .iter()
            .any(|f| f.category != registry::Category::Step && f.name == w)
}

fn is_delim(c: char) -> bool {
    c.is_whitespace() || c == '(' || c == ')' || c == '"' || c == ';'
}

fn paint(out: &mut String, style: Style, text: &str) {
    use std::fmt::Write;
    let _ = write!(out, "{style}{text}{style:#}");
}

/// `line` with ANSI colour codes around parens, keywords, strings (an
/// unterminated one to the end), known form names, numbers and comments;
/// every other character unchanged. Removing the codes gives `line` back.
pub fn highlight(line: &str) -> String {
    let mut out = String::with_capacity(line.len() * 2);
    let mut i = 0;
    let bytes = line.as_bytes();
    while i < line.len() {
        let rest = &line[i..];
        let Some(c) = rest.chars().next() else { break };
        match c {
            '(' | ')' => {
                paint(&mut out, PAREN, &rest[..1]);
                i += 1;
            }
            ';' => {
                let end = rest.find('\n').unwrap_or(rest.len());
                paint(&mut out, COMMENT, &rest[..end]);
                i += end;
            }
            '"' => {
                let mut j = 1;
                let mut closed = false;
                while j < rest.len() {
                    match bytes[i + j] {
                        b'\\' => j += 2,
                        b'"' => {
                            j += 1;
                            closed = true;
                            break;
                        }
                        _ => j += 1,
                    }
                }
                let end = if closed { j } else { rest.len() }.min(rest.len());
                let mut end = end;
                while !rest.is_char_boundary(end) {
                    end += 1;
                }
                paint(&mut out, STRING, &rest[..end]);
                i += end;
            }
            c if c.is_whitespace() => {
                out.push(c);
                i += c.len_utf8();
            }
            _ => {
                let end = rest.find(is_delim).unwrap_or(rest.len()).max(c.len_utf8());
                let word = &rest[..end];
                if word.starts_with(':') {
                    paint(&mut out, KEYWORD, word);
                } else if word.parse::<f64>().is_ok() {
                    paint(&mut out, NUMBER, word);
                } else if is_form_name(word) {
                    paint(&mut out, FORM, word);
                } else {
                    out.push_str(word);
                }
                i += end;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_each_class() {
        assert_eq!(
            highlight(r#"(node "x") :ids 3 foo ; c"#),
            "\x1b[1m(\x1b[0m\x1b[35mnode\x1b[0m \x1b[32m\"x\"\x1b[0m\x1b[1m)\x1b[0m \
             \x1b[36m:ids\x1b[0m \x1b[33m3\x1b[0m foo \x1b[2m; c\x1b[0m"
        );
    }

    #[test]
    fn unterminated_string_and_escapes() {
        assert_eq!(highlight(r#""a\"b"#), "\x1b[32m\"a\\\"b\x1b[0m");
        assert_eq!(highlight("\"é"), "\x1b[32m\"é\x1b[0m");
        assert_eq!(highlight("\"\\"), "\x1b[32m\"\\\x1b[0m");
    }
}
