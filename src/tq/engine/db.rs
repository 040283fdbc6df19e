//! The engine on either store (spec/team.md "The same on both engines"):
//! each entry point dispatches on [`DbRef`] to the SQLite path
//! (`engine.rs`) or the PostgreSQL path (`engine/pg.rs`); the answers are
//! the same for the same events.

use super::{Engine, Explain};
use crate::session::Session;
use crate::store::DbRef;
use crate::tq::Surface;
use crate::tq::ast::Query;
use crate::tq::diagnostic::Diagnostic;
use crate::tq::render::Output;

impl Engine {
    /// [`Engine::run`] / [`Engine::run_pg`]: the text of §4.
    /// Errors: the diagnostic.
    pub fn run_db(
        &self,
        db: DbRef<'_>,
        session: &Session,
        text: &str,
        surface: Surface,
    ) -> Result<String, Diagnostic> {
        match db {
            DbRef::Sqlite(s) => self.run(s, session, text, surface),
            DbRef::Pg(p) => self.run_pg(p, session, text, surface),
        }
    }

    /// [`Engine::run_value`] / [`Engine::run_value_pg`]: the structured
    /// result. Errors: the diagnostic.
    pub fn run_value_db(
        &self,
        db: DbRef<'_>,
        session: &Session,
        text: &str,
        surface: Surface,
    ) -> Result<Output, Diagnostic> {
        match db {
            DbRef::Sqlite(s) => self.run_value(s, session, text, surface),
            DbRef::Pg(p) => self.run_value_pg(p, session, text, surface),
        }
    }

    /// [`Engine::run_query_value`] / [`Engine::run_query_value_pg`].
    /// Errors: the diagnostic.
    pub fn run_query_value_db(
        &self,
        db: DbRef<'_>,
        session: &Session,
        query: &Query,
        surface: Surface,
    ) -> Result<Output, Diagnostic> {
        match db {
            DbRef::Sqlite(s) => self.run_query_value(s, session, query, surface),
            DbRef::Pg(p) => self.run_query_value_pg(p, session, query, surface),
        }
    }

    /// [`Engine::explain`] / [`Engine::explain_pg`] (the engine's own
    /// query plan lines). Errors: the diagnostic.
    pub fn explain_db(
        &self,
        db: DbRef<'_>,
        session: &Session,
        text: &str,
        surface: Surface,
    ) -> Result<Explain, Diagnostic> {
        match db {
            DbRef::Sqlite(s) => self.explain(s, session, text, surface),
            DbRef::Pg(p) => self.explain_pg(p, session, text, surface),
        }
    }
}
