//! TQ tokens with byte spans (spec/tq.md §1 "Lexical rules", grammar/tq.ebnf).
//! Keywords and symbols fold to lower case; strings keep case and accept only
//! the `\"` and `\\` escapes; `;` comments (to `\n` or a bare `\r`) and
//! whitespace are skipped. Whitespace is space, tab, CR, LF, form feed,
//! NBSP (U+00A0) and the byte-order mark (U+FEFF, so a leading BOM is
//! skipped; docs/tq.md "Lexical rules").

use logos::Logos;

use crate::tq::ast::Span;
use crate::tq::diagnostic::Diagnostic;

/// Why the lexer stopped; converted to a [`Diagnostic`] by [`lex`].
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LexError {
    /// A character no token starts with (`#`, `'`, `:` alone, ...).
    #[default]
    Unexpected,
    /// An escape other than `\"` and `\\`; the span covers the backslash and
    /// the escaped character (bytes, absolute).
    BadEscape(Span),
    /// A string with no closing quote.
    Unterminated,
    /// An integer that does not fit in 64 bits.
    IntRange,
    /// A decimal too large for a 64-bit float.
    DecRange,
    /// A number written with an exponent (`1e9`, `1.5e3`): TQ numbers are
    /// plain digits (issue 26; before, `1e9` lexed as `1` then `e9`).
    Exponent,
}

/// One token. Keyword and symbol text is lower case; a keyword's text has no colon.
#[derive(Logos, Debug, Clone, PartialEq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\x0C\u{A0}\u{FEFF}]+")]
pub enum Token {
    /// `(`.
    #[token("(")]
    LParen,
    /// `)`.
    #[token(")")]
    RParen,
    /// `:name`, folded to lower case, colon dropped.
    #[regex(r":[A-Za-z0-9_\-+*/<>=!?]+", |lex| lex.slice()[1..].to_ascii_lowercase())]
    Keyword(String),
    /// A symbol (`all`, `->`, `>=`, `define!`), folded to lower case.
    #[regex(r"[A-Za-z_\-+*/<>=!?][A-Za-z0-9_\-+*/<>=!?]*", |lex| lex.slice().to_ascii_lowercase())]
    Symbol(String),
    /// A string literal, unescaped, case kept.
    #[regex(r#""([^"\\]|\\[\s\S])*""#, unescape)]
    Str(String),
    /// Never produced: an unterminated string is an error.
    #[regex(r#""([^"\\]|\\[\s\S])*"#, unterminated)]
    Unterminated,
    /// An integer, optionally signed.
    #[regex(r"[+-]?[0-9]+", |lex| lex.slice().parse::<i64>().map_err(|_| LexError::IntRange), priority = 10)]
    Int(i64),
    /// A decimal like `1.5` or `-0.25`.
    #[regex(r"[+-]?[0-9]+\.[0-9]+", decimal, priority = 10)]
    Dec(f64),
    /// Never produced: a number with an exponent is an error.
    #[regex(r"[+-]?[0-9]+(\.[0-9]+)?[eE][+-]?[0-9]+", exponent, priority = 10)]
    Exponent,
}

fn exponent(_: &mut logos::Lexer<Token>) -> Result<(), LexError> {
    Err(LexError::Exponent)
}

/// `text` (a number with an exponent) written out in plain digits, when it
/// is finite and at most 20 digits long (`1e9` → `1000000000`, `1.5e3` →
/// `1500`, `2.5e-1` → `0.25`).
fn written_out(text: &str) -> Option<String> {
    let v = text.parse::<f64>().ok().filter(|v| v.is_finite())?;
    let s = if v.fract() == 0.0 && v.abs() < 1e18 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    };
    (s.len() <= 20 && !s.contains('e')).then_some(s)
}

fn decimal(lex: &mut logos::Lexer<Token>) -> Result<f64, LexError> {
    match lex.slice().parse::<f64>() {
        Ok(d) if d.is_finite() => Ok(d),
        _ => Err(LexError::DecRange),
    }
}

fn unterminated(_: &mut logos::Lexer<Token>) -> Result<(), LexError> {
    Err(LexError::Unterminated)
}

fn unescape(lex: &mut logos::Lexer<Token>) -> Result<String, LexError> {
    let slice = lex.slice();
    let base = lex.span().start;
    let inner = &slice[1..slice.len() - 1];
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, e @ ('"' | '\\'))) => out.push(e),
            Some((j, e)) => {
                let start = base + 1 + i;
                return Err(LexError::BadEscape(start..base + 1 + j + e.len_utf8()));
            }
            None => return Err(LexError::Unterminated),
        }
    }
    Ok(out)
}

/// A token and its byte span in the query text.
pub type SpannedToken = (Token, Span);

/// Splits `text` into tokens. The first unlexable input is a parse error at
/// its span: `Unexpected character '#'.`, `Unknown escape \n in a string;
/// only \" and \\ are allowed.`, `Unterminated string; add the closing ".`,
/// `Integer N does not fit in 64 bits.`, `Decimal N is out of range.`,
/// `Number 1e9 has an exponent; TQ numbers are plain digits, e.g. 1000000000.`
/// (without `, e.g. ...` when the value has no short plain form).
pub fn lex(text: &str) -> Result<Vec<SpannedToken>, Diagnostic> {
    let mut out = Vec::new();
    let mut lexer = Token::lexer(text);
    while let Some(tok) = lexer.next() {
        let span = lexer.span();
        match tok {
            Ok(t) => out.push((t, span)),
            // A `;` comment (to `\n` or a bare `\r`) is skipped here, not by
            // a logos skip pattern: logos nests a call per consecutive skip,
            // so thousands of comment lines overflowed the stack.
            Err(LexError::Unexpected)
                if text.get(span.start..).is_some_and(|r| r.starts_with(';')) =>
            {
                let rest = text.get(span.start..).unwrap_or("");
                let len = rest.find(['\n', '\r']).unwrap_or(rest.len());
                lexer.bump(len.saturating_sub(span.len()));
            }
            Err(e) => return Err(lex_error(text, e, span)),
        }
    }
    Ok(out)
}

fn lex_error(text: &str, err: LexError, span: Span) -> Diagnostic {
    match err {
        LexError::BadEscape(at) => {
            let esc = text.get(at.clone()).unwrap_or("\\");
            Diagnostic::parse(
                format!("Unknown escape {esc} in a string; only \\\" and \\\\ are allowed."),
                at,
            )
        }
        LexError::Unterminated => {
            Diagnostic::parse("Unterminated string; add the closing \".", span)
        }
        LexError::IntRange => Diagnostic::parse(
            format!(
                "Integer {} does not fit in 64 bits.",
                text.get(span.clone()).unwrap_or("")
            ),
            span,
        ),
        LexError::DecRange => Diagnostic::parse(
            format!(
                "Decimal {} is out of range.",
                text.get(span.clone()).unwrap_or("")
            ),
            span,
        ),
        LexError::Exponent => {
            let num = text.get(span.clone()).unwrap_or("");
            let msg = match written_out(num) {
                Some(w) => {
                    format!("Number {num} has an exponent; TQ numbers are plain digits, e.g. {w}.")
                }
                None => format!("Number {num} has an exponent; TQ numbers are plain digits."),
            };
            Diagnostic::parse(msg, span)
        }
        LexError::Unexpected => {
            let ch = text.get(span.start..).and_then(|s| s.chars().next());
            match ch {
                Some(c) => {
                    let span = span.start..span.start + c.len_utf8();
                    let d = Diagnostic::parse(format!("Unexpected character '{c}'."), span);
                    match c {
                        '\'' => d.with_help("TQ has no quoting; strings use double quotes."),
                        ':' => d.with_help("a keyword needs a name, e.g. :status."),
                        _ => d,
                    }
                }
                None => Diagnostic::parse("Unexpected end of input.", span),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<SpannedToken> {
        lex(s).unwrap()
    }

    #[test]
    fn many_comment_lines_do_not_overflow_the_stack() {
        let text = format!("(all\n{})", ";c\n".repeat(50_000));
        let toks: Vec<Token> = lex(&text).unwrap().into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            toks,
            vec![Token::LParen, Token::Symbol("all".into()), Token::RParen]
        );
        let spans: Vec<Span> = lex("a;x\rb ; y\n;\nc;")
            .unwrap()
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        assert_eq!(spans, vec![0..1, 4..5, 12..13]);
    }

    #[test]
    fn each_token() {
        assert_eq!(
            toks("( ) :Status ALL -> >= <= = define! \"A\\\"b\\\\\" 42 -7 +3 1.5 -0.25"),
            vec![
                (Token::LParen, 0..1),
                (Token::RParen, 2..3),
                (Token::Keyword("status".into()), 4..11),
                (Token::Symbol("all".into()), 12..15),
                (Token::Symbol("->".into()), 16..18),
                (Token::Symbol(">=".into()), 19..21),
                (Token::Symbol("<=".into()), 22..24),
                (Token::Symbol("=".into()), 25..26),
                (Token::Symbol("define!".into()), 27..34),
                (Token::Str("A\"b\\".into()), 35..43),
                (Token::Int(42), 44..46),
                (Token::Int(-7), 47..49),
                (Token::Int(3), 50..52),
                (Token::Dec(1.5), 53..56),
                (Token::Dec(-0.25), 57..62),
            ]
        );
    }

    #[test]
    fn comments_and_whitespace_skip() {
        assert_eq!(
            toks("; hi\n(all) ; (x\n"),
            vec![
                (Token::LParen, 5..6),
                (Token::Symbol("all".into()), 6..9),
                (Token::RParen, 9..10)
            ]
        );
    }

    #[test]
    fn bare_cr_ends_a_comment_and_bom_nbsp_are_whitespace() {
        assert_eq!(
            toks("; c\r(all)"),
            vec![
                (Token::LParen, 4..5),
                (Token::Symbol("all".into()), 5..8),
                (Token::RParen, 8..9)
            ]
        );
        assert_eq!(
            toks("\u{FEFF}(all)\u{A0}"),
            vec![
                (Token::LParen, 3..4),
                (Token::Symbol("all".into()), 4..7),
                (Token::RParen, 7..8)
            ]
        );
    }

    #[test]
    fn errors() {
        let e = lex("(all #)").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span),
            ("Unexpected character '#'.", Some(5..6))
        );
        let e = lex("'(all)").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span),
            ("Unexpected character '''.", Some(0..1))
        );
        let e = lex("(node \"a\\nb\")").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span),
            (
                "Unknown escape \\n in a string; only \\\" and \\\\ are allowed.",
                Some(8..10)
            )
        );
        let e = lex("(node \"ab").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span),
            ("Unterminated string; add the closing \".", Some(6..9))
        );
        let e = lex("(:take 99999999999999999999)").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span),
            (
                "Integer 99999999999999999999 does not fit in 64 bits.",
                Some(7..27)
            )
        );
        let e = lex("(:claim! 1e9)").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span),
            (
                "Number 1e9 has an exponent; TQ numbers are plain digits, e.g. 1000000000.",
                Some(9..12)
            )
        );
        let e = lex("(> :obs-count -1.5E3)").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span),
            (
                "Number -1.5E3 has an exponent; TQ numbers are plain digits, e.g. -1500.",
                Some(14..20)
            )
        );
        let e = lex("(:take 2.5e-1)").unwrap_err();
        assert_eq!(
            e.message,
            "Number 2.5e-1 has an exponent; TQ numbers are plain digits, e.g. 0.25."
        );
        let e = lex("(:take 1e999)").unwrap_err();
        assert_eq!(
            e.message,
            "Number 1e999 has an exponent; TQ numbers are plain digits."
        );
        let e = lex("( : )").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span),
            ("Unexpected character ':'.", Some(2..3))
        );
        let e = lex("(node é)").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span),
            ("Unexpected character 'é'.", Some(6..8))
        );
    }
}
