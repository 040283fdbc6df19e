//! Tokens → one spanned s-expression (spec/tq.md §1), with chumsky. The size
//! limit (64 KiB) is checked before lexing and the nesting limit (128) on the
//! token stream before chumsky sees it, so no input can overflow the stack.

use chumsky::input::Input as _;
use chumsky::prelude::*;

use crate::tq::ast::{Span, Spanned};
use crate::tq::diagnostic::Diagnostic;
use crate::tq::lexer::{Token, lex};

/// Longest query text accepted, in bytes (spec/tq.md §1).
pub const MAX_BYTES: usize = 64 * 1024;
/// Deepest list nesting accepted (spec/tq.md §1).
pub const MAX_DEPTH: usize = 128;

/// An s-expression node; lists carry the span from `(` to `)`.
#[derive(Debug, Clone, PartialEq)]
pub enum Sexp {
    /// `( ... )`.
    List(Vec<Spanned<Sexp>>),
    /// `:name` (lower case, no colon).
    Keyword(String),
    /// A symbol (lower case).
    Symbol(String),
    /// A string literal (unescaped).
    Str(String),
    /// An integer.
    Int(i64),
    /// A decimal.
    Dec(f64),
}

/// A spanned s-expression.
pub type SSexp = Spanned<Sexp>;

/// Parses `text` into exactly one form. Errors (all `Parse error`, at the
/// span named): text over 64 KiB (`Query text is N bytes; the limit is 65536
/// bytes (64 KiB).`, at the first byte past the limit), lexer errors (see
/// [`lex`]), `Nesting deeper than 128 levels.` (at the 129th `(`),
/// `Unexpected ')' with no matching '('.`, `Unclosed '('; expected ')' before
/// the end of the query.` (at the innermost open `(`), `Expected one form,
/// found a second one.` (at the second form's first token), `Expected a form,
/// found the end of the query.` (empty text).
pub fn parse(text: &str) -> Result<SSexp, Diagnostic> {
    if text.len() > MAX_BYTES {
        let mut start = MAX_BYTES;
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        return Err(Diagnostic::parse(
            format!(
                "Query text is {} bytes; the limit is {MAX_BYTES} bytes (64 KiB).",
                text.len()
            ),
            start..text.len(),
        ));
    }
    let tokens = lex(text)?;
    prescan(text, &tokens)?;
    let spanned: Vec<(Token, SimpleSpan)> = tokens
        .into_iter()
        .map(|(t, s)| (t, SimpleSpan::from(s)))
        .collect();
    let eoi = SimpleSpan::from(text.len()..text.len());
    let input = spanned.as_slice().map(eoi, |(t, s)| (t, s));
    match sexp_parser().parse(input).into_result() {
        Ok(s) => Ok(s),
        Err(errs) => {
            let span = errs
                .first()
                .map(|e| e.span().into_range())
                .unwrap_or(text.len()..text.len());
            Err(Diagnostic::parse("Malformed query.", span))
        }
    }
}

/// Balance, depth and one-form checks on the token stream, iteratively.
fn prescan(text: &str, tokens: &[(Token, Span)]) -> Result<(), Diagnostic> {
    let mut open: Vec<Span> = Vec::new();
    let mut forms = 0usize;
    for (tok, span) in tokens {
        if open.is_empty() && !matches!(tok, Token::RParen) {
            forms += 1;
            if forms == 2 {
                return Err(Diagnostic::parse(
                    "Expected one form, found a second one.",
                    span.clone(),
                )
                .with_help("a query is ONE s-expression; thread steps with (-> SOURCE STEP...)."));
            }
        }
        match tok {
            Token::LParen => {
                if open.len() == MAX_DEPTH {
                    return Err(Diagnostic::parse(
                        format!("Nesting deeper than {MAX_DEPTH} levels."),
                        span.clone(),
                    ));
                }
                open.push(span.clone());
            }
            Token::RParen if open.pop().is_none() => {
                return Err(Diagnostic::parse(
                    "Unexpected ')' with no matching '('.",
                    span.clone(),
                ));
            }
            _ => {}
        }
    }
    if let Some(span) = open.pop() {
        return Err(Diagnostic::parse(
            "Unclosed '('; expected ')' before the end of the query.",
            span,
        ));
    }
    if forms == 0 {
        return Err(Diagnostic::parse(
            "Expected a form, found the end of the query.",
            text.len()..text.len(),
        ));
    }
    Ok(())
}

fn sexp_parser<'t, I>() -> impl Parser<'t, I, SSexp, extra::Err<Rich<'t, Token>>>
where
    I: chumsky::input::ValueInput<'t, Token = Token, Span = SimpleSpan>,
{
    recursive(|sexp| {
        let atom = select! {
            Token::Keyword(k) => Sexp::Keyword(k),
            Token::Symbol(s) => Sexp::Symbol(s),
            Token::Str(s) => Sexp::Str(s),
            Token::Int(i) => Sexp::Int(i),
            Token::Dec(d) => Sexp::Dec(d),
        };
        let list = sexp
            .repeated()
            .collect::<Vec<_>>()
            .map(Sexp::List)
            .delimited_by(just(Token::LParen), just(Token::RParen));
        atom.or(list).map_with(|node, e| {
            let span: SimpleSpan = e.span();
            Spanned::new(node, span.into_range())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> (String, Span) {
        let d = parse(s).unwrap_err();
        (d.message, d.span.unwrap())
    }

    #[test]
    fn parses_nested_form_with_spans() {
        let s = parse("(-> (all) (:take 5))").unwrap();
        assert_eq!(s.span, 0..20);
        let Sexp::List(items) = &s.node else {
            panic!("list")
        };
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].node, Sexp::Symbol("->".into()));
        assert_eq!(items[1].span, 4..9);
        assert_eq!(items[2].span, 10..19);
        assert_eq!(
            items[2].node,
            Sexp::List(vec![
                Spanned::new(Sexp::Keyword("take".into()), 11..16),
                Spanned::new(Sexp::Int(5), 17..18)
            ])
        );
        assert_eq!(parse("\"x\"").unwrap().node, Sexp::Str("x".into()));
        assert_eq!(parse(":all").unwrap().node, Sexp::Keyword("all".into()));
        assert_eq!(parse("1.5").unwrap().node, Sexp::Dec(1.5));
        assert_eq!(parse("()").unwrap().node, Sexp::List(vec![]));
    }

    #[test]
    fn malformed_cases() {
        assert_eq!(
            err("((("),
            (
                "Unclosed '('; expected ')' before the end of the query.".into(),
                2..3
            )
        );
        assert_eq!(
            err("(all))"),
            ("Unexpected ')' with no matching '('.".into(), 5..6)
        );
        assert_eq!(
            err(")"),
            ("Unexpected ')' with no matching '('.".into(), 0..1)
        );
        assert_eq!(
            err("(all) (active)"),
            ("Expected one form, found a second one.".into(), 6..7)
        );
        assert_eq!(
            err("(all) x"),
            ("Expected one form, found a second one.".into(), 6..7)
        );
        assert_eq!(
            err("  ; nothing"),
            (
                "Expected a form, found the end of the query.".into(),
                11..11
            )
        );
        assert_eq!(err("'(all)"), ("Unexpected character '''.".into(), 0..1));
        assert_eq!(err("(all #t)"), ("Unexpected character '#'.".into(), 5..6));
        assert_eq!(
            err("(node \"\\q\")"),
            (
                "Unknown escape \\q in a string; only \\\" and \\\\ are allowed.".into(),
                7..9
            )
        );
    }

    #[test]
    fn depth_limit() {
        let ok = format!("{}{}", "(".repeat(128), ")".repeat(128));
        assert!(parse(&ok).is_ok());
        let deep = format!("{}{}", "(".repeat(129), ")".repeat(129));
        assert_eq!(
            err(&deep),
            ("Nesting deeper than 128 levels.".into(), 128..129)
        );
        let huge = "(".repeat(60_000);
        assert_eq!(
            err(&huge),
            ("Nesting deeper than 128 levels.".into(), 128..129)
        );
    }

    #[test]
    fn size_limit() {
        let long = format!("(node \"{}\")", "a".repeat(MAX_BYTES));
        let len = long.len();
        assert_eq!(
            err(&long),
            (
                format!("Query text is {len} bytes; the limit is 65536 bytes (64 KiB)."),
                65536..len
            )
        );
        let exact = format!("(node \"{}\")", "a".repeat(MAX_BYTES - 9));
        assert_eq!(exact.len(), MAX_BYTES);
        assert!(parse(&exact).is_ok());
    }
}
