//! The MCP surface over stdio (spec/mcp.md, seeds 002 and 003): the rmcp
//! adapter over the tool registry, the seven prompts and resources, and
//! `cairn serve`; over Streamable HTTP (`cairn serve --http`, spec/mcp.md
//! "Wave 2: one server for a team") with bearer tokens.

pub mod drain;
mod handler;
pub mod health;
pub mod http;
pub mod http_gate;
pub mod http_tokens;
pub mod in_flight;
pub mod lines;
mod listing;
pub mod logging;
pub mod prompts;
pub mod resources;
mod roots;
pub mod serve;
pub mod served;
pub mod server;
pub mod session_route;
mod stdio_pipes;
pub mod subscriptions;
pub mod titles;

pub use server::CairnServer;
