//! `cairn graph` formats (issue 25): a [`Graph`] as Mermaid, Graphviz DOT
//! or JSON. In Mermaid and DOT every task is a node `tN` (N its position),
//! a task with phases is drawn inside a box (Mermaid `subgraph`, DOT
//! `cluster`) holding its own node and its phases', an arrow `A → B` means
//! A depends on B (laid out right to left, so what comes first is on the
//! left), statuses are classes (Mermaid `classDef`) or fill colours (DOT),
//! the ready frontier has a thick border, and a live claim is a label line.
//! Names are escaped for each format: Mermaid entity codes (`#35;`) for
//! anything but plain letters, digits and a few marks; DOT HTML-like labels
//! with `&amp;`, `&lt;`, `&gt;`, `&quot;`; control characters (newlines)
//! become spaces.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::graph::{Graph, GraphTask};
use crate::tools::render::minute;

/// The fill, border and text colours of a status.
pub fn status_colours(status: &str) -> (&'static str, &'static str, &'static str) {
    match status {
        "open" => ("#e8eef7", "#5b7fb5", "#1b2a41"),
        "active" => ("#fff1c7", "#b7791f", "#3d2b00"),
        "blocked" => ("#fde2e1", "#c0392b", "#4a1410"),
        "completed" => ("#dcf2e3", "#2e8b57", "#123d22"),
        "abandoned" => ("#ececec", "#8a8a8a", "#4d4d4d"),
        _ => ("#ffffff", "#555555", "#222222"),
    }
}

/// The statuses in the order their classes are declared.
const STATUSES: [&str; 5] = ["open", "active", "blocked", "completed", "abandoned"];

/// The lines of a task's label: slug, name (when it has one), status (and
/// `ready`), the claim (`claimed by X until YYYY-MM-DD HH:MM UTC`).
pub fn label_lines(t: &GraphTask) -> Vec<String> {
    let mut lines = vec![t.slug.clone()];
    if let Some(n) = &t.name {
        lines.push(n.clone());
    }
    lines.push(if t.ready {
        format!("{} · ready", t.status)
    } else {
        t.status.clone()
    });
    if let Some(who) = &t.claimed_by {
        lines.push(match t.claim_until {
            Some(u) => format!("claimed by {who} until {} UTC", minute(u)),
            None => format!("claimed by {who}"),
        });
    }
    lines
        .into_iter()
        .map(|l| {
            l.chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect()
        })
        .collect()
}

/// `text` for a quoted Mermaid label: letters, digits, space and
/// `-_.,:/@'+=!?` as they are, anything else as an entity code (`#34;`).
pub fn mermaid_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if let Some(shown) = shown_escaped(c) {
            out.push_str(&mermaid_escape(&shown));
        } else if c.is_control() {
            out.push(' ');
        } else if c.is_ascii_alphanumeric() || " -_.,:/@'+=!?".contains(c) {
            out.push(c);
        } else {
            let _ = write!(out, "#{};", u32::from(c));
        }
    }
    out
}

/// `text` for a DOT HTML-like label: `&`, `<`, `>`, `"` as entities,
/// control characters as spaces.
pub fn dot_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() => out.push(' '),
            c => match shown_escaped(c) {
                Some(shown) => out.push_str(&shown),
                None => out.push(c),
            },
        }
    }
    out
}

/// How a character that must not act on a label is shown, or `None` for
/// any other: invisible and direction-changing characters (zero-width,
/// bidi embeddings, overrides and isolates, line/paragraph separators, the
/// byte-order mark) as `\u{hex}`, as tq.md §10 shows them; Unicode
/// noncharacters (`U+FFFE`, `U+FFFF`, `U+FDD0`–`U+FDEF`, the last two of
/// each plane), which XML forbids and Graphviz refuses, as `U+FFFD`.
pub fn shown_escaped(c: char) -> Option<String> {
    let u = u32::from(c);
    if matches!(u, 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2069 | 0x2028 | 0x2029 | 0xFEFF) {
        return Some(format!("\\u{{{u:x}}}"));
    }
    if matches!(u, 0xFDD0..=0xFDEF) || (u & 0xFFFE) == 0xFFFE {
        return Some('\u{FFFD}'.to_string());
    }
    None
}

/// The nesting of a graph: each task's phases (indexes into
/// `graph.tasks`) and the top-level tasks, every task exactly once (a
/// phase-of cycle is cut where it closes).
struct Nesting {
    kids: BTreeMap<usize, Vec<usize>>,
    roots: Vec<usize>,
}

fn nesting(g: &Graph) -> Nesting {
    let index: BTreeMap<&str, usize> = g
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.slug.as_str(), i))
        .collect();
    let mut kids: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut tops = Vec::new();
    for (i, t) in g.tasks.iter().enumerate() {
        match t.parent.as_deref().and_then(|p| index.get(p)) {
            Some(&p) if p != i => kids.entry(p).or_default().push(i),
            _ => tops.push(i),
        }
    }
    // Keep only what a depth-first walk from the tops (then from any task
    // not reached, on a cycle) sees first.
    let mut seen = BTreeSet::new();
    let mut out: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut roots = Vec::new();
    let starts: Vec<usize> = tops.iter().copied().chain(0..g.tasks.len()).collect();
    for s in starts {
        if !seen.insert(s) {
            continue;
        }
        roots.push(s);
        let mut stack = vec![s];
        while let Some(n) = stack.pop() {
            for &k in kids.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
                if seen.insert(k) {
                    out.entry(n).or_default().push(k);
                    stack.push(k);
                }
            }
        }
    }
    Nesting { kids: out, roots }
}

/// The graph as a Mermaid flowchart.
pub fn mermaid(g: &Graph) -> String {
    let mut out = String::from("flowchart RL\n");
    for s in STATUSES {
        let (fill, stroke, color) = status_colours(s);
        let dash = if s == "abandoned" {
            ",stroke-dasharray:4 3"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  classDef {s} fill:{fill},stroke:{stroke},color:{color}{dash}"
        );
    }
    out.push_str("  classDef ready stroke-width:3px\n");
    let nest = nesting(g);
    for &r in &nest.roots {
        mermaid_node(g, &nest, r, 1, &mut out);
    }
    let index = slug_index(g);
    for e in &g.edges {
        if let (Some(a), Some(b)) = (index.get(e.from.as_str()), index.get(e.to.as_str())) {
            let _ = writeln!(out, "  t{a} --> t{b}");
        }
    }
    for s in STATUSES {
        let ids: Vec<String> = (0..g.tasks.len())
            .filter(|&i| g.tasks[i].status == s)
            .map(|i| format!("t{i}"))
            .collect();
        if !ids.is_empty() {
            let _ = writeln!(out, "  class {} {s}", ids.join(","));
        }
    }
    let ready: Vec<String> = (0..g.tasks.len())
        .filter(|&i| g.tasks[i].ready)
        .map(|i| format!("t{i}"))
        .collect();
    if !ready.is_empty() {
        let _ = writeln!(out, "  class {} ready", ready.join(","));
    }
    out
}

fn slug_index(g: &Graph) -> BTreeMap<&str, usize> {
    g.tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.slug.as_str(), i))
        .collect()
}

fn mermaid_node(g: &Graph, nest: &Nesting, i: usize, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    let t = &g.tasks[i];
    let label: Vec<String> = label_lines(t).iter().map(|l| mermaid_escape(l)).collect();
    let node = format!("t{i}[\"{}\"]", label.join("<br/>"));
    match nest.kids.get(&i) {
        Some(kids) => {
            let title = mermaid_escape(t.name.as_deref().unwrap_or(&t.slug));
            let _ = writeln!(out, "{pad}subgraph g{i} [\"{title}\"]");
            let _ = writeln!(out, "{pad}  {node}");
            for &k in kids {
                mermaid_node(g, nest, k, depth + 1, out);
            }
            let _ = writeln!(out, "{pad}end");
        }
        None => {
            let _ = writeln!(out, "{pad}{node}");
        }
    }
}

/// The graph as Graphviz DOT.
pub fn dot(g: &Graph) -> String {
    let mut out = String::from(
        "digraph cairn {\n  rankdir=RL;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n  edge [color=\"#555555\"];\n",
    );
    let nest = nesting(g);
    for &r in &nest.roots {
        dot_node(g, &nest, r, 1, &mut out);
    }
    let index = slug_index(g);
    for e in &g.edges {
        if let (Some(a), Some(b)) = (index.get(e.from.as_str()), index.get(e.to.as_str())) {
            let _ = writeln!(out, "  t{a} -> t{b};");
        }
    }
    out.push_str("}\n");
    out
}

fn dot_node(g: &Graph, nest: &Nesting, i: usize, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    let t = &g.tasks[i];
    let (fill, stroke, color) = status_colours(&t.status);
    let label: Vec<String> = label_lines(t).iter().map(|l| dot_escape(l)).collect();
    let width = if t.ready { 3 } else { 1 };
    let style = if t.status == "abandoned" {
        "rounded,filled,dashed"
    } else {
        "rounded,filled"
    };
    let node = format!(
        "t{i} [label=<{}>, fillcolor=\"{fill}\", color=\"{stroke}\", fontcolor=\"{color}\", penwidth={width}, style=\"{style}\"];",
        label.join("<br/>")
    );
    match nest.kids.get(&i) {
        Some(kids) => {
            let title = dot_escape(t.name.as_deref().unwrap_or(&t.slug));
            let _ = writeln!(out, "{pad}subgraph cluster_{i} {{");
            let _ = writeln!(out, "{pad}  label=<{title}>;");
            let _ = writeln!(out, "{pad}  style=\"rounded\";");
            let _ = writeln!(out, "{pad}  color=\"#999999\";");
            let _ = writeln!(out, "{pad}  {node}");
            for &k in kids {
                dot_node(g, nest, k, depth + 1, out);
            }
            let _ = writeln!(out, "{pad}}}");
        }
        None => {
            let _ = writeln!(out, "{pad}{node}");
        }
    }
}

/// The graph as pretty JSON: `{"tasks": [...], "edges": [...]}`.
pub fn json(g: &Graph) -> String {
    serde_json::to_string_pretty(g).unwrap_or_else(|_| "{}".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Board hostile pass: a name holding U+FFFF made `dot -Tsvg` refuse
    /// the whole plan, and a bidi override reversed the text around it.
    #[test]
    fn noncharacters_and_bidi_controls_are_shown_not_passed() {
        assert_eq!(dot_escape("a \u{FFFF} b"), "a \u{FFFD} b");
        assert_eq!(
            dot_escape("x\u{202E}evil\u{202C}"),
            "x\\u{202e}evil\\u{202c}"
        );
        assert_eq!(dot_escape("zero\u{200B}width"), "zero\\u{200b}width");
        assert_eq!(mermaid_escape("x\u{202E}y"), "x#92;u#123;202e#125;y");
        assert_eq!(mermaid_escape("\u{FDD0}"), "#65533;");
        assert_eq!(dot_escape("plain é"), "plain é");
    }
}
