//! STAND-IN until front and plan land: minimal private copies of the
//! contract types `Engine` and `Diagnostic` so the query tools compile.
//! Deleted at integration; nothing outside `tools`/`mcp` may use it.
#![allow(missing_docs)]

use crate::session::Session;
use crate::store::Store;
use crate::tq::Surface;

#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub message: String,
    pub parse: bool,
}

impl Diagnostic {
    pub fn render_plain(&self) -> String {
        if self.parse {
            format!("Parse error: {}", self.message)
        } else {
            format!("Query error: {}", self.message)
        }
    }
}

#[derive(Debug, Clone)]
pub struct Engine {
    pub time_limit: std::time::Duration,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Engine {
    pub fn new() -> Engine {
        Engine {
            time_limit: std::time::Duration::from_secs(10),
        }
    }
    pub fn run(&self, _store: &Store, _session: &Session, text: &str, surface: Surface) -> Result<String, Diagnostic> {
        if text.trim_start().starts_with("(((") {
            return Err(Diagnostic { message: "unbalanced".into(), parse: true });
        }
        Err(Diagnostic {
            message: format!("engine stand-in ({surface:?}) cannot run {text}"),
            parse: false,
        })
    }
}
