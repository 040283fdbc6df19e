//! `possibleDuplicates` for `task_create` (spec/mcp.md "Structured
//! results"): open tasks whose names overlap strongly with a new task's
//! name, by word overlap alone (no model call).
//!
//! A name's words are its letter/digit runs, lower-cased, stopwords
//! ([`crate::store::slug::STOPWORDS`]) dropped. The score of two names is
//! shared words / all words (Jaccard); a task is a possible duplicate when
//! the score is at least [`MIN_SCORE`]. An open task's name is its typed name
//! when its creating event kept one, else its slug without the date.

use std::collections::BTreeSet;

use super::structured::Duplicate;
use crate::store::names::name_words;
use crate::store::read::OpenTask;
use crate::store::slug::strip_date_prefixes;

/// The most duplicates reported.
pub const MAX_DUPLICATES: usize = 3;

/// The smallest word overlap (Jaccard) that counts as strong.
pub const MIN_SCORE: f64 = 0.5;

/// The word set of a name (see the module doc).
pub fn words(name: &str) -> BTreeSet<String> {
    name_words(name)
}

/// Shared words / all words of `a` and `b`; 0 when both are empty.
pub fn score(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// Up to [`MAX_DUPLICATES`] of `open` (excluding `slug` itself) whose names
/// score at least [`MIN_SCORE`] against `name`, best first, ties by slug.
/// Scores are rounded to two decimals.
pub fn possible_duplicates(name: &str, slug: &str, open: &[OpenTask]) -> Vec<Duplicate> {
    let mine = words(name);
    let mut found: Vec<Duplicate> = open
        .iter()
        .filter(|t| t.slug != slug)
        .filter_map(|t| {
            let their_name = t
                .name
                .clone()
                .unwrap_or_else(|| strip_date_prefixes(&t.slug).to_string());
            let s = score(&mine, &words(&their_name));
            (s >= MIN_SCORE).then(|| Duplicate {
                slug: t.slug.clone(),
                name: their_name,
                status: t.status.clone(),
                score: (s * 100.0).round() / 100.0,
            })
        })
        .collect();
    found.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.slug.cmp(&b.slug))
    });
    found.truncate(MAX_DUPLICATES);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(slug: &str, name: Option<&str>) -> OpenTask {
        OpenTask {
            slug: slug.into(),
            status: "active".into(),
            name: name.map(Into::into),
        }
    }

    #[test]
    fn strong_overlap_is_reported_best_first_and_capped_at_three() {
        let tasks = [
            open(
                "2026-01-01-tune-search-ranking",
                Some("tune search ranking"),
            ),
            open("2026-01-01-tune-search", None),
            open("2026-01-01-search-ranking-weights", None),
            open("2026-01-01-tune-ranking", Some("tune the ranking")),
            open("2026-01-01-fix-ci", Some("fix CI")),
        ];
        let got = possible_duplicates("Tune the search ranking", "new", &tasks);
        let slugs: Vec<(&str, f64)> = got.iter().map(|d| (d.slug.as_str(), d.score)).collect();
        assert_eq!(
            slugs,
            [
                ("2026-01-01-tune-search-ranking", 1.0),
                ("2026-01-01-tune-ranking", 0.67),
                ("2026-01-01-tune-search", 0.67),
            ]
        );
        assert_eq!(got[1].name, "tune the ranking");
        assert_eq!(got[2].name, "tune-search");
    }

    #[test]
    fn weak_overlap_and_the_task_itself_are_not_reported() {
        let tasks = [
            open("2026-01-01-add-search", None),
            open("2026-01-01-tune-search-ranking", None),
        ];
        assert!(
            possible_duplicates(
                "tune search ranking",
                "2026-01-01-tune-search-ranking",
                &tasks
            )
            .is_empty()
        );
    }
}
