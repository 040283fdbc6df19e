//! The language's rough edges of issue 26, one test each with the exact
//! sentence or result (docs/tq.md "Decisions the spec left open"): numbers
//! with an exponent, long `:or-else` chains in both optimizer modes,
//! metadata keys that differ only in case, `(:group-by ...)` over a value
//! `none`, duplicate-free suggestion lists and `phase-of` cycles refused
//! at write time. `tests/pg_tq_edges.rs` compiles these cases again in
//! twin mode, so each query also runs on PostgreSQL and must answer the
//! same text there.

mod common;

use cairn::store::NewEvent;
use common::{Fx, s};

#[test]
fn a_number_with_an_exponent_is_one_token_with_its_own_sentence() {
    let mut f = Fx::new();
    f.create("a");
    let e0 = f.events();
    assert_eq!(
        f.w("(-> (all) (:claim! 1e9))"),
        "Parse error: Number 1e9 has an exponent; TQ numbers are plain digits, e.g. 1000000000."
    );
    assert_eq!(
        f.r("(-> (all) (:where (> :obs-count 1.5e3)))"),
        "Parse error: Number 1.5e3 has an exponent; TQ numbers are plain digits, e.g. 1500."
    );
    assert_eq!(
        f.r("(-> (all) (:take 1E2))"),
        "Parse error: Number 1E2 has an exponent; TQ numbers are plain digits, e.g. 100."
    );
    assert_eq!(f.events(), e0);
    // Plain digits still read as numbers.
    assert_eq!(f.r("(-> (all) (:take 100) (:count))"), "1");
}

/// `(-> (all) (:where (= :status "nope")) (:or-else Q1) ... (:or-else Qn))`
/// where every Qi is empty except the last, which is `(node LAST)`.
fn or_else_chain(n: usize, last: &str) -> String {
    let mut q = String::from(r#"(-> (all) (:where (= :status "nope"))"#);
    for i in 0..n {
        if i + 1 == n {
            q.push_str(&format!(r#" (:or-else (node "{last}"))"#));
        } else {
            q.push_str(&format!(
                r#" (:or-else (-> (active) (:where (= :slug "none-{i}"))))"#
            ));
        }
    }
    q.push_str(" (:ids))");
    q
}

#[test]
fn long_or_else_chains_run_and_agree_optimized_or_not() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    for n in [8, 12, 16, 24, 32] {
        let q = or_else_chain(n, "01-b");
        f.engine.optimize = true;
        let on = f.r(&q);
        f.engine.optimize = false;
        let off = f.r(&q);
        f.engine.optimize = true;
        assert_eq!(on, format!("1 task:\n- {}", s("b")), "optimized, {n} steps");
        assert_eq!(off, on, "unoptimized, {n} steps");
    }
    // A set of other shapes: never answered in one mode and refused in the
    // other.
    let mut shapes: Vec<String> = vec![
        r#"(-> (all) (:or-else (all)) (:or-else (all)) (:or-else (all)) (:or-else (all)) (:or-else (all)) (:or-else (all)) (:or-else (all)) (:or-else (all)) (:count))"#.to_string(),
        r#"(-> (dormant) (:or-else (-> (dormant) (:or-else (-> (dormant) (:or-else (-> (dormant) (:or-else (-> (dormant) (:or-else (-> (dormant) (:or-else (-> (dormant) (:or-else (-> (dormant) (:or-else (active)))))))))))))))) (:ids))"#.to_string(),
        r#"(-> (all) (:union (all)) (:union (all)) (:union (all)) (:union (all)) (:union (all)) (:union (all)) (:union (all)) (:union (all)) (:union (all)) (:count))"#.to_string(),
    ];
    shapes.push(format!(
        "(-> (all) {} (:count))",
        "(:or-else (all)) ".repeat(40)
    ));
    shapes.push(format!(
        "(-> (all) {} (:count))",
        "(:minus (dormant)) ".repeat(60)
    ));
    for q in &shapes {
        f.engine.optimize = true;
        let on = f.r(q);
        f.engine.optimize = false;
        let off = f.r(q);
        f.engine.optimize = true;
        assert_eq!(on, off, "optimized and unoptimized differ on {q}");
        assert!(
            !on.contains("too complex") && !on.contains("could not be executed"),
            "{q}: {on}"
        );
    }
}

#[test]
fn metadata_keys_differing_only_in_case_are_one_key() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    // An event as an older cairn or another client recorded it.
    f.meta("a", "Priority", "high");
    assert_eq!(
        f.w(r#"(-> (node "01-b") (:set! :PRIORITY "low") (:ids))"#),
        format!("1 task:\n- {}", s("b"))
    );
    assert_eq!(
        f.r("(-> (all) (:select :priority))"),
        format!(
            "2 tasks:\n- {}  priority=high\n- {}  priority=low",
            s("a"),
            s("b")
        )
    );
    assert_eq!(
        f.r("(-> (all) (:select :Priority))"),
        f.r("(-> (all) (:select :priority))")
    );
    assert_eq!(
        f.r(r#"(-> (fields) (:where (= :origin "metadata")) (:select :origin))"#),
        "1 task:\n- priority  origin=metadata"
    );
    // A later write in another case overwrites the same key.
    f.meta("a", "PRIORITY", "urgent");
    assert_eq!(
        f.r(r#"(-> (all) (:where (= :priority "urgent")) (:ids))"#),
        format!("1 task:\n- {}", s("a"))
    );
}

#[test]
fn group_by_keeps_a_value_none_apart_from_missing_values() {
    let mut f = Fx::new();
    f.create("a");
    f.create("b");
    f.create("c");
    f.create("d");
    f.meta("a", "owner", "none");
    f.meta("c", "owner", "ann");
    f.meta("d", "owner", "none");
    assert_eq!(
        f.r("(-> (all) (:sort :slug :asc) (:group-by :owner))"),
        format!(
            "3 groups:\n\n## \"none\" (2)\n- {} (active)\n- {} (active)\n\n## ann (1)\n- {} (active)\n\n## none (1)\n- {} (active)",
            s("a"),
            s("d"),
            s("c"),
            s("b")
        )
    );
}

#[test]
fn the_unknown_field_list_names_each_field_once() {
    let mut f = Fx::new();
    f.create("a");
    // `display-name` is metadata AND a declared field; `Owner`/`owner` one key.
    f.meta("a", "display-name", "Alpha");
    f.meta("a", "Owner", "ann");
    f.meta("a", "owner", "bob");
    let out = f.r("(-> (all) (:select :qqqqqqqqqqqq))");
    let list = out
        .strip_prefix("Query error: Unknown field :qqqqqqqqqqqq. Known fields: ")
        .unwrap_or_else(|| panic!("{out}"));
    let names: Vec<&str> = list.trim_end_matches('.').split(", ").collect();
    let mut once = names.clone();
    once.sort_unstable();
    once.dedup();
    assert_eq!(once.len(), names.len(), "{out}");
    assert_eq!(names.iter().filter(|n| **n == ":display-name").count(), 1);
    assert_eq!(names.iter().filter(|n| **n == ":owner").count(), 1);
    assert_eq!(names.last(), Some(&":owner"));
}

#[test]
fn a_phase_of_cycle_is_refused_at_write_time_naming_the_cycle() {
    let mut f = Fx::new();
    f.create("one");
    f.create("two");
    f.create("three");
    assert_eq!(
        f.w(&format!(
            r#"(-> (node "01-one") (:link! :phase-of "{}") (:ids))"#,
            s("two")
        )),
        format!("1 task:\n- {}", s("one"))
    );
    assert_eq!(
        f.w(&format!(
            r#"(-> (node "01-two") (:link! :phase-of "{}") (:ids))"#,
            s("three")
        )),
        format!("1 task:\n- {}", s("two"))
    );
    let e0 = f.events();
    assert_eq!(
        f.w(&format!(
            r#"(-> (node "01-three") (:link! :phase-of "{}") (:ids))"#,
            s("one")
        )),
        format!(
            "Query error: {t} phase-of {o} would make a cycle: {t} → {o} → {w} → {t}. A plan cannot contain itself.",
            t = s("three"),
            o = s("one"),
            w = s("two")
        )
    );
    // forked-from sets the same parent pointer (a raw event: TQ links
    // only phase-of among the structural edges).
    let ev = NewEvent::link(
        &f.session.id,
        f.ts + 10,
        &s("two"),
        &s("one"),
        cairn::store::EdgeType::ForkedFrom,
    );
    assert_eq!(
        f.store.write(&[ev]).unwrap_err().to_string(),
        format!(
            "{w} forked-from {o} would make a cycle: {w} → {o} → {w}. A plan cannot contain itself.",
            w = s("two"),
            o = s("one")
        )
    );
    assert_eq!(f.events(), e0, "nothing is recorded");
    // The store refuses the raw event too (every write path appends here).
    let ev = NewEvent::fork(
        &f.session.id,
        f.ts + 10,
        &s("one"),
        &s("three"),
        cairn::store::EdgeType::PhaseOf,
    );
    assert_eq!(
        f.store.write(&[ev]).unwrap_err().to_string(),
        format!(
            "{t} phase-of {o} would make a cycle: {t} → {o} → {w} → {t}. A plan cannot contain itself.",
            t = s("three"),
            o = s("one"),
            w = s("two")
        )
    );
    assert_eq!(f.events(), e0);
    // Not a cycle: a sibling, a re-link to the same parent.
    assert_eq!(
        f.w(&format!(
            r#"(-> (node "01-three") (:link! :related "{}") (:ids))"#,
            s("one")
        )),
        format!("1 task:\n- {}", s("three"))
    );
    assert_eq!(
        f.w(&format!(
            r#"(-> (node "01-one") (:link! :phase-of "{}") (:ids))"#,
            s("two")
        )),
        format!("1 task:\n- {}", s("one"))
    );
}
