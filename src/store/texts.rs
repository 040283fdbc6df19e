//! A task's own searchable texts (spec/tq.md §10: `(search …)` finds the
//! tasks whose name, description, observations or handoffs match;
//! docs/store.md "Search"): the typed name and the description, kept in
//! `task_texts` beside the task on both engines and indexed there
//! (SQLite: `task_fts`; PostgreSQL: `task_texts.tsv`).
//!
//! Two registers per task, each folded order-independently:
//! - the **name**: the typed name of the EARLIEST `task.create` that kept
//!   a non-blank one, by `(ts, event_id)` (first writer wins; no event
//!   renames a task, so this is the name `task_get` shows unless a merge
//!   left two creations of one slug);
//! - the **description**: last writer wins by `(ts, event_id)`, over
//!   `task.create` and `task.update-description` — the same register as
//!   `tasks.description`.
//!
//! The identifier parts (`store::parts`) of both texts are indexed with
//! them, as an observation's are.

use crate::store::pg::search::{Term, parts_text, snippet};

/// Which of a task's texts an event writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The typed name (`task.create`'s `name`), first writer wins.
    Name,
    /// The description, last writer wins.
    Description,
}

/// One register's value and stamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamped {
    /// The text as the event holds it.
    pub text: String,
    /// The event's time, Unix seconds UTC.
    pub ts: i64,
    /// The event's id (the stamp's tie-breaker).
    pub eid: String,
}

/// A task's two text registers, as `task_texts` holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskTexts {
    /// The name register, `None` before any creation kept a name.
    pub name: Option<Stamped>,
    /// The description register, `None` before any description.
    pub description: Option<Stamped>,
}

impl TaskTexts {
    /// Folds `text` into `field`'s register at stamp `(ts, eid)`; true when
    /// it won (the register changed): a name wins when older than the
    /// register's, a description when newer; an empty register takes any.
    pub fn apply(&mut self, field: Field, text: &str, ts: i64, eid: &str) -> bool {
        let slot = match field {
            Field::Name => &mut self.name,
            Field::Description => &mut self.description,
        };
        let wins = match slot {
            None => true,
            Some(s) => {
                let theirs = (s.ts, s.eid.as_str());
                match field {
                    Field::Name => (ts, eid) < theirs,
                    Field::Description => (ts, eid) > theirs,
                }
            }
        };
        if wins {
            *slot = Some(Stamped {
                text: text.to_string(),
                ts,
                eid: eid.to_string(),
            });
        }
        wins
    }

    /// The name's text, `""` when none.
    pub fn name_text(&self) -> &str {
        self.name.as_ref().map_or("", |s| s.text.as_str())
    }

    /// The description's text, `""` when none.
    pub fn description_text(&self) -> &str {
        self.description.as_ref().map_or("", |s| s.text.as_str())
    }

    /// The identifier parts of the name then the description, joined by
    /// spaces (SQLite's `task_texts.parts`; PostgreSQL puts the same parts
    /// in the same order in the `tsvector`).
    pub fn parts(&self) -> String {
        parts_text(&format!("{} {}", self.name_text(), self.description_text()))
    }
}

/// The typed name a `task.create`'s data keeps: `name` when it is a string
/// that is not blank; anything else is no name (a malformed `name` does not
/// stop the creation from folding).
pub fn create_name(data: &serde_json::Value) -> Option<String> {
    data.get("name")
        .and_then(serde_json::Value::as_str)
        .filter(|n| !n.trim().is_empty())
        .map(str::to_string)
}

/// What a `task_search` row shows for a match on a task's own texts
/// (docs/tools.md "task_search"): the name when a token of it matches one
/// of `terms`, else the description when one of its tokens does, else (a
/// match of an identifier part only) the description, or the name when
/// there is no description. Returns which text and its snippet (the
/// observation snippet's rules: [`crate::store::pg::search::snippet`]).
pub fn hit_snippet(
    name: Option<&str>,
    description: Option<&str>,
    terms: &[Term],
) -> (Field, String) {
    let name = name.unwrap_or("");
    let description = description.unwrap_or("");
    let has = |t: &str| marks(t, terms);
    let field = if has(name) {
        Field::Name
    } else if has(description) || !description.trim().is_empty() {
        Field::Description
    } else {
        Field::Name
    };
    let text = match field {
        Field::Name => name,
        Field::Description => description,
    };
    (field, snippet(text, terms))
}

/// True when some token of `text` matches one of `terms`.
fn marks(text: &str, terms: &[Term]) -> bool {
    crate::store::pg::search::tokens(text)
        .iter()
        .any(|(_, _, t)| crate::store::pg::search::token_matches(t, terms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::pg::search::terms;

    #[test]
    fn a_name_match_shows_the_name_else_the_description() {
        let t = terms("flaky");
        assert_eq!(
            hit_snippet(Some("fix flaky test"), Some("a flaky one"), &t),
            (Field::Name, "fix [flaky] test".to_string())
        );
        assert_eq!(
            hit_snippet(Some("fix tests"), Some("a flaky one"), &t),
            (Field::Description, "a [flaky] one".to_string())
        );
        let t = terms("\"file.rs\"");
        assert_eq!(
            hit_snippet(Some("see file.rs:45"), None, &t),
            (Field::Name, "see file.rs:45".to_string())
        );
    }

    #[test]
    fn first_name_and_last_description_win_in_any_order() {
        let mut a = TaskTexts::default();
        assert!(a.apply(Field::Name, "late", 5, "b"));
        assert!(a.apply(Field::Name, "early", 5, "a"));
        assert!(!a.apply(Field::Name, "later", 6, "a"));
        assert!(a.apply(Field::Description, "one", 1, "a"));
        assert!(a.apply(Field::Description, "two", 2, "a"));
        assert!(!a.apply(Field::Description, "zero", 0, "z"));
        assert_eq!((a.name_text(), a.description_text()), ("early", "two"));
        assert_eq!(
            TaskTexts {
                name: Some(Stamped {
                    text: "fix file.rs".into(),
                    ts: 0,
                    eid: "e".into()
                }),
                description: None
            }
            .parts(),
            "file rs"
        );
    }
}
