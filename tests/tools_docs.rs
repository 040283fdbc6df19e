//! `docs/tools.md`'s generated section matches the registry.

use cairn::tools::docs::{BEGIN, END, generated, refresh};

#[test]
fn tools_md_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tools.md");
    let text = std::fs::read_to_string(path).unwrap();
    let fresh = refresh(&text);
    if std::env::var_os("CAIRN_BLESS").is_some() {
        std::fs::write(path, &fresh).unwrap();
        return;
    }
    assert!(
        text == fresh,
        "docs/tools.md is stale; run CAIRN_BLESS=1 cargo test --test tools_docs"
    );
}

#[test]
fn generated_section_lists_every_tool_once() {
    let g = generated();
    assert!(g.starts_with(BEGIN) && g.ends_with(&format!("{END}\n")));
    for t in cairn::tools::tools() {
        assert_eq!(
            g.matches(&format!("\n### {}\n", t.name)).count(),
            1,
            "{}",
            t.name
        );
    }
    assert!(g.contains("| [`observe`](#observe) | `cairn/observe` | Record a freeform observation on the current task. |"));
    assert!(g.contains("| `before_seq` | integer | no | Exclusive upper seq bound; also the page-back cursor printed when output is truncated. |"));
}
