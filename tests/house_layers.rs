//! The rules of the house (docs/architecture.md), checked on the code's own
//! imports so a road that runs backwards fails the build's tests:
//!
//! - the store's layers point one way: no store file imports a file of a
//!   higher layer, and the files' imports form no loop;
//! - `store` never imports `tq`, `tools`, `board`, `mcp` or `cli`; `tq`
//!   never imports `tools`, `board`, `mcp` or `cli`; `tools` never imports
//!   `board`, `mcp` or `cli`; `board` (issue 25) never imports `mcp` or
//!   `cli` (the HTTP gate reaches it through `board::web::Gatekeeper`);
//!   `mcp` never imports `cli`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The store's layers, bottom first (docs/architecture.md "The store's
/// layers"); a file may import its own layer or one below.
const STORE_LAYERS: [&[&str]; 6] = [
    &[
        "error",
        "model",
        "event",
        "slug",
        "schema",
        "location",
        "search",
        "read",
        "log/mod",
        "log/line",
        "log/safe",
        "pg/schema",
        "pg/target",
        "parts",
        "texts",
        "pg/search",
        "pg/case_fold",
        "names",
        "progress",
    ],
    &[
        "reader",
        "checkpoint",
        "handle",
        "log/marks",
        "pg/connect",
        "pg/handle",
        "pg/backfill",
        "pg/read",
        "pg/tokens",
        "tokens",
        "agents",
        "pg/agents",
        "health",
    ],
    &["split", "fold", "bulk", "cycle", "refold", "pg/fold"],
    &["write", "log/append", "pg/write"],
    &[
        "aside",
        "rebuild",
        "log/read",
        "log/reconcile",
        "log/check",
        "log/import",
        "log/export",
        "commits",
        "changes",
        "pg/rebuild",
        "pg/copy",
        "pg/changes",
        "pg/push",
    ],
    &["open", "mod", "pg/mod", "db"],
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments and without its `#[cfg(test)]`
/// module (tests may reach anywhere).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers that follow `prefix` in `code` (`crate::store::` →
/// `open`, `log`, ...).
fn after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before_ok = rest[..i]
            .chars()
            .last()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != ':');
        rest = &rest[i + prefix.len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if before_ok && !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

/// `src/store/log/append.rs` → `log/append`; `src/store/open.rs` → `open`.
fn store_name(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap().with_extension("");
    rel.to_string_lossy().into_owned()
}

/// The store files `file` (a store name) imports.
fn store_imports(file: &str, code: &str, files: &BTreeSet<String>) -> BTreeSet<String> {
    let resolve = |dir: &str, name: &str| {
        let candidate = if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        if files.contains(&candidate) {
            candidate
        } else if dir.is_empty() {
            "mod".to_string()
        } else {
            format!("{dir}/mod")
        }
    };
    let in_log = file.starts_with("log/");
    let mut out = BTreeSet::new();
    for n in after(code, "crate::store::log::") {
        out.insert(resolve("log", &n));
    }
    for n in after(code, "crate::store::") {
        if n != "log" {
            out.insert(resolve("", &n));
        }
    }
    for n in after(code, "super::super::") {
        out.insert(resolve("", &n));
    }
    for n in after(code, "super::") {
        if n == "super" {
            continue;
        }
        // In `log/mod.rs`, `super` is the store; in the log's files, the log.
        if in_log && file != "log/mod" {
            out.insert(resolve("log", &n));
        } else {
            out.insert(resolve("", &n));
        }
    }
    out.remove(file);
    out
}

fn layer_of(name: &str) -> Option<usize> {
    STORE_LAYERS.iter().position(|l| l.contains(&name))
}

#[test]
fn the_store_layers_point_one_way_and_have_no_loop() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
    let mut paths = Vec::new();
    rust_files(&root, &mut paths);
    let files: BTreeSet<String> = paths.iter().map(|p| store_name(p, &root)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut wrong = Vec::new();
    for p in &paths {
        let name = store_name(p, &root);
        let Some(mine) = layer_of(&name) else {
            wrong.push(format!("{name} is in no layer (add it to STORE_LAYERS)"));
            continue;
        };
        let deps = store_imports(&name, &code(p), &files);
        for d in &deps {
            // `mod` re-exports items of the layers below (`super::StoreError`);
            // `log/mod`'s own items (paths, folder names) sit at the bottom.
            if d == "mod" {
                continue;
            }
            match layer_of(d) {
                Some(l) if l <= mine => {}
                Some(l) => wrong.push(format!(
                    "{name} (layer {}) imports {d} (layer {})",
                    mine + 1,
                    l + 1
                )),
                None => wrong.push(format!("{name} imports {d}, which is in no layer")),
            }
        }
        graph.insert(name, deps);
    }
    // No loop among the files (same-layer imports included).
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
        loops: &mut Vec<String>,
    ) {
        match state.get(n) {
            Some(2) => return,
            Some(1) => {
                let at = stack.iter().position(|s| s == n).unwrap_or(0);
                loops.push(format!("{} -> {n}", stack[at..].join(" -> ")));
                return;
            }
            _ => {}
        }
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for d in graph.get(n).into_iter().flatten() {
            if d != "mod" && d != "log/mod" {
                visit(d, graph, state, stack, loops);
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
    }
    let mut state = BTreeMap::new();
    let mut loops = Vec::new();
    for n in graph.keys() {
        visit(n, &graph, &mut state, &mut Vec::new(), &mut loops);
    }
    wrong.extend(loops.into_iter().map(|l| format!("loop: {l}")));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_rooms_never_import_a_room_above_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let forbidden: [(&str, &[&str]); 5] = [
        ("store", &["tq", "tools", "board", "mcp", "cli"]),
        ("tq", &["tools", "board", "mcp", "cli"]),
        ("tools", &["board", "mcp", "cli"]),
        ("board", &["mcp", "cli"]),
        ("mcp", &["cli"]),
    ];
    let mut wrong = Vec::new();
    for (room, above) in forbidden {
        let mut paths = Vec::new();
        rust_files(&src.join(room), &mut paths);
        for p in paths {
            let c = code(&p);
            for up in above {
                if c.contains(&format!("crate::{up}::")) || c.contains(&format!("crate::{up};")) {
                    wrong.push(format!("{} imports crate::{up}", p.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
