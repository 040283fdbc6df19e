//! The plan you can see (issue 25): the plan as a graph ([`graph`]), its
//! exports for `cairn graph` ([`export`]). The room of the board: it reads
//! through `tq::Engine`, `tools` and `store` entry points and never writes.

pub mod api;
pub mod export;
pub mod graph;
pub mod sse;
pub mod web;
