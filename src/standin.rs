//! STAND-IN until store, front and plan land: minimal private copies of the
//! contract types (`Store`, `NewEvent`, `StoreError`, `Engine`,
//! `Diagnostic`) so the tools compile and their tests run. Deleted at
//! integration; nothing outside `tools`/`mcp` may use it.
#![allow(missing_docs)]

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use crate::session::Session;
use crate::store::{EdgeType, Status};
use crate::tq::Surface;

pub const RESERVED_CAIRN: &str = "@cairn";

pub mod types {
    pub const ALL: [&str; 11] = [
        "task.create",
        "task.update-status",
        "task.update-description",
        "task.fork",
        "task.link",
        "task.sever",
        "task.set-metadata",
        "observation",
        "handoff.create",
        "view.define",
        "view.undefine",
    ];
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("No task {0}.")]
    NoTask(String),
    #[error("name is required.")]
    NameRequired,
    #[error("name \"{0}\" is too thin to describe a task; use a few descriptive words.")]
    NameTooThin(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub task_id: String,
    pub event_type: String,
    pub ts: i64,
    pub session_id: String,
    pub data: Value,
}

impl NewEvent {
    fn new(session: &str, ts: i64, slug: &str, t: &str, data: Value) -> NewEvent {
        NewEvent {
            task_id: slug.to_string(),
            event_type: t.to_string(),
            ts,
            session_id: session.to_string(),
            data,
        }
    }
    pub fn task_create(s: &str, ts: i64, slug: &str, d: Option<&str>, p: Option<&str>) -> NewEvent {
        Self::new(s, ts, slug, "task.create", json!({"description": d, "project_id": p}))
    }
    pub fn update_status(s: &str, ts: i64, slug: &str, st: Status) -> NewEvent {
        Self::new(s, ts, slug, "task.update-status", json!({"status": st.as_str()}))
    }
    pub fn fork(s: &str, ts: i64, parent: &str, child: &str, e: EdgeType) -> NewEvent {
        Self::new(s, ts, parent, "task.fork", json!({"child_id": child, "edge_type": e.as_str()}))
    }
    pub fn link(s: &str, ts: i64, slug: &str, t: &str, e: EdgeType) -> NewEvent {
        Self::new(s, ts, slug, "task.link", json!({"target_id": t, "edge_type": e.as_str()}))
    }
    pub fn sever(s: &str, ts: i64, slug: &str, t: &str, e: EdgeType) -> NewEvent {
        Self::new(s, ts, slug, "task.sever", json!({"target_id": t, "edge_type": e.as_str()}))
    }
    pub fn set_metadata(s: &str, ts: i64, slug: &str, k: &str, v: &str) -> NewEvent {
        Self::new(s, ts, slug, "task.set-metadata", json!({"key": k, "value": v}))
    }
    pub fn observation(s: &str, ts: i64, slug: &str, text: &str) -> NewEvent {
        Self::new(s, ts, slug, "observation", json!({"text": text}))
    }
    pub fn handoff_create(s: &str, ts: i64, slug: &str, summary: &str, path: &str) -> NewEvent {
        Self::new(s, ts, slug, "handoff.create", json!({"summary": summary, "path": path}))
    }
}

pub struct WriteReport {
    pub seqs: Vec<i64>,
}

#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

pub fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl Store {
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        let _: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        conn.execute_batch(crate::store::schema::DDL_V1)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }
    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn conn(&self) -> &Connection {
        &self.conn
    }
    pub fn task_exists(&self, slug: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT 1 FROM tasks WHERE slug = ?1", [slug], |_| Ok(()))
            .optional()?
            .is_some())
    }
    pub fn metadata_keys(&self) -> Result<Vec<String>, StoreError> {
        let mut st = self.conn.prepare("SELECT DISTINCT key FROM task_metadata ORDER BY key")?;
        let v = st.query_map([], |r| r.get(0))?.collect::<Result<Vec<String>, _>>()?;
        Ok(v)
    }
    pub fn mint_slug(&self, name: &str, today: time::Date) -> Result<String, StoreError> {
        let base = slug_for(name, today)?;
        if !self.task_exists(&base)? {
            return Ok(base);
        }
        let mut n = 2;
        loop {
            let c = format!("{base}-{n}");
            if !self.task_exists(&c)? {
                return Ok(c);
            }
            n += 1;
        }
    }
    pub fn write(&self, events: &[NewEvent]) -> Result<WriteReport, StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        let mut seqs = Vec::new();
        for e in events {
            let data = e.data.to_string();
            let eid = ulid::Ulid::new().to_string();
            let key = format!("{}\0{}\0{}\0{}\0{}", e.task_id, e.event_type, e.ts, e.session_id, data);
            use sha2::Digest;
            let key = format!("{:x}", sha2::Sha256::digest(key.as_bytes()));
            let n = tx.execute(
                "INSERT OR IGNORE INTO events(event_id,event_key,task_id,type,ts,session_id,data) VALUES(?1,?2,?3,?4,?5,?6,?7)",
                params![eid, key, e.task_id, e.event_type, e.ts, e.session_id, data],
            )?;
            if n == 0 {
                continue;
            }
            seqs.push(tx.last_insert_rowid());
            fold(&tx, e, &eid)?;
        }
        tx.commit()?;
        Ok(WriteReport { seqs })
    }
}

fn id_of(c: &Connection, slug: &str) -> Result<Option<i64>, rusqlite::Error> {
    c.query_row("SELECT id FROM tasks WHERE slug=?1", [slug], |r| r.get(0)).optional()
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn fold(c: &Connection, e: &NewEvent, eid: &str) -> Result<(), rusqlite::Error> {
    let d = &e.data;
    match e.event_type.as_str() {
        "task.create" => {
            c.execute(
                "INSERT OR IGNORE INTO tasks(slug,status,description,created_ts,updated_ts,status_ts) VALUES(?1,'active',?2,?3,?3,?3)",
                params![e.task_id, d.get("description").and_then(Value::as_str), e.ts],
            )?;
        }
        "task.update-status" => {
            c.execute("UPDATE tasks SET status=?2, status_ts=?3 WHERE slug=?1", params![e.task_id, s(d, "status"), e.ts])?;
        }
        "task.fork" | "task.link" | "task.sever" => {
            let other = if e.event_type == "task.fork" { s(d, "child_id") } else { s(d, "target_id") };
            let edge = s(d, "edge_type");
            let (Some(a), Some(b)) = (id_of(c, &e.task_id)?, id_of(c, other)?) else {
                return Ok(());
            };
            let structural = edge == "phase-of" || edge == "forked-from";
            match (e.event_type.as_str(), structural) {
                ("task.fork", true) => {
                    c.execute("UPDATE tasks SET parent_task_id=?1 WHERE id=?2", params![a, b])?;
                }
                ("task.link", true) => {
                    c.execute("UPDATE tasks SET parent_task_id=?2 WHERE id=?1", params![a, b])?;
                }
                ("task.sever", true) => {
                    c.execute("UPDATE tasks SET parent_task_id=NULL WHERE (id=?1 AND parent_task_id=?2) OR (id=?2 AND parent_task_id=?1)", params![a, b])?;
                }
                ("task.sever", false) => {
                    c.execute("DELETE FROM edges WHERE src_id=?1 AND dst_id=?2 AND type=?3", params![a, b, edge])?;
                }
                _ => {
                    c.execute("INSERT OR IGNORE INTO edges(src_id,dst_id,type,created_ts) VALUES(?1,?2,?3,?4)", params![a, b, edge, e.ts])?;
                }
            }
        }
        "task.set-metadata" => {
            if let Some(id) = id_of(c, &e.task_id)? {
                c.execute(
                    "INSERT OR REPLACE INTO task_metadata(task_id,key,value,ts,eid) VALUES(?1,?2,?3,?4,?5)",
                    params![id, s(d, "key"), s(d, "value"), e.ts, eid],
                )?;
            }
        }
        "observation" | "handoff.create" => {
            if let Some(id) = id_of(c, &e.task_id)? {
                let text = if e.event_type == "observation" {
                    s(d, "text").to_string()
                } else {
                    c.execute(
                        "INSERT INTO handoffs(task_id,event_id,path,summary,ts) VALUES(?1,?2,?3,?4,?5)",
                        params![id, eid, s(d, "path"), s(d, "summary"), e.ts],
                    )?;
                    format!("Handoff: {} → {}", s(d, "summary"), s(d, "path"))
                };
                c.execute(
                    "INSERT INTO observations(event_id,task_id,text,ts) VALUES(?1,?2,?3,?4)",
                    params![eid, id, text, e.ts],
                )?;
            }
        }
        _ => {}
    }
    c.execute("UPDATE tasks SET updated_ts=max(updated_ts,?2) WHERE slug=?1", params![e.task_id, e.ts])?;
    Ok(())
}

pub fn slug_for(name: &str, today: time::Date) -> Result<String, StoreError> {
    const STOP: &[&str] = &["the", "for", "with", "and", "from", "into"];
    let words: Vec<String> = name
        .replace(['_', '/'], " ")
        .split_whitespace()
        .map(|w| w.chars().filter(|c| c.is_alphanumeric() || *c == '-').collect::<String>().to_lowercase())
        .filter(|w| w.chars().count() >= 3 && !STOP.contains(&w.as_str()))
        .take(4)
        .collect();
    if words.is_empty() {
        return Err(StoreError::NameRequired);
    }
    if words.len() == 1 && (words[0].len() < 6 || ["stuff", "misc"].contains(&words[0].as_str())) {
        return Err(StoreError::NameTooThin(name.to_string()));
    }
    let f = time::macros::format_description!("[year]-[month]-[day]");
    let date = today.format(&f).unwrap_or_default();
    Ok(format!("{date}-{}", words.join("-")))
}

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
