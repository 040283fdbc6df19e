//! DDL of the event log and the projection, with the schema version stamp
//! (spec/store.md "The log", "The projection").
//!
//! Surrogate ids: `tasks.id` is an integer key; every other projection table
//! refers to tasks by that id (`parent_task_id`, `edges.src_id/dst_id`,
//! `observations.task_id`, `handoffs.task_id`, `task_metadata.task_id`).
//! Digests (see `rebuild.rs`) map ids back to slugs, so two folds that assign
//! different ids still compare equal.

use std::time::Duration;

/// How long a connection waits for another writer before giving up (30 s;
/// spec/store.md "SQLite settings").
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Turns on SQLite's query planner stability guarantee (QPSG) for `conn`:
/// a prepared statement keeps the plan it was prepared with whatever values
/// are bound to it. Without it SQLite marks a statement "expired" when a
/// bound value might change its plan (a `LIMIT ?`, an indexed column
/// compared with `?`, STAT4 being compiled in) and, because rusqlite clears
/// the bindings of every cached statement it takes back, parses and plans
/// it again at its next run: three statements of every write (issue 23,
/// docs/store.md "SQLite settings"). The plans are the ones chosen without
/// the values, which cairn's statements are written for (the store runs no
/// `ANALYZE`). Errors: [`rusqlite::Error`].
pub fn stable_plans(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

/// The schema version this build writes and expects (`schema_meta.version`).
/// Version 2 added the counter columns of [`V2_COUNTERS`]; version 3 the
/// claim register of [`V3_CLAIMS`]; version 4 the identifier parts of
/// [`V4_PARTS`] (a search index of two columns, [`DDL_V4_SEARCH`]);
/// version 5 the task texts of [`DDL_V5_TASK_TEXTS`] (names and
/// descriptions searchable, spec/tq.md §10).
pub const SCHEMA_VERSION: i64 = 5;

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

/// Fold bookkeeping of version 1 (added by the store engineer; not visible to
/// queries): the LWW state the reducer needs so that folding events in any
/// order yields the same projection (spec/store.md "LWW"). Idempotent.
///
/// - `task_fold`: per task, the target of the newest structural set of its
///   parent (`parent_target_id`, even when a later sever hid it) and the
///   stamp of the `project_id` value.
/// - `sever_state`: per unordered task pair (`lo_id < hi_id`), the newest
///   structural sever between them.
/// - `edge_state`: per lateral edge, present or severed, with the stamp of the
///   newest link/fork/sever; `edges` holds exactly the present ones.
/// - `view_state`: per view name, defined (with its query) or undefined, with
///   the stamp of the newest define/undefine; `named_views` holds the defined ones.
pub const DDL_V1_FOLD_STATE: &str = r#"
CREATE TABLE IF NOT EXISTS task_fold (
    task_id          INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    parent_target_id INTEGER REFERENCES tasks(id) ON DELETE SET NULL,
    project_ts       INTEGER,
    project_eid      TEXT
);

CREATE TABLE IF NOT EXISTS sever_state (
    lo_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    hi_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    ts    INTEGER NOT NULL,
    eid   TEXT NOT NULL,
    PRIMARY KEY (lo_id, hi_id)
);

CREATE TABLE IF NOT EXISTS edge_state (
    src_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    dst_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    type    TEXT NOT NULL,
    tag     TEXT NOT NULL DEFAULT '',
    present INTEGER NOT NULL,
    ts      INTEGER NOT NULL,
    eid     TEXT NOT NULL,
    PRIMARY KEY (src_id, dst_id, type, tag)
);

CREATE TABLE IF NOT EXISTS view_state (
    name    TEXT PRIMARY KEY,
    query   TEXT,
    present INTEGER NOT NULL,
    ts      INTEGER NOT NULL,
    eid     TEXT NOT NULL
);
"#;

/// The edge-count expression over a `tasks` row (spec/tq.md field
/// `edge-count`: lateral edges in and out, plus children, plus 1 with a
/// parent), as the virtual column `tasks.edge_count` computes it.
pub const EDGE_COUNT_EXPR: &str =
    "lateral_in + lateral_out + child_count + (parent_task_id IS NOT NULL)";

/// Version 2's counter columns of `tasks` (docs/store.md "Counter columns"),
/// pure functions of the projection and so of the log:
///
/// - `obs_count`: rows of `observations` with `task_id = id`;
/// - `child_count`: rows of `tasks` with `parent_task_id = id`;
/// - `lateral_out` / `lateral_in`: rows of `edges` with `src_id = id` /
///   `dst_id = id` (depends-on and related);
/// - `edge_count` (VIRTUAL, computed from the others): [`EDGE_COUNT_EXPR`].
///
/// Each entry is `(column, declaration)`; added with `ALTER TABLE tasks ADD
/// COLUMN` when missing (so re-running the migration is harmless).
pub const V2_COUNTERS: &[(&str, &str)] = &[
    ("obs_count", "INTEGER NOT NULL DEFAULT 0"),
    ("child_count", "INTEGER NOT NULL DEFAULT 0"),
    ("lateral_out", "INTEGER NOT NULL DEFAULT 0"),
    ("lateral_in", "INTEGER NOT NULL DEFAULT 0"),
    (
        "edge_count",
        "INTEGER GENERATED ALWAYS AS (lateral_in + lateral_out + child_count + (parent_task_id IS NOT NULL)) VIRTUAL",
    ),
];

/// Version 2 after the columns exist: fills the counters of existing rows
/// from the projection, then installs the triggers that keep them exact on
/// every insert, delete and move of an observation, an edge or a parent
/// pointer (whichever code path writes them: the fold, rebuild, tests), and
/// the indexes the `busy` and `hub-tasks` views sort by (`ORDER BY obs_count
/// DESC, slug` / `ORDER BY edge_count DESC, slug` walk them in order and stop
/// after the `:take`). Idempotent.
pub const DDL_V2_COUNTERS: &str = r#"
UPDATE tasks SET
    obs_count   = (SELECT count(*) FROM observations o WHERE o.task_id = tasks.id),
    child_count = (SELECT count(*) FROM tasks c WHERE c.parent_task_id = tasks.id),
    lateral_out = (SELECT count(*) FROM edges e WHERE e.src_id = tasks.id),
    lateral_in  = (SELECT count(*) FROM edges e WHERE e.dst_id = tasks.id);

CREATE TRIGGER IF NOT EXISTS counters_obs_ai AFTER INSERT ON observations BEGIN
    UPDATE tasks SET obs_count = obs_count + 1 WHERE id = new.task_id;
END;
CREATE TRIGGER IF NOT EXISTS counters_obs_ad AFTER DELETE ON observations BEGIN
    UPDATE tasks SET obs_count = obs_count - 1 WHERE id = old.task_id;
END;
CREATE TRIGGER IF NOT EXISTS counters_obs_au AFTER UPDATE OF task_id ON observations
WHEN old.task_id IS NOT new.task_id BEGIN
    UPDATE tasks SET obs_count = obs_count - 1 WHERE id = old.task_id;
    UPDATE tasks SET obs_count = obs_count + 1 WHERE id = new.task_id;
END;

CREATE TRIGGER IF NOT EXISTS counters_edges_ai AFTER INSERT ON edges BEGIN
    UPDATE tasks SET lateral_out = lateral_out + 1 WHERE id = new.src_id;
    UPDATE tasks SET lateral_in = lateral_in + 1 WHERE id = new.dst_id;
END;
CREATE TRIGGER IF NOT EXISTS counters_edges_ad AFTER DELETE ON edges BEGIN
    UPDATE tasks SET lateral_out = lateral_out - 1 WHERE id = old.src_id;
    UPDATE tasks SET lateral_in = lateral_in - 1 WHERE id = old.dst_id;
END;
CREATE TRIGGER IF NOT EXISTS counters_edges_au AFTER UPDATE OF src_id, dst_id ON edges
WHEN old.src_id IS NOT new.src_id OR old.dst_id IS NOT new.dst_id BEGIN
    UPDATE tasks SET lateral_out = lateral_out - 1 WHERE id = old.src_id;
    UPDATE tasks SET lateral_in = lateral_in - 1 WHERE id = old.dst_id;
    UPDATE tasks SET lateral_out = lateral_out + 1 WHERE id = new.src_id;
    UPDATE tasks SET lateral_in = lateral_in + 1 WHERE id = new.dst_id;
END;

CREATE TRIGGER IF NOT EXISTS counters_parent_ai AFTER INSERT ON tasks
WHEN new.parent_task_id IS NOT NULL BEGIN
    UPDATE tasks SET child_count = child_count + 1 WHERE id = new.parent_task_id;
END;
CREATE TRIGGER IF NOT EXISTS counters_parent_ad AFTER DELETE ON tasks
WHEN old.parent_task_id IS NOT NULL BEGIN
    UPDATE tasks SET child_count = child_count - 1 WHERE id = old.parent_task_id;
END;
CREATE TRIGGER IF NOT EXISTS counters_parent_au AFTER UPDATE OF parent_task_id ON tasks
WHEN old.parent_task_id IS NOT new.parent_task_id BEGIN
    UPDATE tasks SET child_count = child_count - 1 WHERE id = old.parent_task_id;
    UPDATE tasks SET child_count = child_count + 1 WHERE id = new.parent_task_id;
END;

CREATE INDEX IF NOT EXISTS tasks_obs_count ON tasks(obs_count DESC, slug);
CREATE INDEX IF NOT EXISTS tasks_edge_count ON tasks(edge_count DESC, slug);
"#;

/// Version 3's claim register on `tasks` (spec/tq.md §9; docs/store.md
/// "Claims"): the newest `task.claim`/`task.release` by `(ts, event_id)`.
/// `claim_owner`/`claim_until` are NULL after a release or before any
/// claim; `claim_ts`/`claim_eid` stamp the register. Whether a claim is
/// live (until in the future, task not dormant) is decided by the reader.
pub const V3_CLAIMS: &[(&str, &str)] = &[
    ("claim_owner", "TEXT"),
    ("claim_until", "INTEGER"),
    ("claim_ts", "INTEGER"),
    ("claim_eid", "TEXT"),
];

/// Version 3 after the columns exist: the index `(mine)` reads.
pub const DDL_V3_CLAIMS: &str = r#"
CREATE INDEX IF NOT EXISTS tasks_claim_owner ON tasks(claim_owner);
"#;

/// Version 4's column of `observations`: the identifier parts of the text
/// (`store::parts::parts_text`, written by the fold).
pub const V4_PARTS: &[(&str, &str)] = &[("parts", "TEXT NOT NULL DEFAULT ''")];

/// Version 4's search index, replacing version 1's: `obs_fts` over the
/// text and its identifier parts (both of `observations`), ranked by BM25
/// with the text weighted 10 to the parts' 1 (a whole-identifier match
/// first; `rank` is what `task_search` and `(search …)` order by), and
/// its triggers. Run by [`Step::Reindex`] after the parts are filled.
pub const DDL_V4_SEARCH: &str = r#"
CREATE VIRTUAL TABLE IF NOT EXISTS obs_fts USING fts5(
    text,
    parts,
    content = 'observations',
    content_rowid = 'obs_id',
    tokenize = "unicode61 remove_diacritics 0 tokenchars '_:-.'",
    prefix = '2 3'
);
INSERT INTO obs_fts(obs_fts, rank) VALUES ('rank', 'bm25(10.0, 1.0)');
CREATE TRIGGER IF NOT EXISTS observations_ai AFTER INSERT ON observations BEGIN
    INSERT INTO obs_fts(rowid, text, parts) VALUES (new.obs_id, new.text, new.parts);
END;
CREATE TRIGGER IF NOT EXISTS observations_ad AFTER DELETE ON observations BEGIN
    INSERT INTO obs_fts(obs_fts, rowid, text, parts) VALUES ('delete', old.obs_id, old.text, old.parts);
END;
CREATE TRIGGER IF NOT EXISTS observations_au AFTER UPDATE ON observations BEGIN
    INSERT INTO obs_fts(obs_fts, rowid, text, parts) VALUES ('delete', old.obs_id, old.text, old.parts);
    INSERT INTO obs_fts(rowid, text, parts) VALUES (new.obs_id, new.text, new.parts);
END;
INSERT INTO obs_fts(obs_fts) VALUES ('rebuild');
"#;

/// Version 5's task texts (spec/tq.md §10: `(search …)` and `task_search`
/// find a task by its name and description too; `store::texts`): one row
/// per task that has a name or a description, with each register's stamp
/// and the identifier parts of both (`parts`), and the FTS5 index
/// `task_fts` over them (the same tokenizer and prefixes as `obs_fts`;
/// BM25 weights name 10, description 10, parts 1), kept by triggers.
/// Filled by refolding `task.create` and `task.update-description`
/// (the migration's next step) with the triggers on. Idempotent.
pub const DDL_V5_TASK_TEXTS: &str = r#"
CREATE TABLE IF NOT EXISTS task_texts (
    task_id         INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    name            TEXT,
    name_ts         INTEGER,
    name_eid        TEXT,
    description     TEXT,
    description_ts  INTEGER,
    description_eid TEXT,
    parts           TEXT NOT NULL DEFAULT ''
);
CREATE VIRTUAL TABLE IF NOT EXISTS task_fts USING fts5(
    name,
    description,
    parts,
    content = 'task_texts',
    content_rowid = 'task_id',
    tokenize = "unicode61 remove_diacritics 0 tokenchars '_:-.'",
    prefix = '2 3'
);
INSERT INTO task_fts(task_fts, rank) VALUES ('rank', 'bm25(10.0, 10.0, 1.0)');
CREATE TRIGGER IF NOT EXISTS task_texts_ai AFTER INSERT ON task_texts BEGIN
    INSERT INTO task_fts(rowid, name, description, parts)
    VALUES (new.task_id, new.name, new.description, new.parts);
END;
CREATE TRIGGER IF NOT EXISTS task_texts_ad AFTER DELETE ON task_texts BEGIN
    INSERT INTO task_fts(task_fts, rowid, name, description, parts)
    VALUES ('delete', old.task_id, old.name, old.description, old.parts);
END;
CREATE TRIGGER IF NOT EXISTS task_texts_au AFTER UPDATE ON task_texts BEGIN
    INSERT INTO task_fts(task_fts, rowid, name, description, parts)
    VALUES ('delete', old.task_id, old.name, old.description, old.parts);
    INSERT INTO task_fts(rowid, name, description, parts)
    VALUES (new.task_id, new.name, new.description, new.parts);
END;
"#;

/// One step of a forward migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// An idempotent SQL batch.
    Sql(&'static str),
    /// `ALTER TABLE table ADD COLUMN column declaration`, skipped when the
    /// column already exists (SQLite has no `ADD COLUMN IF NOT EXISTS`).
    AddColumns {
        /// The table.
        table: &'static str,
        /// `(column, declaration)` pairs, added in order.
        columns: &'static [(&'static str, &'static str)],
    },
    /// Folds again, in `(ts, event_id)` order, every logged event of these
    /// types (kept unfolded by a build that did not know them).
    Refold(&'static [&'static str]),
    /// Rebuilds the search index: drops `obs_fts` and its triggers, fills
    /// `observations.parts` from each text (in Rust), then runs the batch
    /// (the new index, its triggers, `'rebuild'`).
    Reindex(&'static str),
}

/// Forward migrations: `MIGRATIONS[v]` takes a store from version `v` to
/// `v + 1` (each entry is a list of steps run in order, in one
/// `BEGIN IMMEDIATE` transaction with the version stamp). Version 0 is an
/// empty or unstamped file. Never drops user data; every step is idempotent,
/// so a store whose stamp is behind its tables migrates cleanly.
pub const MIGRATIONS: &[&[Step]] = &[
    &[Step::Sql(DDL_V1), Step::Sql(DDL_V1_FOLD_STATE)],
    &[
        Step::AddColumns {
            table: "tasks",
            columns: V2_COUNTERS,
        },
        Step::Sql(DDL_V2_COUNTERS),
    ],
    &[
        Step::AddColumns {
            table: "tasks",
            columns: V3_CLAIMS,
        },
        Step::Sql(DDL_V3_CLAIMS),
        Step::Refold(&[
            crate::store::event::types::CLAIM,
            crate::store::event::types::RELEASE,
            crate::store::event::types::UPDATE_STATUS,
        ]),
    ],
    &[
        Step::AddColumns {
            table: "observations",
            columns: V4_PARTS,
        },
        Step::Reindex(DDL_V4_SEARCH),
    ],
    &[
        Step::Sql(DDL_V5_TASK_TEXTS),
        Step::Refold(&[
            crate::store::event::types::TASK_CREATE,
            crate::store::event::types::UPDATE_DESCRIPTION,
        ]),
    ],
];
