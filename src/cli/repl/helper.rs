//! The rustyline helper of the REPL: completion (`complete`), highlighting
//! (`highlight`), and the multi-line validator (`balance`).

use std::borrow::Cow;

use rustyline::completion::Completer;
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context as RlContext, Helper};

use super::balance::balance;
use super::complete::{self, Context, META_COMMANDS};
use super::highlight::highlight;
use crate::session::Session;
use crate::store::DbRef;
use crate::tq::Surface;
use crate::tq::engine::Engine;
use crate::tq::render::Output;

/// Completion, highlighting and validation over one store.
pub struct ReplHelper<'a> {
    /// The store completions read (metadata keys, views, slugs).
    pub store: DbRef<'a>,
    /// Colour the input (a terminal without `NO_COLOR`).
    pub color: bool,
}

impl ReplHelper<'_> {
    /// The names `(-> SOURCE (:ids))` yields, or nothing on any error.
    fn names(&self, source: &str) -> Vec<String> {
        let q = format!("(-> {source} (:ids))");
        match Engine::new().run_value_db(self.store, &Session::new(), &q, Surface::Read) {
            Ok(Output::Ids { ids }) => ids,
            _ => Vec::new(),
        }
    }

    /// The candidates for the text before `pos`: (start of the replaced
    /// word, sorted candidates).
    pub fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let (start, ctx) = complete::context(line, pos);
        let prefix = line.get(start..pos).unwrap_or("");
        let pool: Vec<String> = match ctx {
            Context::Word => complete::words(),
            Context::Keyword => complete::keywords(&self.store.metadata_keys().unwrap_or_default()),
            Context::Edge => complete::edge_keywords(),
            Context::Status => complete::status_keywords(),
            Context::Meta => META_COMMANDS.iter().map(|s| s.to_string()).collect(),
            Context::Slug => {
                let mut s = self.names("(all)");
                s.extend(self.names(r#"(node "@")"#));
                s
            }
            Context::View => self.names("(views)"),
            Context::None => Vec::new(),
        };
        let mut c = complete::matching(&pool, prefix);
        c.sort();
        c.dedup();
        (start, c)
    }
}

impl Completer for ReplHelper<'_> {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &RlContext<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(self.candidates(line, pos))
    }
}

impl Hinter for ReplHelper<'_> {
    type Hint = String;
}

impl Highlighter for ReplHelper<'_> {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        if self.color {
            Cow::Owned(highlight(line))
        } else {
            Cow::Borrowed(line)
        }
    }

    fn highlight_char(&self, _line: &str, _pos: usize, _kind: CmdKind) -> bool {
        self.color
    }
}

impl Validator for ReplHelper<'_> {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        let b = balance(ctx.input());
        if b.in_string || b.depth > 0 {
            Ok(ValidationResult::Incomplete)
        } else {
            Ok(ValidationResult::Valid(None))
        }
    }
}

impl Helper for ReplHelper<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NewEvent;

    #[test]
    fn candidates_from_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("cairn.db")).unwrap();
        let s = "S";
        store
            .write(&[
                NewEvent::task_create(s, 1, "2026-01-01-tune-search", None, None),
                NewEvent::task_create(s, 2, "2026-01-01-tokenizer-fix", None, None),
                NewEvent::set_metadata(s, 3, "2026-01-01-tune-search", "priority", "high"),
                NewEvent::view_define(s, 4, "mine", "(active)"),
            ])
            .unwrap();
        let h = ReplHelper {
            store: (&store).into(),
            color: false,
        };
        let line = r#"(node "2026-01-01-t"#;
        assert_eq!(
            h.candidates(line, line.len()),
            (
                7,
                vec![
                    "2026-01-01-tokenizer-fix".to_string(),
                    "2026-01-01-tune-search".to_string()
                ]
            )
        );
        let line = r#"(node "@"#;
        assert_eq!(
            h.candidates(line, line.len()),
            (7, vec!["@cairn".to_string()])
        );
        let line = r#"(query "mi"#;
        assert_eq!(
            h.candidates(line, line.len()),
            (8, vec!["mine".to_string()])
        );
        let line = r#"(query "fro"#;
        assert_eq!(
            h.candidates(line, line.len()),
            (8, vec!["frontier".to_string()])
        );
        assert_eq!(
            h.candidates("(-> (all) (:pri", 15),
            (11, vec![":priority".to_string()])
        );
        assert_eq!(
            h.candidates("(-> (all) (:fol", 15),
            (11, vec![":follow".to_string()])
        );
        assert_eq!(h.candidates(":wr", 3), (0, vec![":write".to_string()]));
        assert_eq!(
            h.candidates(":current 2026-01-01-tu", 22),
            (9, vec!["2026-01-01-tune-search".to_string()])
        );
        assert_eq!(h.candidates("(dor", 4), (1, vec!["dormant".to_string()]));
        assert_eq!(
            h.candidates("(-> (all) (:follow :dep", 23),
            (19, vec![":depends-on".to_string()])
        );
    }

    #[test]
    fn highlighting_follows_colour() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("cairn.db")).unwrap();
        let plain = ReplHelper {
            store: (&store).into(),
            color: false,
        };
        assert_eq!(plain.highlight("(all)", 0), "(all)");
        let coloured = ReplHelper {
            store: (&store).into(),
            color: true,
        };
        assert_eq!(
            coloured.highlight("(all)", 0),
            "\x1b[1m(\x1b[0m\x1b[35mall\x1b[0m\x1b[1m)\x1b[0m"
        );
    }
}
