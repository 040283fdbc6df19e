//! Issue 14, the small items: `handoff` refuses paths inside `.git/` and onto
//! cairn's own files with the confinement sentence, and `define!` says what
//! is wrong with a view name holding control characters.

mod toolfx;

use serde_json::json;
use toolfx::{PREFIX, story};

#[test]
fn handoff_refuses_git_internals_and_cairns_own_files() {
    let mut fx = story();
    std::fs::create_dir_all(fx.root().join(".git/hooks")).unwrap();
    std::fs::create_dir_all(fx.root().join("vendor/lib/.git")).unwrap();
    let before = fx.events();
    let refused = [
        ".git/hooks/pre-commit",
        ".git/config",
        ".git",
        "./docs/../.git/hooks/post-merge",
        ".GIT/hooks/pre-push",
        "vendor/lib/.git/hooks/pre-commit",
        ".cairn/cairn.db",
        ".cairn/cairn.db-wal",
        ".cairn/cairn.db-shm",
        ".cairn/cairn.db-journal",
        ".cairn/cairn.lock",
        ".cairn/epoch",
        ".cairn/.gitignore",
        ".cairn/.gitattributes",
        ".cairn/tasks/some-task/events.ndjson",
    ];
    let epoch_before = std::fs::read(fx.root().join(".cairn/epoch")).ok();
    for path in refused {
        assert_eq!(
            fx.err("handoff", json!({"summary": "s", "path": path})),
            format!("path must stay inside the project: {path}"),
            "{path}"
        );
    }
    assert!(!fx.root().join(".git/hooks/pre-commit").exists());
    assert!(!fx.root().join(".git/config").exists());
    assert!(!fx.root().join(".cairn/cairn.db-journal").exists());
    // The epoch file is cairn's own (per-task logs); no handoff skeleton
    // overwrote it.
    assert_eq!(
        std::fs::read(fx.root().join(".cairn/epoch")).ok(),
        epoch_before
    );
    assert!(!fx.root().join(".cairn/tasks/some-task").exists());
    assert_eq!(fx.events(), before);
    // Notes under .cairn/tasks/ and elsewhere in the project still work.
    let ok = fx.ok(
        "handoff",
        json!({"summary": "s", "path": format!(".cairn/tasks/{PREFIX}/note.md")}),
    );
    assert_eq!(
        ok,
        format!(
            "Handoff scaffolded for {PREFIX} at {}",
            fx.root()
                .join(format!(".cairn/tasks/{PREFIX}/note.md"))
                .display()
        )
    );
    fx.ok(
        "handoff",
        json!({"summary": "s", "path": "docs/gitnotes.md"}),
    );
    assert_eq!(fx.events(), before + 2);
}

#[cfg(unix)]
#[test]
fn handoff_refuses_git_internals_through_a_symlinked_directory() {
    let mut fx = story();
    std::fs::create_dir_all(fx.root().join(".git/hooks")).unwrap();
    std::os::unix::fs::symlink(fx.root().join(".git"), fx.root().join("gitdir")).unwrap();
    std::os::unix::fs::symlink(fx.root().join(".cairn"), fx.root().join("state")).unwrap();
    let before = fx.events();
    for path in ["gitdir/hooks/pre-commit", "state/cairn.db-wal"] {
        assert_eq!(
            fx.err("handoff", json!({"summary": "s", "path": path})),
            format!("path must stay inside the project: {path}"),
        );
    }
    assert!(!fx.root().join(".git/hooks/pre-commit").exists());
    assert_eq!(fx.events(), before);
}

#[test]
fn handoff_refuses_git_read_files_at_any_level() {
    let mut fx = story();
    let before = fx.events();
    for path in [
        ".gitattributes",
        ".gitmodules",
        ".gitignore",
        "docs/.gitignore",
        "src/deep/.GITATTRIBUTES",
        "vendor/.gitmodules",
    ] {
        assert_eq!(
            fx.err("handoff", json!({"summary": "s", "path": path})),
            format!("path must stay inside the project: {path}"),
            "{path}"
        );
        assert!(!fx.root().join(path).exists(), "{path}");
    }
    assert_eq!(fx.events(), before);
    // A name that merely starts like them is a note like any other.
    fx.ok(
        "handoff",
        json!({"summary": "s", "path": "docs/gitignore-notes.md"}),
    );
    assert_eq!(fx.events(), before + 1);
}

#[test]
fn handoff_refuses_control_characters_in_the_path() {
    let mut fx = story();
    let before = fx.events();
    for (path, shown) in [
        ("nl\nname.md", "nl\\nname.md"),
        ("docs/tab\there.md", "docs/tab\\there.md"),
        ("esc\u{1b}[31m.md", "esc\\u{1b}[31m.md"),
    ] {
        assert_eq!(
            fx.err("handoff", json!({"summary": "s", "path": path})),
            format!("path must not contain control characters: {shown}"),
        );
    }
    assert_eq!(
        std::fs::read_dir(fx.root())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .chars()
                    .any(char::is_control)
            })
            .count(),
        0
    );
    assert!(!fx.root().join("docs").join("tab\there.md").exists());
    assert_eq!(fx.events(), before);
}

#[test]
fn define_names_the_control_characters_in_a_view_name() {
    let mut fx = story();
    let before = fx.events();
    for (query, form) in [
        // A real line break and tab inside the TQ string (TQ has no escapes
        // for them).
        ("(define! \"a\nb\" (all))", "(define! \"name\" Q)"),
        ("(define! \"tab\there\" (all))", "(define! \"name\" Q)"),
        ("(undefine! \"a\nb\")", "(undefine! \"name\")"),
    ] {
        assert_eq!(
            fx.err("task_query_write", json!({ "query": query })),
            format!(
                "Query error: {form} needs a view name without control characters (line breaks, tabs)."
            ),
            "{query}"
        );
    }
    assert_eq!(fx.events(), before);
}
