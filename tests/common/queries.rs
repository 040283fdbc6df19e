//! The read queries of spec/tq.md §8 and every built-in view, shared by the
//! one-statement test, the read-only test and the SQL snapshots.

/// (snapshot name, query text) for every §8 read query that succeeds.
pub const READ_QUERIES: &[(&str, &str)] = &[
    (
        "c01_follow_phase_of",
        r#"(-> (node "parent") (:follow :phase-of) (:ids))"#,
    ),
    (
        "c01_back_phase_of",
        r#"(-> (node "child") (:back :phase-of) (:ids))"#,
    ),
    (
        "c01_follow_forked_from",
        r#"(-> (node "parent") (:follow :forked-from) (:ids))"#,
    ),
    (
        "c02_follow_depends_on",
        r#"(-> (node "alpha") (:follow :depends-on) (:ids))"#,
    ),
    (
        "c02_back_depends_on",
        r#"(-> (node "beta") (:back :depends-on) (:ids))"#,
    ),
    ("c03_active", "(-> (active) (:ids))"),
    (
        "c27_search_where_take",
        r#"(-> (search "bm25 ranking") (:where (= :status "active")) (:take 10))"#,
    ),
    (
        "c27_search_sort_relevance",
        r#"(-> (all) (:minus (search "wontfix")) (:union (search "flaky")) (:sort :relevance) (:take 5) (:select :relevance))"#,
    ),
    ("c03_dormant", "(dormant)"),
    (
        "c04_select_display_status",
        r#"(-> (node "x") (:select :display-name :status))"#,
    ),
    ("c05_frontier", r#"(query "frontier")"#),
    ("c06_knowledge", r#"(-> (query "knowledge") (:ids))"#),
    ("c09_count", "(-> (all) (:count))"),
    ("c09_group_by", "(-> (active) (:group-by :status))"),
    (
        "c11_obs_count_gt",
        "(-> (all) (:where (> :obs-count -1)) (:count))",
    ),
    (
        "c12_matches_slug",
        r#"(-> (all) (:where (matches :slug "TOKEN")) (:ids))"#,
    ),
    (
        "c12_matches_description",
        r#"(-> (all) (:where (matches :description "bm25")) (:ids))"#,
    ),
    ("c14_union", "(-> (active) (:union (dormant)) (:count))"),
    (
        "c14_intersect",
        "(-> (active) (:intersect (dormant)) (:count))",
    ),
    (
        "c14_all_intersect_active",
        "(-> (all) (:intersect (active)) (:count))",
    ),
    (
        "c14_all_minus_active",
        "(-> (all) (:minus (active)) (:ids))",
    ),
    (
        "c16_all",
        r#"(-> (node "fan") (:where (all (:follow :depends-on) (= :status "completed"))) (:count))"#,
    ),
    (
        "c16_any",
        r#"(-> (node "fan") (:where (any (:follow :depends-on) (= :status "completed"))) (:count))"#,
    ),
    (
        "c16_none",
        r#"(-> (node "fan") (:where (none (:follow :depends-on) (= :status "completed"))) (:count))"#,
    ),
    (
        "c17_count_follow",
        "(-> (all) (:where (>= (count (:follow :depends-on)) 2)) (:ids))",
    ),
    (
        "c17_count_back",
        "(-> (all) (:where (= (count (:back :depends-on)) 1)) (:ids))",
    ),
    ("c18_node_cairn", r#"(-> (node "@cairn") (:ids))"#),
    (
        "c19_schema_shapers",
        r#"(-> (schema) (:where (= :kind "shaper")) (:ids))"#,
    ),
    (
        "c19_fields_numeric",
        r#"(-> (fields) (:where (= :type "number")) (:ids))"#,
    ),
    (
        "c19_edges_structural",
        r#"(-> (edges) (:where (= :class "structural")) (:ids))"#,
    ),
    (
        "c19_views_user",
        r#"(-> (views) (:where (= :origin "user")) (:select :source))"#,
    ),
    ("c19_fields_follow", "(-> (fields) (:follow :phase-of))"),
    ("c20_enrich", r#"(-> (node "a") (:enrich))"#),
    (
        "c21_schema_mutations",
        r#"(-> (schema) (:where (= :kind "mutation")) (:ids))"#,
    ),
    (
        "c21_schema_dates",
        r#"(-> (schema) (:where (= :signature "field-ts lit-date")) (:ids))"#,
    ),
    ("c23_select_obs_count", "(-> (all) (:select :obs-count))"),
    ("c23_select_parent", "(-> (all) (:select :parent))"),
    (
        "c24_clock_unix",
        "(-> (all) (:where (< :updated-ts 2500000000)) (:count))",
    ),
    (
        "c24_clock_universal",
        "(-> (all) (:where (>= :updated-ts 3976214401)) (:count))",
    ),
    ("c24_select_updated", "(-> (all) (:select :updated-ts))"),
    (
        "c24_on",
        r#"(-> (all) (:where (on :updated-ts "2026-01-01")) (:count))"#,
    ),
    (
        "c24_since",
        r#"(-> (all) (:where (since :updated-ts "2026-01-01")) (:count))"#,
    ),
    (
        "c24_before",
        r#"(-> (all) (:where (before :updated-ts "2026-01-02")) (:count))"#,
    ),
    ("c25_sort_asc", "(-> (all) (:sort :slug :asc) (:ids))"),
    ("c25_sort_default", "(-> (all) (:sort :slug) (:ids))"),
    (
        "c26_fields_units",
        r#"(-> (fields) (:where (= :slug "updated-ts")) (:select :unit :epoch))"#,
    ),
];
