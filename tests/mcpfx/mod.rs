//! Shared by the MCP client tests (`mcp_contract.rs`, `mcp_stdio.rs`,
//! `mcp_http.rs`, `mcp_subscribe.rs`, ...): one `tools/call` through rmcp's
//! client, returning the joined text blocks and whether the result was
//! `isError: true`; a client over stdio or Streamable HTTP; and the story of
//! seed 000, which both transports tell the same way.
#![allow(dead_code)] // each test file uses a part

use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

/// Calls `tool` with the JSON object `args`; `(text, is_error)`.
pub async fn call_tool<H: ClientHandler>(
    c: &RunningService<RoleClient, H>,
    tool: &str,
    args: Value,
) -> (String, bool) {
    let res = c
        .call_tool(
            CallToolRequestParams::new(tool.to_string())
                .with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let text = res
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("");
    (unfence(&text), res.is_error == Some(true))
}

/// `line` without its fenced byline (` — by session S, YYYY-MM-DD HH:MM
/// UTC` or ` — by session S` at the end; docs/mcp.md "Who wrote it and
/// when"), so the seed's strings can be compared.
fn without_byline(line: &str) -> &str {
    match line.rfind(" — by session ") {
        Some(at) if !line[at..].contains('»') => &line[..at],
        _ => line,
    }
}

/// A fenced tool text (HTTP fences by default; docs/mcp.md "Fenced text")
/// read back as the unfenced one, so the seed's strings can be compared
/// over either transport: the `NOTE-<nonce>` and `END-<nonce>` lines
/// dropped, bylines dropped, `«` `»` removed, `\u{hex}` escapes decoded. Any other text is
/// returned as it is. (`tests/mcp_fence.rs` checks the fenced form itself.)
pub fn unfence(text: &str) -> String {
    let Some(first) = text.strip_prefix("NOTE-") else {
        return text.to_string();
    };
    let nonce = first.split(' ').next().unwrap_or("");
    let lines: Vec<&str> = text.lines().collect();
    if nonce.is_empty() || lines.last() != Some(&format!("END-{nonce}").as_str()) {
        return text.to_string();
    }
    let body = lines[1..lines.len() - 1]
        .iter()
        .map(|l| without_byline(l))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::with_capacity(body.len());
    let mut rest = body.as_str();
    while let Some(c) = rest.chars().next() {
        if c == '«' || c == '»' {
            rest = &rest[c.len_utf8()..];
            continue;
        }
        if let Some(esc) = rest.strip_prefix("\\u{")
            && let Some(end) = esc.find('}')
            && let Some(ch) = u32::from_str_radix(&esc[..end], 16)
                .ok()
                .and_then(char::from_u32)
        {
            out.push(ch);
            rest = &esc[end + 1..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A client session with no handler of its own (stdio or HTTP).
pub struct Client(pub RunningService<RoleClient, ()>);

impl Client {
    /// `cairn serve ARGS` over stdio in `dir` (no `CAIRN_DB`).
    pub async fn spawn(dir: &Path, args: &[&str]) -> Client {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.arg("serve")
            .args(args)
            .current_dir(dir)
            .env_remove("CAIRN_DB");
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Client(().serve(transport).await.unwrap())
    }

    /// A Streamable HTTP session at `url`, with a bearer `token` if given.
    pub async fn connect(url: &str, token: Option<&str>) -> Client {
        let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.to_string());
        if let Some(t) = token {
            cfg = cfg.auth_header(t.to_string());
        }
        let transport = StreamableHttpClientTransport::from_config(cfg);
        Client(().serve(transport).await.unwrap())
    }

    /// `(text, is_error)` of one call.
    pub async fn call(&self, tool: &str, args: Value) -> (String, bool) {
        call_tool(&self.0, tool, args).await
    }

    /// The text of a call that must succeed.
    pub async fn ok(&self, tool: &str, args: Value) -> String {
        let (text, err) = self.call(tool, args).await;
        assert!(!err, "{tool} failed: {text}");
        text
    }

    /// The text of a call that must fail (`isError: true`).
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let (text, err) = self.call(tool, args).await;
        assert!(err, "{tool} succeeded: {text}");
        text
    }

    /// The listed tool names.
    pub async fn tool_names(&self) -> Vec<String> {
        self.0
            .list_all_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    /// Ends the session.
    pub async fn close(self) {
        self.0.cancel().await.unwrap();
    }
}

/// Today's UTC date, `YYYY-MM-DD` (slugs start with it).
pub fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// Where the seed story left the plan: its three slugs, the handoff note's
/// path and the project root (canonical).
pub struct Story {
    pub d: String,
    pub tune: String,
    pub prefix: String,
    pub token: String,
    pub note: String,
    pub root: PathBuf,
}

/// The story of seed 000 on a fresh project at `dir`, over session `c`:
/// a plan, a phase that waits on a fix, the frontier moving, search,
/// timeline paging, a handoff. Every answer is asserted exactly.
pub async fn seed_story(c: &Client, dir: &Path) -> Story {
    let d = today();
    let tune = format!("{d}-tune-search-ranking");
    let prefix = format!("{d}-add-prefix-query-support");
    let token = format!("{d}-tokenizer-fix");
    let root = dir.canonicalize().unwrap();
    assert_eq!(c.tool_names().await.len(), 14);
    assert_eq!(
        c.err("task_bootstrap", json!({})).await,
        "No task to bootstrap; pass task_id or select a task first."
    );
    assert_eq!(
        c.ok("task_create", json!({"name": "tune search ranking"}))
            .await,
        format!("Created {tune}.")
    );
    assert_eq!(
        c.ok(
            "observe",
            json!({"text": "bm25 ranking confirmed against t/cairn-search.lisp"})
        )
        .await,
        format!("Observed on {tune}.")
    );
    assert_eq!(
        c.ok("task_fork", json!({"name": "add prefix query support"}))
            .await,
        format!("Forked {prefix} from {tune} (phase-of).")
    );
    assert_eq!(
        c.ok("task_create", json!({"name": "tokenizer fix"})).await,
        format!("Created {token}.")
    );
    assert_eq!(
        c.ok(
            "task_link",
            json!({"target_id": token, "edge_type": "depends-on"})
        )
        .await,
        format!("Linked {prefix} -> {token} (depends-on).")
    );
    assert_eq!(
        c.ok(
            "task_set_metadata",
            json!({"key": "acceptance", "value": "prefix queries return ranked snippets"})
        )
        .await,
        format!("Set acceptance on {prefix}.")
    );
    assert_eq!(
        c.ok(
            "observe",
            json!({"text": "prefix queries need a query parser change in src/search.rs:45-78"})
        )
        .await,
        format!("Observed on {prefix}.")
    );
    // The frontier moves: the phase waits on the tokenizer fix until it completes.
    let frontier = json!({"query": "(query \"plan-frontier\")"});
    assert_eq!(
        c.ok("task_query", frontier.clone()).await,
        "No matching tasks."
    );
    assert_eq!(
        c.ok(
            "task_update_status",
            json!({"status": "completed", "task_id": token})
        )
        .await,
        format!("{token} is now completed.")
    );
    assert_eq!(
        c.ok("task_query", frontier).await,
        format!(
            "1 task:\n- {prefix} (active) obs=1 edges=2\n    acceptance: prefix queries return ranked snippets"
        )
    );
    assert_eq!(
        c.ok(
            "task_query",
            json!({"query": "(-> (current) (:back :phase-of) (:ids))"})
        )
        .await,
        format!("1 task:\n- {tune}")
    );
    assert_eq!(
        c.err(
            "task_query",
            json!({"query": "(-> (current) (:set-status! \"completed\"))"})
        )
        .await,
        "Query error: Mutations need the task_query_write surface; task_query is read-only."
    );
    assert_eq!(
        c.ok("task_search", json!({"query": "prefix query*"})).await,
        format!(
            "1. [{prefix}]  ({d})\n    [prefix] queries need a [query] parser change in src/search.rs:45-78"
        )
    );
    // timeline with paging: the prefix phase has create(3), link(6), set-metadata(7), observation(8).
    let page1 = c.ok("timeline", json!({"limit": 2})).await;
    assert_eq!(
        page1,
        format!(
            "{prefix} — last 2 events\n  8  observation  prefix queries need a query parser change in src/search.rs:45-78\n  7  task.set-metadata  acceptance = prefix queries return ranked snippets"
        )
    );
    let page2 = c.ok("timeline", json!({"limit": 2, "before_seq": 7})).await;
    assert_eq!(
        page2,
        format!(
            "{prefix} — last 2 events\n  6  task.link  → {token} (depends-on)\n  3  task.create"
        )
    );
    let handoff = c
        .ok(
            "handoff",
            json!({"summary": "prefix queries land; tokenizer fix is next"}),
        )
        .await;
    let lead = format!(
        "Handoff scaffolded for {prefix} at {}/.cairn/tasks/{prefix}/",
        root.display()
    );
    assert!(handoff.starts_with(&lead), "{handoff}");
    assert!(
        handoff.ends_with("_prefix-queries-land-tokenizer-fix-is-next.md"),
        "{handoff}"
    );
    let note = handoff.trim_start_matches(&format!("Handoff scaffolded for {prefix} at "));
    let body = std::fs::read_to_string(note).unwrap();
    assert!(
        body.starts_with(&format!("---\ntask: {prefix}\n")),
        "{body}"
    );
    assert!(
        body.ends_with("## Recent work\n\n## Next steps\n"),
        "{body}"
    );
    Story {
        d,
        tune,
        prefix,
        token,
        note: note.to_string(),
        root,
    }
}

/// The story's end on a NEW session `c2`: no current task until bootstrap
/// names one, and bootstrap shows the phase with its handoff.
pub async fn seed_story_resume(c2: &Client, s: &Story) {
    let (tune, prefix, token, note, root) = (&s.tune, &s.prefix, &s.token, &s.note, &s.root);
    assert_eq!(
        c2.err("task_get", json!({})).await,
        "No current task; create or select one first."
    );
    let boot = c2.ok("task_bootstrap", json!({"task_id": prefix})).await;
    let rel = note.trim_start_matches(&format!("{}/", root.display()));
    let digest = cairn::tools::render::one_line(
        &format!("Handoff: prefix queries land; tokenizer fix is next → {rel}"),
        140,
    );
    assert_eq!(
        boot,
        format!(
            "{prefix}  [active]\n  add prefix query support\n  parent: {tune}\n  edges:\n    depends-on {token}\n  metadata:\n    acceptance = prefix queries return ranked snippets\n  recent:\n    - {digest}\n    - prefix queries need a query parser change in src/search.rs:45-78\n  handoffs:\n    - prefix queries land; tokenizer fix is next ({rel})"
        )
    );
    assert!(
        c2.ok("task_get", json!({}))
            .await
            .starts_with(&format!("{prefix}  [active]"))
    );
}
