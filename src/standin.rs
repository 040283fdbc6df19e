//! STAND-IN until plan lands: a minimal private copy of the contract type
//! `Engine` so the query tools compile. Deleted at integration; nothing
//! outside `tools`/`mcp` may use it.

use crate::session::Session;
use crate::store::Store;
use crate::tq::{Diagnostic, Surface};

/// STAND-IN for `tq::engine::Engine`.
#[derive(Debug, Clone)]
pub struct Engine {
    /// Query time limit.
    pub time_limit: std::time::Duration,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Engine {
    /// STAND-IN.
    pub fn new() -> Engine {
        Engine {
            time_limit: std::time::Duration::from_secs(10),
        }
    }

    /// STAND-IN: compiles with the real front-end, then refuses to run.
    pub fn run(
        &self,
        store: &Store,
        _session: &Session,
        text: &str,
        _surface: Surface,
    ) -> Result<String, Diagnostic> {
        let keys = store
            .metadata_keys()
            .map_err(|e| Diagnostic::query(e.to_string(), None))?;
        crate::tq::compile(text, &keys)?;
        Err(Diagnostic::query("the planner has not landed yet", None))
    }
}
