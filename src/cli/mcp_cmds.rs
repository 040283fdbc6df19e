//! `cairn serve` (MCP over stdio) and `cairn call TOOL '{json}'` (one tool
//! through the registry) — spec/mcp.md "Serving", "Tools are thin wrappers".

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use super::out::{emit, emit_err};
use crate::mcp::serve::{ServeOptions, serve};
use crate::session::{Session, parse_grants};
use crate::store::{Store, location};
use crate::tools::{Clock, ToolCtx, call::call};
use crate::tq::engine::Engine;

/// Serves until stdin closes; exit 0. Errors: a bad `--grant` list, a store
/// that cannot be opened, a failed MCP session.
pub(super) fn serve_cmd(flag: Option<&Path>, grant: &str) -> anyhow::Result<ExitCode> {
    let grants = parse_grants(grant).map_err(anyhow::Error::msg)?;
    let loc = location::resolve_from_env(flag)?;
    let follow_roots = !matches!(loc.rule, location::Rule::Flag | location::Rule::Env);
    serve(ServeOptions {
        db: loc.db,
        root: loc.project,
        grants,
        follow_roots,
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `tool` with `json` in a fresh session (current task `current`, if
/// given) and prints
/// its text on stdout (protocol faults on stderr). Exit 0 on success, 1 when
/// the tool returned an error or the call was malformed. A reader that went
/// away (`| head -1`) is not an error: the text is dropped quietly and the
/// exit status is still the tool's.
pub(super) fn call_cmd(
    flag: Option<&Path>,
    tool: &str,
    json: &str,
    current: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let loc = location::resolve_from_env(flag)?;
    let store = Store::open(&loc.db)
        .with_context(|| format!("cannot open the store at {}", loc.db.display()))?;
    let mut session = Session::new();
    if let Some(slug) = current {
        session.switch_to(crate::store::slug::strip_depot(slug.trim()));
    }
    let engine = Engine::new();
    let mut ctx = ToolCtx {
        store: &store,
        session: &mut session,
        engine: &engine,
        root: loc.project,
        clock: Clock::System,
    };
    let out = call(&mut ctx, tool, json);
    if !out.stdout.is_empty() {
        emit(&out.stdout)?;
    }
    if !out.stderr.is_empty() {
        emit_err(&out.stderr);
    }
    Ok(if out.code == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
