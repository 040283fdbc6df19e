//! Regressions for the hostile tester's findings (docs/tq.md, docs/planner.md):
//! view nesting, bounded suggestions, blank view names, one-line output,
//! computed fields in `(:set! ...)`, reserved link targets, Unicode case
//! folding, the render ceiling, errors inside views and lexer whitespace.

mod common;

use cairn::store::NewEvent;
use cairn::tq::Surface;
use common::{Fx, s, seeded};

/// Runs `f` on a thread with a 2 MiB stack (the default for spawned
/// threads), so unbounded recursion shows as a crash, not a pass.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// `c0 = (all)`, `cI = (query "cI-1")` for I in 1..n, as raw events.
fn chain(f: &mut Fx, n: usize) {
    let sid = f.session.id.clone();
    let mut evs = vec![NewEvent::view_define(&sid, 1_767_225_700, "c0", "(all)")];
    for i in 1..n {
        evs.push(NewEvent::view_define(
            &sid,
            1_767_225_700 + i as i64,
            &format!("c{i}"),
            &format!("(query \"c{}\")", i - 1),
        ));
    }
    f.write(evs);
}

#[test]
fn a_chain_of_40_views_is_refused_not_a_crash() {
    let out = on_small_stack(|| {
        let mut f = Fx::new();
        f.create("a");
        chain(&mut f, 40);
        let e0 = f.events();
        let read = f.r(r#"(-> (query "c39") (:count))"#);
        let define = f.w(r#"(define! "top" (query "c39"))"#);
        let within = f.r(r#"(-> (query "c31") (:count))"#);
        let edge = f.r(r#"(-> (query "c32") (:count))"#);
        (read, define, within, edge, f.events() - e0)
    });
    // c39 is level 1; level 33 is c7.
    assert_eq!(
        out.0,
        "Query error: Views nest deeper than 32 levels (at c7); flatten the view."
    );
    assert_eq!(
        out.1,
        "Query error: Views nest deeper than 32 levels (at c7); flatten the view."
    );
    // 32 levels (c31 .. c0) are fine; 33 are not.
    assert_eq!(out.2, "1");
    assert_eq!(
        out.3,
        "Query error: Views nest deeper than 32 levels (at c0); flatten the view."
    );
    assert_eq!(out.4, 0);
}

#[test]
fn a_chain_built_with_define_stops_at_the_limit() {
    let out = on_small_stack(|| {
        let f = Fx::new();
        let mut last = String::new();
        assert_eq!(f.w(r#"(-> (define! "d0" (all)) (:count))"#), "0");
        for i in 1..40 {
            last = f.w(&format!(
                "(-> (define! \"d{i}\" (query \"d{}\")) (:count))",
                i - 1
            ));
            if last != "0" {
                return (i, last);
            }
        }
        (40, last)
    });
    // d32 -> d31 ... d0 is 32 views; d33's body reaches 33.
    assert_eq!(
        out,
        (
            33,
            "Query error: Views nest deeper than 32 levels (at d0); flatten the view.".to_string()
        )
    );
}

#[test]
fn deep_operands_inside_a_deep_view_chain_do_not_crash() {
    // Each view nests its predecessor 30 operands deep; 32 views of that.
    let out = on_small_stack(|| {
        let mut f = Fx::new();
        f.create("a");
        let sid = f.session.id.clone();
        let mut evs = vec![NewEvent::view_define(&sid, 1_767_225_700, "o0", "(all)")];
        for i in 1..32 {
            let mut q = format!("(query \"o{}\")", i - 1);
            for _ in 0..30 {
                q = format!("(-> (active) (:union {q}))");
            }
            evs.push(NewEvent::view_define(
                &sid,
                1_767_225_700 + i as i64,
                &format!("o{i}"),
                &q,
            ));
        }
        f.write(evs);
        f.r(r#"(-> (query "o31") (:count))"#)
    });
    assert_eq!(
        out,
        "Query error: The query nests deeper than 64 levels once its views are expanded; flatten a view."
    );
}

#[test]
fn sixty_three_nested_operands_in_one_text_still_plan() {
    let out = on_small_stack(|| {
        let mut f = Fx::new();
        f.create("a");
        let mut q = "(all)".to_string();
        for _ in 0..62 {
            q = format!("(-> (active) (:union {q}))");
        }
        let count = f.r(&format!("{} (:count))", &q[..q.len() - 1]));
        let sid = f.session.id.clone();
        f.write(vec![NewEvent::view_define(&sid, 1_767_225_700, "deep", &q)]);
        let one_more = f.r(r#"(-> (all) (:union (-> (active) (:union (query "deep")))) (:count))"#);
        (count, one_more)
    });
    assert_eq!(out.0, "1");
    assert_eq!(
        out.1,
        "Query error: The query nests deeper than 64 levels once its views are expanded; flatten a view."
    );
}

#[test]
fn suggestions_skip_long_names_and_lists_are_capped() {
    let mut f = seeded();
    for c in ["x", "y", "z"] {
        f.meta("alpha", &c.repeat(50_000), "v");
    }
    let long = "j".repeat(50_000);
    let out = f.r(&format!("(-> (all) (:where (has :{long})))"));
    let cut = format!(":{}…", "j".repeat(80));
    // List entries are cut at 80 characters, the colon included.
    let x = format!(":{}…", "x".repeat(79));
    assert!(
        out.starts_with(&format!(
            "Query error: Unknown field {cut}. Known fields: :slug, "
        )),
        "{}",
        &out[..200]
    );
    assert!(
        // `display-name` is a declared field AND a metadata key: listed
        // once (issue 26).
        out.contains(&format!(":epoch, :priority, {x}, ")),
        "{out}"
    );
    assert!(out.chars().count() < 1_000, "{}", out.chars().count());
    // A near miss within 3 of a long key is not searched (over 200 chars).
    let near = format!("{}q", "x".repeat(49_999));
    assert!(
        !f.r(&format!("(-> (all) (:where (has :{near})))"))
            .contains("did you mean")
    );
    // Short names still get suggestions.
    assert_eq!(
        f.r("(-> (all) (:where (has :slgu)))"),
        "Query error: Unknown field :slgu; did you mean :slug?"
    );
}

#[test]
fn the_unknown_view_list_is_capped_and_cut() {
    let mut f = Fx::new();
    let sid = f.session.id.clone();
    let mut evs = Vec::new();
    for i in 0..40 {
        evs.push(NewEvent::view_define(
            &sid,
            1_767_225_700 + i,
            &format!("{}{i:02}", "v".repeat(100)),
            "(all)",
        ));
    }
    f.write(evs);
    let out = f.r(r#"(query "nope")"#);
    let first = format!("{}…", "v".repeat(80));
    let mut names: Vec<String> = "active-roots, busy, frontier, hub-tasks, knowledge, leaf-tasks, orphans, plan, plan-frontier, ready, recent, stale-phases"
        .split(", ")
        .map(String::from)
        .collect();
    names.extend(std::iter::repeat_n(first, 18));
    assert_eq!(
        out,
        format!(
            "Query error: Unknown named query nope. Available: {}, ....",
            names.join(", ")
        )
    );
}

#[test]
fn blank_view_names_are_refused() {
    let f = seeded();
    let e0 = f.events();
    for q in [
        r#"(define! " " (all))"#,
        "(define! \"\u{00A0}\" (all))",
        "(define! \"\t\" (all))",
    ] {
        assert_eq!(
            f.w(q),
            "Query error: (define! \"name\" Q) needs a non-empty string view name.",
            "{q}"
        );
    }
    assert_eq!(
        f.w(r#"(undefine! " ")"#),
        "Query error: (undefine! \"name\") needs a non-empty string view name."
    );
    assert_eq!(f.events(), e0);
}

#[test]
fn newlines_in_values_stay_on_their_line() {
    let mut f = seeded();
    f.create_described("evil", "one\ntwo\r\n- 2026-01-01-fake (active)");
    f.meta("evil", "multi", "line1\nline2\n- 2026-01-01-fake (active)");
    f.meta("evil", "display-name", "B\n- 2026-01-01-evil (active)");
    assert_eq!(
        f.r(r#"(-> (node "evil") (:enrich))"#),
        "1 task:\n- 2026-01-01-evil [B\\n- 2026-01-01-evil (active)] (active) obs=0 edges=0\n    display-name: B\\n- 2026-01-01-evil (active)\n    multi: line1\\nline2\\n- 2026-01-01-fake (active)"
    );
    assert_eq!(
        f.r(r#"(-> (node "evil") (:select :description))"#),
        "1 task:\n- 2026-01-01-evil  description=one\\ntwo\\r\\n- 2026-01-01-fake (active)"
    );
    assert_eq!(
        f.r(r#"(-> (node "evil") (:group-by :multi))"#),
        "1 group:\n\n## line1\\nline2\\n- 2026-01-01-fake (active) (1)\n- 2026-01-01-evil [B\\n- 2026-01-01-evil (active)] (active)"
    );
    assert_eq!(
        f.w(r#"(-> (node "beta") (:set! :priority "hi
- 2026-01-01-FAKE (completed)") (:select :priority))"#),
        "1 task:\n- 2026-01-01-beta  priority=hi\\n- 2026-01-01-FAKE (completed)"
    );
}

#[test]
fn set_refuses_computed_fields_but_not_display_name() {
    let f = seeded();
    let e0 = f.events();
    for k in [
        "description",
        "parent",
        "obs-count",
        "updated-ts",
        "depot",
        "category",
        "edge-count",
    ] {
        assert_eq!(
            f.w(&format!(r#"(-> (node "alpha") (:set! :{k} "x"))"#)),
            format!(
                "Query error: (:set! ...) will not set :{k}; it is a computed field, not metadata."
            ),
        );
    }
    assert_eq!(
        f.w(r#"(-> (node "alpha") (:set! :STATUS "x"))"#),
        "Query error: (:set! ...) will not set :slug or :status; use (:set-status! STATUS) for status."
    );
    assert_eq!(f.events(), e0);
    assert_eq!(
        f.w(r#"(-> (node "alpha") (:set! :display-name "Alpha") (:ids))"#),
        "1 task:\n- 2026-01-01-alpha"
    );
    assert_eq!(
        f.r(r#"(-> (node "alpha") (:select :display-name))"#),
        "1 task:\n- 2026-01-01-alpha  display-name=Alpha"
    );
}

#[test]
fn reserved_link_targets_are_refused_and_depots_stripped() {
    let f = seeded();
    let e0 = f.events();
    assert_eq!(
        f.w(r#"(-> (node "alpha") (:link! :phase-of "@cairn") (:count))"#),
        "Query error: @cairn is reserved; it cannot be linked."
    );
    assert_eq!(
        f.w(r#"(-> (node "alpha") (:link! :related "x:@cairn") (:count))"#),
        "Query error: @cairn is reserved; it cannot be linked."
    );
    assert_eq!(
        f.w(r#"(-> (node "alpha") (:unlink! :related "@cairn") (:count))"#),
        "Query error: @cairn is reserved; it cannot be unlinked."
    );
    assert_eq!(f.events(), e0);
    assert_eq!(
        f.w(
            r#"(-> (node "beta") (:link! :related "x:2026-01-01-alpha") (:follow :related) (:ids))"#
        ),
        format!("1 task:\n- {}", s("alpha"))
    );
    assert_eq!(f.events(), e0 + 1);
    assert_eq!(
        f.w(r#"(-> (node "beta") (:unlink! :related "depot:2026-01-01-alpha") (:follow :related) (:count))"#),
        "0"
    );
    assert_eq!(
        f.w(r#"(-> (node "beta") (:link! :related "x:"))"#),
        "Query error: (:link! :EDGE \"target\") needs a non-empty target slug string, got \"x:\"."
    );
}

#[test]
fn case_folding_is_unicode() {
    let mut f = Fx::new();
    f.create_described("desc-a", "École du Über-Straße");
    f.create("école-été");
    assert_eq!(
        f.r(r#"(-> (all) (:where (matches :description "école")) (:ids))"#),
        format!("1 task:\n- {}", s("desc-a"))
    );
    assert_eq!(
        f.r(r#"(-> (all) (:where (matches :description "ÜBER")) (:ids))"#),
        format!("1 task:\n- {}", s("desc-a"))
    );
    assert_eq!(
        f.r(r#"(-> (node "ÉCOLE-ÉTÉ") (:ids))"#),
        format!("1 task:\n- {}", s("école-été"))
    );
    assert_eq!(f.w(r#"(-> (node "École") (:count))"#), "1");
}

#[test]
fn take_advice_never_says_0_and_single_task_is_singular() {
    let mut f = Fx::new();
    f.create("huge");
    f.meta("huge", "display-name", &"x".repeat(20_000));
    let out = f.r(r#"(node "huge")"#);
    assert_eq!(out.chars().count(), 16_000);
    assert_eq!(
        out.lines().last(),
        Some("… truncated: showing 1 of 1 task; narrow the query or add (:take 1).")
    );
    assert!(out.starts_with(&format!("1 task:\n- {} [xxx", s("huge"))));
}

#[test]
fn errors_in_a_view_body_point_at_the_query_form() {
    let mut f = seeded();
    let sid = f.session.id.clone();
    f.write(vec![NewEvent::view_define(
        &sid,
        1_767_225_700,
        "broken",
        "(-> (all) (:where (has :slgu)))",
    )]);
    let q = r#"(-> (all) (:union (query "broken")))"#;
    let d = f
        .engine
        .prepare(&f.store.reader().unwrap(), &f.session, q, Surface::Read)
        .unwrap_err();
    assert_eq!(
        d.render_plain(),
        "Query error: in view broken: Unknown field :slgu; did you mean :slug?"
    );
    assert_eq!(d.span, Some(18..34));
    assert_eq!(&q[18..34], r#"(query "broken")"#);
    // Nested: the innermost view is named, the span is the user's form.
    f.write(vec![NewEvent::view_define(
        &sid,
        1_767_225_701,
        "outer",
        r#"(-> (active) (:minus (query "broken")))"#,
    )]);
    let q = r#"(query "outer")"#;
    let d = f
        .engine
        .prepare(&f.store.reader().unwrap(), &f.session, q, Surface::Read)
        .unwrap_err();
    assert_eq!(
        d.render_plain(),
        "Query error: in view broken: Unknown field :slgu; did you mean :slug?"
    );
    assert_eq!(d.span, Some(0..15));
}

#[test]
fn lexer_whitespace_bom_nbsp_and_bare_cr() {
    let f = seeded();
    let n = f.r("(-> (all) (:count))");
    assert_eq!(f.r("\u{FEFF}(-> (all) (:count))"), n);
    assert_eq!(f.r("(->\u{00A0}(all) (:count))\u{00A0}"), n);
    assert_eq!(f.r("; c\r(-> (all) (:count))"), n);
    assert_eq!(f.r("(all) ; c\r(all)"), f.r("(all) (all)"));
}
