//! docs/cli.md's command reference is generated from the clap definition;
//! this test fails when it is stale. Regenerate with
//! `CAIRN_BLESS=1 cargo test --test cli_docs`.

use cairn::cli::reference::{BEGIN, END, reference_markdown, splice};

#[test]
fn generated_reference_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let fresh = splice(&doc).expect("docs/cli.md lacks the generated-section markers");
    if std::env::var_os("CAIRN_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    assert!(
        doc == fresh,
        "docs/cli.md's generated reference is stale; run `CAIRN_BLESS=1 cargo test --test cli_docs`"
    );
    assert!(doc.contains(BEGIN) && doc.contains(END));
    let md = reference_markdown();
    for verb in [
        "add",
        "ls",
        "show",
        "done",
        "start",
        "block",
        "note",
        "log",
        "search",
        "ready",
        "init",
        "completions",
        "man",
        "schema",
        "call",
    ] {
        assert!(md.contains(&format!("### `cairn {verb}`\n")), "{verb}");
    }
    assert!(md.contains("Usage: cairn add [OPTIONS] <NAME>\n"), "{md}");
}
