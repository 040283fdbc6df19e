//! DDL of the event log and the projection, with the schema version stamp
//! (spec/store.md "The log", "The projection").
//!
//! Surrogate ids: `tasks.id` is an integer key; every other projection table
//! refers to tasks by that id (`parent_task_id`, `edges.src_id/dst_id`,
//! `observations.task_id`, `handoffs.task_id`, `task_metadata.task_id`).
//! Digests (see `rebuild.rs`) map ids back to slugs, so two folds that assign
//! different ids still compare equal.

/// The schema version this build writes and expects (`schema_meta.version`).
pub const SCHEMA_VERSION: i64 = 1;

/// The DDL of version 1: the log, the projection, its FTS index and the
/// indexes the planner's SQL joins on. Idempotent (`IF NOT EXISTS`).
pub const DDL_V1: &str = r#"
CREATE TABLE IF NOT EXISTS schema_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS events (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id        TEXT NOT NULL UNIQUE,
    event_key       TEXT NOT NULL,
    task_id         TEXT NOT NULL,
    type            TEXT NOT NULL,
    ts              INTEGER NOT NULL,
    session_id      TEXT NOT NULL,
    prev_session_id TEXT,
    data            TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS events_key ON events(event_key);
CREATE INDEX IF NOT EXISTS events_task ON events(task_id, seq);
CREATE INDEX IF NOT EXISTS events_order ON events(ts, event_id);

CREATE TABLE IF NOT EXISTS tasks (
    id             INTEGER PRIMARY KEY,
    slug           TEXT NOT NULL UNIQUE,
    depot          TEXT,
    parent_task_id INTEGER REFERENCES tasks(id) ON DELETE SET NULL,
    status         TEXT NOT NULL DEFAULT 'active'
                   CHECK (status IN ('open','active','completed','abandoned','blocked')),
    description    TEXT,
    created_ts     INTEGER NOT NULL,
    updated_ts     INTEGER NOT NULL,
    status_ts      INTEGER,
    description_ts INTEGER,
    project_id     TEXT,
    -- LWW tie-breakers: the event_id that last set each column.
    status_eid      TEXT,
    description_eid TEXT,
    parent_ts       INTEGER,
    parent_eid      TEXT
);
CREATE INDEX IF NOT EXISTS tasks_parent ON tasks(parent_task_id);
CREATE INDEX IF NOT EXISTS tasks_status ON tasks(status);

CREATE TABLE IF NOT EXISTS edges (
    src_id     INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    dst_id     INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    type       TEXT NOT NULL CHECK (type IN ('depends-on','related')),
    tag        TEXT NOT NULL DEFAULT '',
    created_ts INTEGER NOT NULL,
    UNIQUE (src_id, dst_id, type, tag),
    CHECK (src_id <> dst_id)
);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst_id, type);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src_id, type);

CREATE TABLE IF NOT EXISTS observations (
    obs_id   INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL UNIQUE,
    task_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    text     TEXT NOT NULL,
    ts       INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS observations_task ON observations(task_id, ts);

CREATE VIRTUAL TABLE IF NOT EXISTS obs_fts USING fts5(
    text,
    content = 'observations',
    content_rowid = 'obs_id',
    tokenize = "unicode61 remove_diacritics 0 tokenchars '_:-.'",
    prefix = '2 3'
);
CREATE TRIGGER IF NOT EXISTS observations_ai AFTER INSERT ON observations BEGIN
    INSERT INTO obs_fts(rowid, text) VALUES (new.obs_id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS observations_ad AFTER DELETE ON observations BEGIN
    INSERT INTO obs_fts(obs_fts, rowid, text) VALUES ('delete', old.obs_id, old.text);
END;
CREATE TRIGGER IF NOT EXISTS observations_au AFTER UPDATE ON observations BEGIN
    INSERT INTO obs_fts(obs_fts, rowid, text) VALUES ('delete', old.obs_id, old.text);
    INSERT INTO obs_fts(rowid, text) VALUES (new.obs_id, new.text);
END;

CREATE TABLE IF NOT EXISTS handoffs (
    task_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    event_id TEXT NOT NULL UNIQUE,
    path     TEXT NOT NULL,
    summary  TEXT NOT NULL,
    ts       INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS handoffs_task ON handoffs(task_id, ts);

CREATE TABLE IF NOT EXISTS task_metadata (
    task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    key     TEXT NOT NULL,
    value   TEXT NOT NULL,
    ts      INTEGER NOT NULL,
    eid     TEXT NOT NULL,
    PRIMARY KEY (task_id, key)
);
CREATE INDEX IF NOT EXISTS task_metadata_key ON task_metadata(key);

CREATE TABLE IF NOT EXISTS named_views (
    name  TEXT PRIMARY KEY,
    query TEXT NOT NULL,
    ts    INTEGER NOT NULL,
    eid   TEXT NOT NULL
);
"#;
