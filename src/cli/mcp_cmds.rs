//! `cairn serve` (MCP over stdio) and `cairn call TOOL '{json}'` (one tool
//! through the registry) — spec/mcp.md "Serving", "Tools are thin wrappers".

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use super::call_args::{call_arguments, unknown_tool};
use super::context::clock;
use super::out::{emit, emit_err};
use crate::mcp::serve::{ServeOptions, serve};
use crate::session::{Capability, Session};
use crate::store::{Store, location};
use crate::tools::{ToolCtx, call::call, find};
use crate::tq::engine::Engine;

/// A capability on the command line (`--grant read,observe,write`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Grant {
    /// The read tools.
    Read,
    /// observe.
    Observe,
    /// The write tools.
    Write,
}

impl From<Grant> for Capability {
    fn from(g: Grant) -> Capability {
        match g {
            Grant::Read => Capability::Read,
            Grant::Observe => Capability::Observe,
            Grant::Write => Capability::Write,
        }
    }
}

/// Serves until stdin closes; exit 0. Errors: a store that cannot be
/// opened, a failed MCP session (clap refuses an unknown capability).
pub(super) fn serve_cmd(flag: Option<&Path>, grant: &[Grant]) -> anyhow::Result<ExitCode> {
    let grants = grant.iter().map(|&g| Capability::from(g)).collect();
    let loc = location::resolve_from_env(flag)?;
    serve(ServeOptions {
        db: loc.db,
        root: loc.project,
        grants,
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `tool` with `words` (one JSON object, or `key=value` words) in a
/// fresh session (current task `current`, if given) and prints its text on
/// stdout (protocol faults on stderr). Exit 0 on success, 1 when the tool
/// returned an error or the arguments did not fit, 2 for an unknown tool
/// (`Unknown tool NAME; did you mean NEAREST?`) or unreadable `key=value`
/// words. A reader that went away (`| head -1`) is not an error: the text
/// is dropped quietly and the exit status is still the tool's.
pub(super) fn call_cmd(
    flag: Option<&Path>,
    tool: &str,
    words: &[String],
    current: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let Some(spec) = find(tool) else {
        emit_err(&unknown_tool(tool));
        return Ok(ExitCode::from(2));
    };
    let json = match call_arguments(spec, words) {
        Ok(j) => j,
        Err(msg) => {
            emit_err(&format!("error: {msg}"));
            return Ok(ExitCode::from(2));
        }
    };
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
        clock: clock(),
    };
    let out = call(&mut ctx, tool, &json);
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
