//! The generated section of docs/cli.md: `cairn --help` and each visible
//! subcommand's `--help`, rendered from the same clap definition the binary
//! parses with, so the reference cannot drift from the command line.
//! `tests/cli_docs.rs` fails when the file is stale; `CAIRN_BLESS=1 cargo
//! test --test cli_docs` rewrites it.

use clap::CommandFactory;

use super::Cli;

/// Marker line opening the generated section.
pub const BEGIN: &str =
    "<!-- BEGIN GENERATED: command reference (CAIRN_BLESS=1 cargo test --test cli_docs) -->";
/// Marker line closing the generated section.
pub const END: &str = "<!-- END GENERATED -->";

/// The Markdown of the reference: `### cairn` and `### cairn NAME` per
/// visible subcommand, each followed by its short help (`-h`) as plain text
/// in a fenced block.
pub fn reference_markdown() -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = String::new();
    push(&mut out, "cairn", cmd.clone().render_help().to_string());
    for sub in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
        let title = format!("cairn {}", sub.get_name());
        push(&mut out, &title, sub.clone().render_help().to_string());
    }
    out
}

fn push(out: &mut String, title: &str, help: String) {
    let body: Vec<&str> = help.lines().map(str::trim_end).collect();
    out.push_str(&format!(
        "### `{title}`\n\n```text\n{}\n```\n\n",
        body.join("\n").trim_end()
    ));
}

/// `doc` with the text between [`BEGIN`] and [`END`] replaced by a fresh
/// [`reference_markdown`]; `None` when a marker is missing.
pub fn splice(doc: &str) -> Option<String> {
    let start = doc.find(BEGIN)? + BEGIN.len();
    let end = doc[start..].find(END)? + start;
    Some(format!(
        "{}\n\n{}{}",
        &doc[..start],
        reference_markdown(),
        &doc[end..]
    ))
}
