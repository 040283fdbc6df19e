//! Every front-end error message of spec/tq.md §1, §2, §7 and the suggestion
//! cases of §8.22 as insta snapshots of both renderings: plain (the MCP text)
//! and ariadne without colour (the CLI/REPL text).

use cairn::tq::compile;

const CASES: &[(&str, &str)] = &[
    ("parse_unclosed", "((("),
    ("parse_stray_close", "(all))"),
    ("parse_two_forms", "(all) (active)"),
    ("parse_quote", "'(all)"),
    ("parse_hash", "(node #x)"),
    ("parse_bad_escape", "(node \"a\\nb\")"),
    ("parse_unterminated", "(node \"abc"),
    ("parse_empty", "   "),
    ("parse_int_range", "(-> (all) (:take 99999999999999999999))"),
    ("bare_keyword_source", ":all"),
    ("bare_keyword_ids", "(-> (all) :ids)"),
    ("bare_keyword_count", "(-> (all) :count)"),
    ("bare_word_view", "plan"),
    ("unknown_step_complete", "(-> (current) (:complete!))"),
    ("unknown_source_activate", "(activate \"x\")"),
    ("unknown_step_bogus", "(-> (all) (:bogus-step))"),
    ("step_after_shaper", "(-> (all) (:count) (:ids))"),
    ("set_op_as_source", "(union (active) (dormant))"),
    ("node_empty", "(node \"\")"),
    ("define_empty_name", "(define! \"\" (all))"),
    ("define_shaper_body", "(define! \"v\" (-> (all) (:count)))"),
    ("operand_shaper", "(-> (all) (:union (-> (all) (:count))))"),
    ("unknown_edge", "(-> (all) (:follow :imaginary-edge))"),
    (
        "unknown_edge_in_quantifier",
        "(-> (all) (:where (none (:back :imaginary-edge) (has :slug))))",
    ),
    ("numeric_on_text", "(-> (all) (:where (> :status 3)))"),
    (
        "date_on_text",
        "(-> (all) (:where (before :status \"2026-01-01\")))",
    ),
    (
        "malformed_date",
        "(-> (all) (:where (on :updated-ts \"not-a-date\")))",
    ),
    (
        "feb_30",
        "(-> (all) (:where (on :updated-ts \"2026-02-30\")))",
    ),
    ("suggest_updated_at", "(-> (all) (:sort :updated-at))"),
    (
        "suggest_matchez",
        "(-> (all) (:where (matchez :slug \"x\")))",
    ),
    ("suggest_zelect", "(-> (all) (:zelect :slug))"),
    ("suggest_edgez", "(edgez)"),
    ("suggest_phse_of", "(-> (all) (:follow :phse-of))"),
    ("take_string", "(-> (all) (:take \"5\"))"),
    ("sort_up", "(-> (all) (:sort :slug :up))"),
    ("select_nope", "(-> (all) (:select :nope))"),
    ("set_status_field", "(-> (all) (:set! :status \"done\"))"),
    ("unknown_status", "(-> (all) (:set-status! :finished))"),
    ("arity", "(-> (all) (:group-by :status :slug))"),
    (
        "matches_number_field",
        "(-> (all) (:where (matches :obs-count \"1\")))",
    ),
];

#[test]
fn diagnostics_render_plain_and_ariadne() {
    for (name, query) in CASES {
        let d = compile(query, &[]).expect_err(name);
        let text = format!(
            "query: {query}\n\nplain:\n{}\n\nariadne:\n{}",
            d.render_plain(),
            d.render_ariadne(query, false)
        );
        insta::assert_snapshot!(*name, text);
    }
}

#[test]
fn ariadne_colour_only_when_asked() {
    let q = "(-> (all) (:zelect :slug))";
    let d = compile(q, &[]).unwrap_err();
    assert!(!d.render_ariadne(q, false).contains('\u{1b}'));
    assert!(d.render_ariadne(q, true).contains('\u{1b}'));
}

#[test]
fn help_line_is_rendered() {
    let q = "'(all)";
    let d = compile(q, &[]).unwrap_err();
    assert_eq!(
        d.help.as_deref(),
        Some("TQ has no quoting; strings use double quotes.")
    );
    assert!(
        d.render_ariadne(q, false)
            .contains("Help: TQ has no quoting; strings use double quotes.")
    );
}
