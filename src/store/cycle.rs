//! Refusing a parent pointer that would close a cycle (issue 26; docs/store.md
//! "Phase-of cycles"): a new `task.fork` or structural `task.link`
//! (`phase-of`, `forked-from`: both set the child's parent pointer) whose
//! child is already an ancestor of its new parent is refused at write time
//! with the cycle named, on both engines and every write path (tools, TQ
//! mutations, CLI verbs all append through the store's write transaction).
//! Imports, merges and rebuilds fold what the log holds and never ask:
//! the closure over parent pointers still copes with a cycle.

use std::collections::HashSet;

use super::error::StoreError;
use super::event::NewEvent;
use super::fold::{Action, parse_action};
use super::model::{EdgeClass, EdgeType};

/// The parent pointer an event would set: `child`'s parent becomes `parent`
/// through `edge` (slugs as the event names them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParentLink {
    /// The task whose parent pointer is set.
    pub child: String,
    /// Its new parent.
    pub parent: String,
    /// `phase-of` or `forked-from`.
    pub edge: EdgeType,
}

/// The parent pointer `ev` sets, when it is a fork or a structural link
/// between two different tasks (a self-edge folds to nothing).
pub(crate) fn parent_link(ev: &NewEvent) -> Option<ParentLink> {
    match parse_action(&ev.event_type, &ev.data).ok()? {
        Action::Connect { other, edge, fork }
            if edge.class() == EdgeClass::Structural && other != ev.task_id =>
        {
            let (child, parent) = if fork {
                (other, ev.task_id.clone())
            } else {
                (ev.task_id.clone(), other)
            };
            Some(ParentLink {
                child,
                parent,
                edge,
            })
        }
        _ => None,
    }
}

/// Walks up from `link.parent` through `parent_of` (a task's current
/// parent slug, `None` for a root or an unknown task); reaching
/// `link.child` is a cycle: [`StoreError::PhaseCycle`] with the cycle from
/// the child back to itself (`a → b → a`). A cycle already in the store
/// that does not pass through the child ends the walk (no error: this link
/// does not close it). Errors: what `parent_of` returns, the cycle.
pub(crate) fn refuse_cycle<E: From<StoreError>>(
    link: &ParentLink,
    mut parent_of: impl FnMut(&str) -> Result<Option<String>, E>,
) -> Result<(), E> {
    let mut chain = vec![link.child.clone(), link.parent.clone()];
    let mut seen: HashSet<String> = HashSet::from([link.parent.clone()]);
    let mut cur = link.parent.clone();
    loop {
        match parent_of(&cur)? {
            None => return Ok(()),
            Some(p) if p == link.child => {
                chain.push(p);
                return Err(StoreError::PhaseCycle {
                    edge: link.edge.as_str().to_string(),
                    cycle: chain,
                }
                .into());
            }
            Some(p) => {
                if !seen.insert(p.clone()) {
                    return Ok(());
                }
                chain.push(p.clone());
                cur = p;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(task: &str, ty: &str, data: serde_json::Value) -> NewEvent {
        NewEvent {
            task_id: task.into(),
            event_type: ty.into(),
            ts: 1,
            session_id: "s".into(),
            data,
        }
    }

    #[test]
    fn link_and_fork_name_child_and_parent() {
        let link = ev(
            "a",
            "task.link",
            json!({"target_id": "b", "edge_type": "phase-of"}),
        );
        assert_eq!(
            parent_link(&link),
            Some(ParentLink {
                child: "a".into(),
                parent: "b".into(),
                edge: EdgeType::PhaseOf
            })
        );
        let fork = ev(
            "b",
            "task.fork",
            json!({"child_id": "a", "edge_type": "forked-from"}),
        );
        assert_eq!(
            parent_link(&fork),
            Some(ParentLink {
                child: "a".into(),
                parent: "b".into(),
                edge: EdgeType::ForkedFrom
            })
        );
        let lateral = ev(
            "a",
            "task.link",
            json!({"target_id": "b", "edge_type": "depends-on"}),
        );
        assert_eq!(parent_link(&lateral), None);
        let own = ev(
            "a",
            "task.link",
            json!({"target_id": "a", "edge_type": "phase-of"}),
        );
        assert_eq!(parent_link(&own), None);
    }

    #[test]
    fn the_cycle_is_named_from_the_child() {
        let parents = |s: &str| -> Result<Option<String>, StoreError> {
            Ok(match s {
                "b" => Some("c".into()),
                "c" => Some("a".into()),
                _ => None,
            })
        };
        let link = ParentLink {
            child: "a".into(),
            parent: "b".into(),
            edge: EdgeType::PhaseOf,
        };
        let e = refuse_cycle(&link, parents).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a phase-of b would make a cycle: a → b → c → a. A plan cannot contain itself."
        );
        let free = ParentLink {
            child: "x".into(),
            parent: "b".into(),
            edge: EdgeType::PhaseOf,
        };
        assert!(refuse_cycle(&free, parents).is_ok());
        // A cycle already stored (b → c → b) that does not reach x ends.
        let looped = |s: &str| -> Result<Option<String>, StoreError> {
            Ok(match s {
                "b" => Some("c".into()),
                "c" => Some("b".into()),
                _ => None,
            })
        };
        assert!(refuse_cycle(&free, looped).is_ok());
    }
}
