//! docs/tq.md's reference section is generated from the registry; this test
//! fails when it is stale. Regenerate with `CAIRN_BLESS=1 cargo test --test tq_docs`.
//! Also: every registry name appears in grammar/tq.ebnf, and every tutorial
//! query in docs/tq.md compiles.

use cairn::tq::reference::{BEGIN, END, reference_markdown, splice};
use cairn::tq::registry::{self, Category};

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

#[test]
fn generated_reference_is_current() {
    let path = root().join("docs/tq.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let fresh = splice(&doc).expect("docs/tq.md lacks the generated-section markers");
    if std::env::var_os("CAIRN_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    assert!(
        doc == fresh,
        "docs/tq.md's generated reference is stale; run `CAIRN_BLESS=1 cargo test --test tq_docs`"
    );
    assert!(doc.contains(&reference_markdown()));
    assert!(doc.contains(BEGIN) && doc.contains(END));
    assert!(
        doc.contains("| `(:sort FIELD [:asc\\|:desc])` | transformer | `field [asc\\|desc]` |")
    );
    assert!(doc.contains("| `(on TS \"YYYY-MM-DD\")` | leaf | `field-ts lit-date` |"));
}

#[test]
fn grammar_names_every_form_field_and_edge() {
    let ebnf = std::fs::read_to_string(root().join("grammar/tq.ebnf")).unwrap();
    for f in registry::forms() {
        let written = match f.category {
            Category::Step => format!("\":{}\"", f.name),
            _ => format!("\"{}\"", f.name),
        };
        assert!(ebnf.contains(&written), "grammar/tq.ebnf lacks {written}");
    }
    for f in registry::fields() {
        assert!(
            ebnf.contains(&format!("\":{}\"", f.name)),
            "grammar/tq.ebnf lacks :{}",
            f.name
        );
    }
    for e in registry::edges() {
        assert!(
            ebnf.contains(&format!("\":{}\"", e.edge.as_str())),
            "grammar/tq.ebnf lacks :{}",
            e.edge
        );
    }
}

#[test]
fn tutorial_code_blocks_compile() {
    let doc = std::fs::read_to_string(root().join("docs/tq.md")).unwrap();
    let mut n = 0;
    for block in doc.split("```\n").skip(1).step_by(2) {
        let mut current = String::new();
        let mut depth = 0i32;
        for line in block.lines() {
            let code = line.split(';').next().unwrap_or("");
            current.push_str(line);
            current.push('\n');
            depth += code.matches('(').count() as i32 - code.matches(')').count() as i32;
            if depth == 0 && !current.trim().is_empty() {
                let q = current.trim();
                if let Err(d) = cairn::tq::compile(q, &["priority".to_string()]) {
                    panic!("{q}: {}", d.render_plain());
                }
                n += 1;
                current.clear();
            }
        }
    }
    assert_eq!(n, 27);
}
