//! `cairn serve` (MCP over stdio) and `cairn call TOOL '{json}'` (one tool
//! through the registry) — spec/mcp.md "Serving", "Tools are thin wrappers".

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::call_args::{call_arguments, unknown_tool};
use super::context::clock;
use super::out::{emit, emit_err};
use crate::mcp::http::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_SESSIONS, HttpOptions, serve_http,
};
use crate::mcp::http_tokens;
use crate::mcp::serve::{ServeOptions, serve};
use crate::session::Capability;
use crate::store::pg::{PgStore, PgTarget};
use crate::store::{Db, Store, location};
use crate::tools::{ToolCtx, call::call, find};
use crate::tq::engine::Engine;

/// The HTTP flags of `cairn serve` (spec/mcp.md "Wave 2: one server for a
/// team"; docs/connect.md).
#[derive(Debug, Clone, Args)]
pub struct HttpArgs {
    /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio
    /// (ADDR is HOST:PORT, e.g. 127.0.0.1:8765; port 0 picks one).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Serve without bearer tokens (only with a loopback ADDR).
    #[arg(long, requires = "http")]
    pub no_auth: bool,
    /// Also accept this host name in Host and Origin (repeatable; loopback
    /// names are always accepted). Use the public name behind a proxy.
    #[arg(long, value_name = "NAME", requires = "http")]
    pub allow_host: Vec<String>,
    /// At most this many concurrent MCP sessions; further ones get 503.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_SESSIONS, requires = "http")]
    pub max_sessions: usize,
    /// Milliseconds a client has to send a request's headers (default
    /// 10000); hidden from --help, see docs/connect.md "Sessions and limits".
    #[arg(long, hide = true, env = "CAIRN_HTTP_HEADER_TIMEOUT_MS", value_name = "MS",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_ms: Option<u64>,
    /// Milliseconds a client has to send a POST body (default 30000);
    /// hidden from --help.
    #[arg(long, hide = true, env = "CAIRN_HTTP_BODY_TIMEOUT_MS", value_name = "MS",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout_ms: Option<u64>,
    /// The most connections open at once (default: from the descriptor
    /// limit); hidden from --help.
    #[arg(long, hide = true, env = "CAIRN_HTTP_MAX_CONNECTIONS", value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,
    /// Hand out session ids as NAME.ID, so a load balancer can route a
    /// session to this server by its Mcp-Session-Id prefix (docs/team.md;
    /// with --http only: stdio has no session ids)
    #[arg(long, env = "CAIRN_ROUTE_ID", value_name = "NAME")]
    pub route_id: Option<String>,
    /// Fence the text agents and people wrote (descriptions, observations,
    /// metadata values, ...) in tool texts as quoted data between
    /// NOTE-<nonce> and END-<nonce> lines. Always on with --http.
    #[arg(long)]
    pub fence: bool,
}

/// `cairn token ...`.
#[derive(Debug, Clone, Subcommand)]
pub enum TokenAction {
    /// Create a token for NAME and print it once (only its hash is kept).
    Create {
        /// Who holds it: an agent or a reviewer (letters, digits, . _ -).
        name: String,
        /// Its capabilities: a comma list of read, observe, write.
        #[arg(long, default_value = "read,observe,write", value_name = "CAPS")]
        grant: String,
    },
    /// List the tokens: name, grants, creation time.
    List {
        #[command(flatten)]
        out: super::verbs::JsonFlag,
    },
    /// Revoke NAME's token; servers refuse it from the next request on.
    Revoke {
        /// The token's name.
        name: String,
    },
}

/// `cairn token create|list|revoke` on the tokens table of the resolved
/// store (after moving an old side file into it, once).
/// `create` prints the token alone on stdout (and a reminder on stderr).
pub(super) fn token_cmd(
    flag: Option<&Path>,
    action: &TokenAction,
    pg: Option<&PgTarget>,
) -> anyhow::Result<ExitCode> {
    let src = match pg {
        Some(t) => http_tokens::TokenSource::pg(t),
        None => {
            let loc = location::resolve_from_env(flag)?;
            http_tokens::TokenSource::sqlite(&loc.db)?
        }
    };
    match action {
        TokenAction::Create { name, grant } => {
            let token = src.create(name, grant)?;
            emit(&token)?;
            emit_err(&format!(
                "Token for {name} created; it is shown only this once. Clients send it as Authorization: Bearer TOKEN."
            ));
        }
        TokenAction::List { out } if out.json => {
            // Name, grants and creation time; never the hash.
            let list: Vec<serde_json::Value> = src
                .load()?
                .tokens
                .iter()
                .map(|t| serde_json::json!({ "name": t.name, "grants": t.grants, "created": t.created }))
                .collect();
            emit(&serde_json::to_string_pretty(&list)?)?;
        }
        TokenAction::List { .. } => {
            emit(&http_tokens::list_text(&src.load()?))?;
        }
        TokenAction::Revoke { name } => {
            src.revoke(name)?;
            emit(&format!("Revoked the token {name}."))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

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

/// Serves until stdin closes (stdio) or until SIGINT/SIGTERM (`--http`);
/// exit 0. Errors: a store that cannot be opened, a failed MCP session, bad
/// HTTP options (clap refuses an unknown capability).
pub(super) fn serve_cmd(
    flag: Option<&Path>,
    grant: &[Grant],
    http: &HttpArgs,
    pg: Option<&PgTarget>,
) -> anyhow::Result<ExitCode> {
    let grants = grant.iter().map(|&g| Capability::from(g)).collect();
    if let Some(t) = pg
        && http.http.is_none()
    {
        serve(ServeOptions {
            scratch: false,
            pg: Some(t.clone()),
            db: PathBuf::new(),
            root: std::env::current_dir()?,
            grants,
            follow_roots: false,
            agent: super::identity::flag().or_else(super::identity::env_agent),
            fence: http.fence,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let loc = match pg {
        Some(_) => location::Location {
            db: PathBuf::new(),
            project: std::env::current_dir()?,
            rule: location::Rule::Flag,
        },
        None => location::resolve_from_env(flag)?,
    };
    let agent = super::identity::flag();
    if let Some(addr) = &http.http {
        if agent.is_some() {
            super::out::emit_err(
                "error: --as names the stdio session; over --http each session is named by its token.",
            );
            return Ok(ExitCode::from(2));
        }
        serve_http(HttpOptions {
            addr: addr.clone(),
            db: loc.db,
            pg: pg.cloned(),
            root: loc.project,
            grants,
            no_auth: http.no_auth,
            allow_hosts: http.allow_host.clone(),
            max_sessions: http.max_sessions,
            header_timeout: http
                .header_timeout_ms
                .map_or(DEFAULT_HEADER_TIMEOUT, Duration::from_millis),
            body_timeout: http
                .body_timeout_ms
                .map_or(DEFAULT_BODY_TIMEOUT, Duration::from_millis),
            max_connections: http
                .max_connections
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            local_board: None,
            route_id: http.route_id.clone(),
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let follow_roots = !matches!(loc.rule, location::Rule::Flag | location::Rule::Env);
    // The stdio session is named as the verbs' agent is: --as, else
    // CAIRN_AGENT (issue 27: it was ignored here), else the client's name.
    let agent = agent.or_else(super::identity::env_agent);
    let scratch = loc.rule == location::Rule::GlobalScratch;
    serve(ServeOptions {
        scratch,
        pg: None,
        db: loc.db,
        root: loc.project,
        grants,
        follow_roots,
        agent,
        fence: http.fence,
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `tool` with `words` (one JSON object, or `key=value` words) in a
/// session whose current task is the verbs' (`cairn.db.current`, saved
/// back when the tool moves it), or `current` when given (then nothing is
/// saved), and prints its text on
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
    pg: Option<&PgTarget>,
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
    if let Some(t) = pg {
        // PostgreSQL: no file beside a cairn.db keeps the verbs' current
        // task; --current names one for this call.
        let db = Db::Pg(Box::new(PgStore::open(t)?));
        let mut session = crate::cli::identity::session();
        if let Some(slug) = current {
            session.switch_to(crate::store::slug::strip_depot(slug.trim()));
        }
        let engine = Engine::new().with_clock(clock()).with_test_hooks();
        let mut ctx = ToolCtx {
            store: db.r(),
            session: &mut session,
            engine: &engine,
            root: std::env::current_dir()?,
            clock: clock(),
        };
        let out = call(&mut ctx, tool, &json);
        return finish_call(&out);
    }
    let loc = location::resolve_from_env(flag)?;
    let store = Store::open(&loc.db)
        .with_context(|| format!("cannot open the store at {}", loc.db.display()))?;
    let mut session = crate::cli::identity::session();
    // The verbs' current task (issue 27), unless --current gives one.
    let loaded = super::context::load_current(&loc.db);
    match current {
        Some(slug) => session.switch_to(crate::store::slug::strip_depot(slug.trim())),
        None => session.current = loaded.clone(),
    }
    let engine = Engine::new().with_clock(clock()).with_test_hooks();
    let mut ctx = ToolCtx {
        store: (&store).into(),
        session: &mut session,
        engine: &engine,
        root: loc.project,
        clock: clock(),
    };
    let out = call(&mut ctx, tool, &json);
    if current.is_none() && session.current != loaded {
        super::context::store_current(&loc.db, session.current.as_deref())?;
    }
    finish_call(&out)
}

/// Prints a call's output and maps its code to the exit status.
fn finish_call(out: &crate::tools::call::CallResult) -> anyhow::Result<ExitCode> {
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
