//! Enrichment only for what is shown (COMPILER.md rule 7): when the caller
//! renders text within a budget (spec/tq.md §4, 16,000 characters), rows
//! past the most that can fit carry no counts or metadata; the total for the
//! "showing K of N" line still counts every row. An enriched task line is at
//! least [`MIN_LINE`] characters with its newline (`- s obs=0 edges=0`), so
//! at most `budget / MIN_LINE + 1` rows can be shown.

use crate::tq::ir::{Ir, Options, Shape};

/// The rule's name in `--explain` and the coverage count.
pub const NAME: &str = "enrich-shown";

/// The shortest enriched task line, newline included (characters).
pub const MIN_LINE: usize = 18;

/// Caps enrichment of an enriched task-line shape at the rows that can show.
pub fn apply(ir: &mut Ir, opts: &Options) -> bool {
    let Some(budget) = opts.text_budget else {
        return false;
    };
    match &mut ir.shape {
        Shape::Tasks {
            enriched: true,
            enrich_first,
        } if enrich_first.is_none() => {
            *enrich_first = Some(budget / MIN_LINE + 1);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tq::ir::{Order, Rel};

    #[test]
    fn only_enriched_text_is_capped() {
        let mut i = Ir {
            root: Rel::scan(vec![]),
            shape: Shape::Tasks {
                enriched: true,
                enrich_first: None,
            },
            reflect: false,
            kinds: vec![],
            counters: false,
            now: 0,
        };
        let text = Options {
            text_budget: Some(16_000),
            ..Options::default()
        };
        let mut plain = i.clone();
        assert!(!apply(&mut i.clone(), &Options::default()));
        assert!(apply(&mut i, &text));
        assert_eq!(
            i.shape,
            Shape::Tasks {
                enriched: true,
                enrich_first: Some(889)
            }
        );
        plain.shape = Shape::Tasks {
            enriched: false,
            enrich_first: None,
        };
        assert!(!apply(&mut plain, &text));
        assert_eq!(plain.root.order, Order::Rank);
    }
}
