//! Tasks and views as MCP resources (spec/tq.md §9 "Changes"; docs/mcp.md
//! "Resources and subscriptions"): the two templates `cairn://tasks/{slug}`
//! and `cairn://views/{name}`, parsing a resource URI into what it names,
//! and the completion of `{slug}` and `{name}`. Reading goes through the
//! tools themselves (`task_get`, `task_query`), so a resource reads exactly
//! what the tool returns; the adapter in [`super::server`] wires these to
//! `resources/templates/list`, `resources/read` and `completion/complete`.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ReadResourceResponse,
    ReadResourceResult, Reference, ResourceContents, ResourceTemplate,
};
use serde_json::json;

use super::server::CairnServer;
use super::titles::template_title;
use crate::store::slug::strip_depot;
use crate::tq::Surface;
use crate::tq::render::Output;

/// The MIME type of a task or view resource: the tools' plain text.
pub const TEXT_MIME: &str = "text/plain";
/// The URI template of a task: reading returns its `task_get` block.
pub const TASK_TEMPLATE: &str = "cairn://tasks/{slug}";
/// The URI template of a view: reading returns the text of `(query "NAME")`.
pub const VIEW_TEMPLATE: &str = "cairn://views/{name}";
/// The prefix of a task URI.
pub const TASK_PREFIX: &str = "cairn://tasks/";
/// The prefix of a view URI.
pub const VIEW_PREFIX: &str = "cairn://views/";
/// The completion argument of [`TASK_TEMPLATE`].
pub const SLUG_ARG: &str = "slug";
/// The completion argument of [`VIEW_TEMPLATE`].
pub const NAME_ARG: &str = "name";
/// At most this many values in one completion (the MCP limit).
pub const MAX_COMPLETIONS: usize = CompletionInfo::MAX_VALUES;
/// The refusal of `completion/complete` to a session without `read`.
pub const COMPLETION_NEEDS_READ: &str =
    "completion/complete needs the cairn/read capability, which this server was not granted.";
/// At most this many characters of a URI are quoted back in an error.
pub const MAX_URI_ECHO: usize = 200;

/// What a resource URI names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// `cairn://tasks/SLUG`: the bare slug (percent-decoded, depot prefix
    /// stripped).
    Task(String),
    /// `cairn://views/NAME`: the view name (percent-decoded).
    View(String),
}

/// The target of `uri`, or `None` when it is not a task or view URI (wrong
/// scheme or path, an empty or undecodable name, a raw `/` inside it, a
/// slug that is empty once its depot prefix is stripped, or an encoded `/`
/// in a slug). A view name may hold an encoded `/` (`team%2Fready`), as a
/// client expanding the template from a completed `team/ready` writes it.
pub fn parse_uri(uri: &str) -> Option<Target> {
    let decode = |rest: &str| -> Option<String> {
        let name = percent_encoding::percent_decode_str(rest)
            .decode_utf8()
            .ok()?
            .into_owned();
        let ok = !name.trim().is_empty() && !rest.contains('/');
        ok.then_some(name)
    };
    if let Some(rest) = uri.strip_prefix(TASK_PREFIX) {
        let slug = decode(rest)?;
        let bare = strip_depot(slug.trim()).trim();
        (!bare.is_empty() && !bare.contains('/')).then(|| Target::Task(bare.to_string()))
    } else if let Some(rest) = uri.strip_prefix(VIEW_PREFIX) {
        Some(Target::View(decode(rest)?))
    } else {
        None
    }
}

/// The TQ text that reads view `name`: `(query "NAME")`, with `"` and `\`
/// escaped so any name stays one string literal.
pub fn view_query(name: &str) -> String {
    let mut q = String::from("(query \"");
    for c in name.chars() {
        if c == '"' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q.push_str("\")");
    q
}

/// The two resource templates, titled ([`template_title`]), [`TEXT_MIME`].
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(TASK_TEMPLATE, "task")
            .with_title(template_title("task"))
            .with_description(
                "A task's state: exactly what task_get returns for SLUG. Subscribe to hear when an event touching the task commits.",
            )
            .with_mime_type(TEXT_MIME),
        ResourceTemplate::new(VIEW_TEMPLATE, "view")
            .with_title(template_title("view"))
            .with_description(
                "A named view's answer (built-in or user): the text of (query \"NAME\") on the read surface. Subscribe to hear when the answer changes.",
            )
            .with_mime_type(TEXT_MIME),
    ]
}

/// `uri` cut to [`MAX_URI_ECHO`] characters for an error message.
pub fn shown_uri(uri: &str) -> String {
    super::logging::clip(uri, MAX_URI_ECHO)
}

/// A completion answer: the first [`MAX_COMPLETIONS`] of `values`, `total`
/// the number that matched (saturating at `u32::MAX`), `hasMore` when some
/// were left out.
pub fn completion(values: Vec<String>, total: usize) -> CompletionInfo {
    let shown: Vec<String> = values.into_iter().take(MAX_COMPLETIONS).collect();
    let more = total > shown.len();
    let total = Some(u32::try_from(total).unwrap_or(u32::MAX));
    // At most MAX_COMPLETIONS values by construction, so this never fails.
    CompletionInfo::with_pagination(shown, total, more).unwrap_or_default()
}

/// The names among `names` that start with `prefix`, sorted and
/// deduplicated, with how many matched.
pub fn names_with_prefix(mut names: Vec<String>, prefix: &str) -> (Vec<String>, usize) {
    names.retain(|n| n.starts_with(prefix));
    names.sort();
    names.dedup();
    let total = names.len();
    (names, total)
}

/// `Unknown resource URI.` (resource not found; the URI cut to
/// [`MAX_URI_ECHO`] characters).
pub fn unknown_resource(uri: &str) -> McpError {
    McpError::resource_not_found(format!("Unknown resource {}.", shown_uri(uri)), None)
}

impl CairnServer {
    /// The text of `target` as its tool returns it, waiting for a running
    /// call: a task through `task_get`, a view through `task_query` with
    /// [`view_query`] (so the read grant applies as for the tools). Errors:
    /// resource not found with the tool's sentence for an unknown task
    /// (`No task SLUG.`) or view (`Query error: Unknown named query ...`),
    /// invalid params with it for any other failure.
    pub fn read_target(&self, target: &Target) -> Result<String, McpError> {
        let (tool, args, missing) = match target {
            Target::Task(slug) => ("task_get", json!({"task_id": slug}), "No task "),
            Target::View(name) => (
                "task_query",
                json!({"query": view_query(name)}),
                "Unknown named query ",
            ),
        };
        let out = self.call(tool, args)?;
        if !out.is_error {
            Ok(out.text)
        } else if out.text.contains(missing) {
            Err(McpError::resource_not_found(out.text, None))
        } else {
            Err(McpError::invalid_params(out.text, None))
        }
    }

    /// `resources/read` of a task or view URI (on the blocking pool).
    /// Errors: [`unknown_resource`] for any other URI, then as
    /// [`CairnServer::read_target`].
    pub(super) async fn read_target_uri(
        &self,
        uri: &str,
    ) -> Result<ReadResourceResponse, McpError> {
        let target = parse_uri(uri).ok_or_else(|| unknown_resource(uri))?;
        let server = self.clone();
        let text = tokio::task::spawn_blocking(move || server.read_target(&target))
            .await
            .map_err(|_| {
                McpError::internal_error("The read failed; the store is unchanged.", None)
            })??;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type(TEXT_MIME),
        ])
        .into())
    }

    /// `completion/complete`: task slugs for `slug` of [`TASK_TEMPLATE`],
    /// view names (built-in and user, from `(views)`) for `name` of
    /// [`VIEW_TEMPLATE`], by prefix; nothing for any other reference.
    /// Errors: [`COMPLETION_NEEDS_READ`] when the session was not granted
    /// `read` (slugs and view names are what the read tools show).
    pub(super) async fn complete_argument(
        &self,
        request: CompleteRequestParams,
    ) -> Result<CompleteResult, McpError> {
        if !self.grants.contains(&crate::session::Capability::Read) {
            return Err(McpError::invalid_request(COMPLETION_NEEDS_READ, None));
        }
        let Reference::Resource(r) = &request.r#ref else {
            return Ok(CompleteResult::new(completion(Vec::new(), 0)));
        };
        let arg = request.argument.name.as_str();
        let kind = match (r.uri.as_str(), arg) {
            (TASK_TEMPLATE, SLUG_ARG) => SLUG_ARG,
            (VIEW_TEMPLATE, NAME_ARG) => NAME_ARG,
            _ => return Ok(CompleteResult::new(completion(Vec::new(), 0))),
        };
        let prefix = request.argument.value.clone();
        let server = self.clone();
        let job = tokio::task::spawn_blocking(move || {
            let st = server.lock();
            if kind == SLUG_ARG {
                st.store
                    .r()
                    .slugs_with_prefix(&prefix, MAX_COMPLETIONS)
                    .map_err(|e| e.to_string())
            } else {
                let names = match st.engine.run_value_db(
                    st.store.r(),
                    &st.session,
                    "(-> (views) (:ids))",
                    Surface::Read,
                ) {
                    Ok(Output::Ids { ids }) => ids,
                    Ok(_) => Vec::new(),
                    Err(d) => return Err(d.render_plain()),
                };
                Ok(names_with_prefix(names, &prefix))
            }
        });
        let (values, total) = job
            .await
            .map_err(|_| McpError::internal_error("The completion failed.", None))?
            .map_err(|e| McpError::internal_error(e, None))?;
        Ok(CompleteResult::new(completion(values, total)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::read::slugs_with_prefix;

    #[test]
    fn uris_parse_to_targets() {
        assert_eq!(
            parse_uri("cairn://tasks/2026-12-01-fix-ci"),
            Some(Target::Task("2026-12-01-fix-ci".into()))
        );
        assert_eq!(
            parse_uri("cairn://tasks/depot:a-b"),
            Some(Target::Task("a-b".into()))
        );
        assert_eq!(
            parse_uri("cairn://views/my%20view"),
            Some(Target::View("my view".into()))
        );
        assert_eq!(
            parse_uri("cairn://views/ready"),
            Some(Target::View("ready".into()))
        );
        assert_eq!(parse_uri("cairn://tasks/"), None);
        assert_eq!(parse_uri("cairn://tasks/a/b"), None);
        assert_eq!(parse_uri("cairn://tasks/a%2Fb"), None);
        assert_eq!(parse_uri("cairn://tasks/:"), None);
        assert_eq!(parse_uri("cairn://tasks/x:"), None);
        assert_eq!(parse_uri("cairn://tasks/%3A"), None);
        assert_eq!(
            parse_uri("cairn://views/team%2Fready"),
            Some(Target::View("team/ready".into()))
        );
        assert_eq!(parse_uri("cairn://views/team/ready"), None);
        assert_eq!(parse_uri("cairn://views/%FF"), None);
        assert_eq!(parse_uri("cairn://prompts/cairn-method"), None);
        assert_eq!(parse_uri("file:///x"), None);
    }

    #[test]
    fn view_names_stay_one_string() {
        assert_eq!(view_query("ready"), "(query \"ready\")");
        assert_eq!(view_query("a\"b\\c"), "(query \"a\\\"b\\\\c\")");
    }

    #[test]
    fn slug_prefixes_are_bound_ranged_and_live_first() {
        use crate::store::{NewEvent, Status, Store};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("c.db")).unwrap();
        let mut events: Vec<NewEvent> = (0..150)
            .map(|i| NewEvent::task_create("s", 1, &format!("t-{i:03}"), None, None))
            .collect();
        events.push(NewEvent::task_create("s", 1, "u-1", None, None));
        events.push(NewEvent::task_create("s", 1, "@cairn", None, None));
        events.push(NewEvent::update_status("s", 2, "t-000", Status::Completed));
        store.write(&events).unwrap();
        let (got, total) = slugs_with_prefix(store.conn(), "t-", MAX_COMPLETIONS).unwrap();
        assert_eq!((got.len(), total), (100, 150));
        assert_eq!((got[0].as_str(), got[99].as_str()), ("t-001", "t-100"));
        let (got, total) = slugs_with_prefix(store.conn(), "t-00", 100).unwrap();
        assert_eq!(total, 10);
        assert_eq!(got.last().map(String::as_str), Some("t-000"));
        let (got, total) = slugs_with_prefix(store.conn(), "", 100).unwrap();
        assert_eq!((got.len(), total), (100, 151));
        let (got, total) = slugs_with_prefix(store.conn(), "depot:u-", 100).unwrap();
        assert_eq!((got, total), (vec!["u-1".to_string()], 1));
        let (got, total) = slugs_with_prefix(store.conn(), "@", 100).unwrap();
        assert_eq!((got.len(), total), (0, 0));
        let (got, total) = slugs_with_prefix(store.conn(), "t-%", 100).unwrap();
        assert_eq!((got.len(), total), (0, 0));
    }

    #[test]
    fn completions_cap_at_100_and_say_so() {
        let many: Vec<String> = (0..150).map(|i| format!("t{i:03}")).collect();
        let c = completion(many, 150);
        assert_eq!(c.values.len(), 100);
        assert_eq!(c.values[99], "t099");
        assert_eq!((c.total, c.has_more), (Some(150), Some(true)));
        let c = completion(vec!["a".into()], 1);
        assert_eq!((c.total, c.has_more), (Some(1), Some(false)));
        let (names, n) = names_with_prefix(
            vec![
                "ready".into(),
                "recent".into(),
                "plan".into(),
                "ready".into(),
            ],
            "re",
        );
        assert_eq!(
            (names, n),
            (vec!["ready".to_string(), "recent".to_string()], 2)
        );
    }
}
