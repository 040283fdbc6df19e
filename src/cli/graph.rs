//! `cairn graph [SLUG] [--all] [--format mermaid|dot|json]` (issue 25;
//! docs/board.md): the plan as a graph for a pull request or a doc. Without
//! SLUG the current task's plan (its farthest parent and everything under
//! it), or every live plan when there is no current task; `--all` every
//! live plan. Reads only ([`crate::board::graph::collect`]); the formats
//! are [`crate::board::export`]'s.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::context::Cx;
use super::out::emit;
use super::views::fail;
use crate::board::export;
use crate::board::graph::{Scope, collect, plan_root};

/// The formats of `cairn graph`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum GraphFormat {
    /// A Mermaid flowchart (renders in Markdown on code hosts).
    #[default]
    Mermaid,
    /// Graphviz DOT (`dot -Tsvg`).
    Dot,
    /// `{"tasks": [...], "edges": [...]}`.
    Json,
}

/// `cairn graph [SLUG] [--all] [--format F]`.
#[derive(Debug, Args)]
pub struct GraphArgs {
    /// The plan: this task and its phases (default: the current task's plan).
    #[arg(value_parser = super::verbs::slug_arg, conflicts_with = "all")]
    pub slug: Option<String>,
    /// Every live plan (each open, active or blocked task without a parent, with its phases).
    #[arg(long)]
    pub all: bool,
    /// The output format.
    #[arg(long, value_enum, default_value = "mermaid", value_name = "FORMAT")]
    pub format: GraphFormat,
}

/// `cairn graph`: an unknown SLUG is `No task SLUG.` (exit 1).
pub(super) fn graph_cmd(flag: Option<&Path>, a: &GraphArgs) -> anyhow::Result<ExitCode> {
    let cx = Cx::open_read(flag)?;
    let store = cx.store.r();
    let scope = match (&a.slug, a.all) {
        (Some(slug), _) => {
            let bare = crate::store::slug::strip_depot(slug.trim()).to_string();
            if !store.task_exists(&bare)? {
                return fail(&format!("No task {bare}."));
            }
            Scope::Plan(bare)
        }
        (None, true) => Scope::AllLive,
        (None, false) => match &cx.session.current {
            Some(cur) if store.task_exists(cur)? => match plan_root(store, cur) {
                Ok(root) => Scope::Plan(root),
                Err(e) => return fail(&e),
            },
            _ => Scope::AllLive,
        },
    };
    let graph = match collect(&cx.engine, store, &cx.session, &scope) {
        Ok(g) => g,
        Err(e) => return fail(&e),
    };
    let text = match a.format {
        GraphFormat::Mermaid => export::mermaid(&graph),
        GraphFormat::Dot => export::dot(&graph),
        GraphFormat::Json => export::json(&graph),
    };
    emit(text.trim_end())?;
    Ok(ExitCode::SUCCESS)
}

/// `cairn board [--open] [--port N]`.
#[derive(Debug, Args)]
pub struct BoardArgs {
    /// Start the system's browser on the one-time link.
    #[arg(long)]
    pub open: bool,
    /// The loopback port to serve on (default: a free one).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub port: u16,
}

/// `cairn board`: the board on 127.0.0.1 only, for the browser that opens
/// the one-time link it prints (docs/board.md). Serves until Ctrl-C.
pub(super) fn board_cmd(
    flag: Option<&Path>,
    a: &BoardArgs,
    pg: Option<&crate::store::pg::PgTarget>,
) -> anyhow::Result<ExitCode> {
    use crate::mcp::http::{
        DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_SESSIONS, HttpOptions,
        LocalBoard, serve_http,
    };
    let (db, root) = match pg {
        Some(_) => (std::path::PathBuf::new(), std::env::current_dir()?),
        None => {
            let loc = crate::store::location::resolve_from_env(flag)?;
            (loc.db, loc.project)
        }
    };
    serve_http(HttpOptions {
        addr: format!("127.0.0.1:{}", a.port),
        db,
        pg: pg.cloned(),
        root,
        grants: [crate::session::Capability::Read].into_iter().collect(),
        no_auth: true,
        allow_hosts: Vec::new(),
        max_sessions: DEFAULT_MAX_SESSIONS,
        header_timeout: DEFAULT_HEADER_TIMEOUT,
        body_timeout: DEFAULT_BODY_TIMEOUT,
        max_connections: None,
        local_board: Some(LocalBoard { open: a.open }),
        route_id: None,
    })?;
    Ok(ExitCode::SUCCESS)
}
