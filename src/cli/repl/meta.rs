//! The REPL's meta commands (issue 6; docs/cli.md "Meta commands"):
//! `:help`, `:write on|off`, `:sql QUERY`, `:explain QUERY`, `:schema`,
//! `:views`, `:current [SLUG]`, `:quit`.

use super::{Repl, Reply};
use crate::cli::color::for_stdout;
use crate::cli::query::{explain_text, select_current, sql_text};
use crate::cli::views::{schema_rows, schema_tables};
use crate::tq::Surface;

/// The text `:help` prints.
pub const HELP: &str = "\
Type a TQ query and press Enter; a form continues over lines until its parens balance.
Start with (schema), (fields), (edges) or (views): the language describes itself.

  :help               this list
  :write on|off       allow mutations (prompt tq!>) or not (tq>)
  :sql QUERY          the SQL a query compiles to, with its parameters
  :explain QUERY      the SQL, its parameters and SQLite's query plan
  :schema             the vocabulary as tables: sources, steps, predicates, write forms
  :views              the named views and their TQ
  :current [SLUG]     show or set the current task, for (current) and (query \"plan\")
  :quit               leave (as does Ctrl-D)

Tab completes; Ctrl-C drops the current input.";

/// The meta commands that take no arguments.
const NO_ARGS: &[&str] = &[
    ":help", ":h", ":?", ":quit", ":q", ":exit", ":schema", ":views",
];

impl Repl<'_> {
    /// Runs the meta command `input` (starts with `:`). `:help`, `:quit`,
    /// `:schema` and `:views` (and their aliases) take no arguments: given
    /// some they are refused with `NAME takes no arguments.` (NAME as typed).
    pub(super) fn meta(&mut self, input: &str) -> Reply {
        let input = input.trim();
        let (name, rest) = match input.split_once(char::is_whitespace) {
            Some((n, r)) => (n, r.trim()),
            None => (input, ""),
        };
        let lower = name.to_ascii_lowercase();
        if NO_ARGS.contains(&lower.as_str()) && !rest.is_empty() {
            return Reply::Error(format!("{name} takes no arguments."));
        }
        match lower.as_str() {
            ":help" | ":h" | ":?" => Reply::Text(HELP.to_string()),
            ":quit" | ":q" | ":exit" => Reply::Quit,
            ":write" => match rest.to_ascii_lowercase().as_str() {
                "on" => {
                    self.surface = Surface::Write;
                    Reply::Text("Write surface: mutations are recorded.".into())
                }
                "off" => {
                    self.surface = Surface::Read;
                    Reply::Text("Read surface: mutations are refused.".into())
                }
                _ => Reply::Error(":write needs on or off.".into()),
            },
            ":sql" | ":explain" => {
                if rest.is_empty() {
                    return Reply::Error(format!("{name} needs a query, e.g. {name} (active)."));
                }
                match self
                    .engine
                    .explain_db(self.store, &self.session, rest, self.surface)
                {
                    Ok(ex) if name == ":sql" => Reply::Text(sql_text(&ex)),
                    Ok(ex) => Reply::Text(explain_text(&ex)),
                    Err(d) => Reply::Diag(d, rest.to_string()),
                }
            }
            ":schema" => match schema_rows(&self.engine, self.store, &self.session) {
                Ok(rows) => Reply::Text(for_stdout(&schema_tables(
                    rows.as_array().map(Vec::as_slice).unwrap_or(&[]),
                ))),
                Err(e) => Reply::Error(e),
            },
            ":views" => self.query("(-> (views) (:select :origin :source))"),
            ":current" => {
                if rest.is_empty() {
                    return Reply::Text(match &self.session.current {
                        Some(s) => format!("Current task: {s}."),
                        None => "No current task; set one with :current SLUG.".into(),
                    });
                }
                let slug = rest.trim_matches('"');
                match select_current(self.store, &mut self.session, slug) {
                    Ok(()) => Reply::Text(format!(
                        "Current task: {}.",
                        self.session.current.as_deref().unwrap_or(slug)
                    )),
                    Err(e) => Reply::Error(e),
                }
            }
            other => Reply::Error(format!("Unknown command {other}; try :help.")),
        }
    }
}
