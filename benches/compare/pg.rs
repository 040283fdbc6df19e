//! The PostgreSQL side of the comparison (issue 21; docs/performance.md
//! "PostgreSQL (issue 21)"): `CAIRN_BENCH_ENGINE=pg cargo bench --bench
//! compare` starts a throwaway PostgreSQL cluster the way the tests do
//! (`tests/common/pg.rs`: `initdb`/`pg_ctl` in a temporary directory, a Unix
//! socket, no TCP), pushes each cached SQLite store into a fresh schema
//! (`PgStore::push_store`: the copy into an empty schema, timed: events/s), then, in the same run and per size:
//! every case of `cases.rs` through `Engine::run_value_pg` next to the best
//! hand-written PostgreSQL SQL for the same answer (a second warm
//! connection, prepared statements, every column read; answers asserted
//! equal), claim-one (the write query vs one hand `UPDATE ... SKIP
//! LOCKED`), and observe with 8 concurrent writer threads on PostgreSQL and
//! on a copy of the SQLite store (events/s, p50, p99).

use std::collections::HashMap;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use cairn::session::Session;
use cairn::store::pg::{PgStore, PgTarget, source_events};
use cairn::store::{NewEvent, Store};
use cairn::tq::Surface;
use cairn::tq::engine::Engine;
use postgres::types::Type;

use super::cases::{CLOSURE_CTE, Case, cases};
use super::claims::CLAIM_ONE;
use super::measure::{GROUPED, answer_of, fmt_ms, median, median_ms, pair_samples};
use super::realistic;

#[path = "../../tests/common/pg.rs"]
mod cluster;

/// Passes over every case (see the case loop).
const ROUNDS: usize = 3;

/// Concurrent writers of the observe measure, and events each.
const WRITERS: usize = 8;
const PER_WRITER: usize = 150;

/// The hand SQL of a case, rewritten for PostgreSQL: `$1` for the current
/// slug, the clock from `now()`, no SQLite index hints, `strpos` for
/// `instr`, `json_agg`, and a
/// closure whose recursive arm names the CTE once.
pub fn pg_hand(c: &Case) -> String {
    let mut s = c.hand.clone();
    if s.contains("WITH RECURSIVE") {
        s = s.replace(CLOSURE_CTE, PG_CLOSURE_CTE);
    }
    s.replace("?1", "$1::text")
        .replace("unixepoch()", "extract(epoch from now())::bigint")
        .replace("+t.status", "t.status")
        .replace("instr(", "strpos(")
        .replace(
            "json_group_array(json_array(m.key, m.value) ORDER BY m.key)",
            "(json_agg(json_build_array(m.key, m.value) ORDER BY m.key))::text",
        )
}

/// The closure on PostgreSQL: one recursive arm over the union of the
/// three relations (children by `tasks_parent`, lateral edges by
/// `edges_src`).
pub const PG_CLOSURE_CTE: &str = "cur AS (SELECT id FROM tasks WHERE slug = $1::text),
clo(id) AS (
    SELECT c.id FROM cur JOIN tasks c ON c.parent_task_id = cur.id
    UNION SELECT e.dst_id FROM cur JOIN edges e ON e.src_id = cur.id AND e.type IN ('depends-on', 'related')
    UNION SELECT n.id FROM clo CROSS JOIN LATERAL (
        SELECT c.id FROM tasks c WHERE c.parent_task_id = clo.id
        UNION ALL SELECT e.dst_id FROM edges e WHERE e.src_id = clo.id AND e.type IN ('depends-on', 'related')) n)";

/// A warm hand connection with its prepared statements (the claim), and
/// the hand statements prepared on the engine's own connection (the reads).
struct Hand {
    client: postgres::Client,
    stmts: HashMap<String, postgres::Statement>,
    shared: HashMap<String, postgres::Statement>,
}

impl Hand {
    fn new(target: &PgTarget) -> Hand {
        let mut client = cairn::store::pg::connect::connect(target).expect("connect");
        client
            .batch_execute(&format!("SET search_path TO \"{}\"", target.schema))
            .expect("search_path");
        Hand {
            client,
            stmts: HashMap::new(),
            shared: HashMap::new(),
        }
    }

    /// Runs `sql` (prepared once) on the hand connection reading every
    /// cell; column 0 as text.
    fn run(&mut self, sql: &str, current: &str) -> Vec<String> {
        run_rows(&mut self.client, &mut self.stmts, sql, current)
    }

    /// [`Hand::run`] on the engine's own connection in its read mode
    /// (`PgStore::read_client` with the engine's time limit, so neither side
    /// changes the session's settings): the same PostgreSQL backend serves
    /// both sides. With a connection each, the two backends were placed on
    /// the two cores differently from run to run and the sub-millisecond
    /// rows swung from 0.7x to 2.4x between identical runs.
    fn read(&mut self, store: &PgStore, limit: Duration, sql: &str, current: &str) -> Vec<String> {
        let mut client = store.read_client(limit).expect("read client");
        run_rows(&mut client, &mut self.shared, sql, current)
    }
}

/// Runs `sql` on `client` (prepared once into `stmts`) reading every cell;
/// column 0 as text.
fn run_rows(
    client: &mut postgres::Client,
    stmts: &mut HashMap<String, postgres::Statement>,
    sql: &str,
    current: &str,
) -> Vec<String> {
    if !stmts.contains_key(sql) {
        let st = client
            .prepare(sql)
            .unwrap_or_else(|e| panic!("prepare hand SQL: {e:?}\n{sql}"));
        stmts.insert(sql.to_string(), st);
    }
    let st = &stmts[sql];
    let rows = if st.params().is_empty() {
        client.query(st, &[])
    } else {
        client.query(st, &[&current])
    }
    .unwrap_or_else(|e| panic!("hand SQL: {e:?}\n{sql}"));
    if sql.starts_with(GROUPED) {
        return grouped(&rows);
    }
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let mut first = String::new();
        for (i, col) in r.columns().iter().enumerate() {
            let v = if *col.type_() == Type::INT8 {
                r.get::<_, Option<i64>>(i).map(|v| v.to_string())
            } else {
                r.get::<_, Option<String>>(i)
            };
            if i == 0 {
                first = v.clone().unwrap_or_default();
            }
            black_box(v);
        }
        out.push(first);
    }
    out
}

/// [`GROUPED`] rows `(key, slug, ...)` grouped in the client as
/// `(:group-by)` does (every cell read): `KEY:SLUG` per task, groups
/// largest first, ties by key.
fn grouped(rows: &[postgres::Row]) -> Vec<String> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for r in rows {
        let key = r
            .get::<_, Option<String>>(0)
            .unwrap_or_else(|| "none".to_string());
        let slug: String = r.get(1);
        for (i, col) in r.columns().iter().enumerate().skip(2) {
            if *col.type_() == Type::INT8 {
                black_box(r.get::<_, Option<i64>>(i));
            } else {
                black_box(r.get::<_, Option<String>>(i));
            }
        }
        match index.get(&key) {
            Some(&g) => groups[g].1.push(slug),
            None => {
                index.insert(key.clone(), groups.len());
                groups.push((key, vec![slug]));
            }
        }
    }
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    groups
        .iter()
        .flat_map(|(k, slugs)| slugs.iter().map(move |s| format!("{k}:{s}")))
        .collect()
}

/// Single-event observation writes by [`WRITERS`] threads at once, each
/// through its own handle from `open` (opened before the clock starts);
/// returns (events/s, p50 ms, p99 ms).
fn observe<H>(
    open: impl Fn() -> H + Sync,
    write: impl Fn(&H, NewEvent) + Sync,
    n: usize,
) -> (f64, f64, f64) {
    let ready = std::sync::Barrier::new(WRITERS + 1);
    let mut start = Instant::now();
    let mut lat: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let open = &open;
                let write = &write;
                let ready = &ready;
                s.spawn(move || {
                    let h = open();
                    ready.wait();
                    let mut lat = Vec::with_capacity(PER_WRITER);
                    for i in 0..PER_WRITER {
                        let k = (w * PER_WRITER + i) * 7919 % n;
                        let ev = NewEvent::observation(
                            &format!("bench-writer-{w}"),
                            1_900_000_000 + (w * PER_WRITER + i) as i64,
                            &realistic::slug(k),
                            "a live observation from a concurrent writer",
                        );
                        let t = Instant::now();
                        write(&h, ev);
                        lat.push(t.elapsed());
                    }
                    lat
                })
            })
            .collect();
        ready.wait();
        start = Instant::now();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("writer"))
            .collect()
    });
    let took = start.elapsed();
    lat.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (
        lat.len() as f64 / took.as_secs_f64(),
        ms(lat[lat.len() / 2]),
        ms(lat[lat.len() * 99 / 100]),
    )
}

/// One size's PostgreSQL results.
pub struct SizeResult {
    pub rows: Vec<(String, f64, f64)>,
    pub extra: Vec<String>,
}

/// Runs the PostgreSQL comparison at every size; prints and returns the
/// report's markdown.
pub fn run(sizes: &[usize], target_dir: &Path) -> String {
    // `CAIRN_BENCH_PG_URL` (a URL with `?host=...`): an existing server
    // instead of a throwaway cluster; each size's schema `bench_N` is
    // replaced and then kept (for EXPLAIN afterwards).
    let existing = std::env::var("CAIRN_BENCH_PG_URL").ok();
    if existing.is_none() {
        let cluster =
            cluster::cluster().unwrap_or_else(|e| panic!("PostgreSQL could not start: {e}"));
        eprintln!("PostgreSQL cluster in {}", cluster.dir.display());
    }
    let engine = Engine::new();
    let mut results: Vec<(usize, SizeResult)> = Vec::new();
    for &n in sizes {
        let g = realistic::cached(target_dir, n);
        let url = match &existing {
            Some(base) => format!("{base}&options=-csearch_path%3Dbench_{n}"),
            None => cluster::url().expect("cluster url"),
        };
        let target = PgTarget::parse(&url, None).expect("target");
        if existing.is_some() {
            let mut c = cairn::store::pg::connect::connect(&target).expect("connect");
            c.batch_execute(&format!(
                "DROP SCHEMA IF EXISTS \"{}\" CASCADE",
                target.schema
            ))
            .expect("drop schema");
        }
        let store = PgStore::open(&target).expect("open pg");
        let sqlite = Store::open(&g.path).expect("open store");
        let events = source_events(&sqlite).expect("events");
        // Into the empty schema: the copy (`PgStore::push_store`).
        let t = Instant::now();
        let report = store.push_store(&sqlite, |_, _| {}).expect("push");
        let push_s = t.elapsed().as_secs_f64();
        assert_eq!(report.added, events.len());
        assert_eq!(
            store.digest().expect("digest"),
            sqlite.digest().expect("digest"),
            "the pushed schema folds to the source's digest"
        );
        drop(sqlite);
        let push_rate = events.len() as f64 / push_s;
        eprintln!(
            "{n:>6} push: {} events in {:.1} s ({:.0} events/s)",
            events.len(),
            push_s,
            push_rate
        );
        let mut extra = vec![format!(
            "push at {n}: {} events in {:.1} s, {:.0} events/s",
            events.len(),
            push_s,
            push_rate
        )];
        drop(events);
        let mut session = Session::new();
        session.current = Some(g.current.clone());
        let mut hand = Hand::new(&target);
        let mut rows = Vec::new();
        let cases = cases();
        let sqls: Vec<String> = cases.iter().map(pg_hand).collect();
        for (c, sql) in cases.iter().zip(&sqls) {
            let ours = engine
                .run_value_pg(&store, &session, &c.tq, Surface::Read)
                .unwrap_or_else(|d| panic!("{}: {}", c.tq, d.message));
            let theirs = hand.read(&store, engine.time_limit, sql, &g.current);
            assert_eq!(
                answer_of(&ours),
                theirs,
                "answers differ at {n}: {}",
                c.name
            );
        }
        // ROUNDS passes over every case, each case's ours and hand timed
        // alternately; the median over all of a case's samples. A burst of
        // noise on the shared machine (PostgreSQL's own processes share the
        // two cores) lands in one pass of one case, not in all its samples.
        let mut samples: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); cases.len()];
        for _ in 0..ROUNDS {
            for ((c, sql), (a, b)) in cases.iter().zip(&sqls).zip(samples.iter_mut()) {
                pair_samples(
                    || {
                        black_box(
                            engine
                                .run_value_pg(&store, &session, &c.tq, Surface::Read)
                                .ok(),
                        );
                    },
                    || {
                        black_box(hand.read(&store, engine.time_limit, sql, &g.current));
                    },
                    300,
                    Duration::from_millis(700),
                    a,
                    b,
                );
            }
        }
        for (c, (a, b)) in cases.iter().zip(samples.iter_mut()) {
            let (t_ours, t_hand) = (median(a), median(b));
            eprintln!(
                "{n:>6} pg {:<45} ours {:>9} ms  hand {:>9} ms  {:>8.2}x  ({} pairs)",
                c.name,
                fmt_ms(t_ours),
                fmt_ms(t_hand),
                t_ours / t_hand,
                a.len()
            );
            rows.push((c.name.clone(), t_ours, t_hand));
        }
        // Claim-one: ours (the whole write query) vs the best hand claim
        // (one UPDATE of the first ready task, SKIP LOCKED, autocommit).
        let mut writer = session.clone();
        writer.agent = Some("bench/1".to_string());
        let hand_claim = "UPDATE tasks SET claim_owner = 'hand', claim_until = extract(epoch from now())::bigint + 900
            WHERE id = (SELECT t.id FROM tasks t
                WHERE t.status IN ('open', 'active') AND substr(t.slug, 1, 1) <> '@'
                  AND NOT EXISTS (SELECT 1 FROM edges e JOIN tasks d ON d.id = e.dst_id
                                  WHERE e.src_id = t.id AND e.type = 'depends-on'
                                    AND d.status NOT IN ('completed', 'abandoned'))
                  AND NOT EXISTS (SELECT 1 FROM tasks c WHERE c.parent_task_id = t.id
                                    AND c.status NOT IN ('completed', 'abandoned'))
                  AND NOT (t.claim_owner IS NOT NULL AND t.claim_until > extract(epoch from now())::bigint)
                ORDER BY t.slug LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING slug";
        let release = "(-> (mine) (:release!))";
        let claimed = engine
            .run_value_pg(&store, &writer, CLAIM_ONE, Surface::Write)
            .unwrap_or_else(|d| panic!("claim: {}", d.message));
        engine
            .run_value_pg(&store, &writer, release, Surface::Write)
            .unwrap_or_else(|d| panic!("release: {}", d.message));
        let first = hand.run(hand_claim, "");
        hand.client
            .execute("UPDATE tasks SET claim_owner = NULL, claim_until = NULL WHERE claim_owner = 'hand'", &[])
            .expect("reset");
        assert_eq!(
            answer_of(&claimed),
            first,
            "claim-one takes the first ready task"
        );
        // Only the claim is timed; each is released untimed.
        let t_claim = {
            let mut samples = Vec::new();
            for _ in 0..31 {
                let t = Instant::now();
                black_box(
                    engine
                        .run_value_pg(&store, &writer, CLAIM_ONE, Surface::Write)
                        .ok(),
                );
                samples.push(t.elapsed().as_secs_f64() * 1e3);
                let _ = engine.run_value_pg(&store, &writer, release, Surface::Write);
            }
            samples.sort_by(|a, b| a.total_cmp(b));
            samples[samples.len() / 2]
        };
        let t_claim_hand = median_ms(|| {
            black_box(hand.run(hand_claim, ""));
            hand.client
                .execute("UPDATE tasks SET claim_owner = NULL, claim_until = NULL WHERE claim_owner = 'hand'", &[])
                .expect("reset");
        });
        let t_reset = median_ms(|| {
            hand.client
                .execute("UPDATE tasks SET claim_owner = NULL, claim_until = NULL WHERE claim_owner = 'hand'", &[])
                .expect("reset");
        });
        let (claim_ours, claim_hand) = (t_claim, t_claim_hand - t_reset);
        eprintln!(
            "{n:>6} pg claim-one: ours {} ms (whole write query), hand {} ms (one UPDATE)",
            fmt_ms(claim_ours),
            fmt_ms(claim_hand)
        );
        rows.push(("claim-one (write)".to_string(), claim_ours, claim_hand));
        // Observe: 8 concurrent writers, PostgreSQL and SQLite.
        let (pg_rate, pg_p50, pg_p99) = observe(
            || PgStore::open(&target).expect("open writer"),
            |s, ev| {
                s.write(&[ev]).expect("write");
            },
            n,
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let copy = dir.path().join("cairn.db");
        std::fs::copy(&g.path, &copy).expect("copy store");
        drop(Store::open(&copy).expect("open copy"));
        let (sq_rate, sq_p50, sq_p99) = observe(
            || Store::open(&copy).expect("open writer"),
            |s, ev| {
                s.write(&[ev]).expect("write");
            },
            n,
        );
        drop(dir);
        eprintln!(
            "{n:>6} observe, {WRITERS} writers × {PER_WRITER}: PostgreSQL {pg_rate:.0} events/s p50 {pg_p50:.2} ms p99 {pg_p99:.2} ms; SQLite {sq_rate:.0} events/s p50 {sq_p50:.2} ms p99 {sq_p99:.2} ms"
        );
        extra.push(format!(
            "observe at {n} ({WRITERS} writers × {PER_WRITER} single-event writes): PostgreSQL {pg_rate:.0} events/s, p50 {pg_p50:.2} ms, p99 {pg_p99:.2} ms; SQLite {sq_rate:.0} events/s, p50 {sq_p50:.2} ms, p99 {sq_p99:.2} ms"
        ));
        results.push((n, SizeResult { rows, extra }));
        // Free the size's schema before the next one.
        drop(hand);
        if existing.is_none() {
            let _ = store
                .client()
                .batch_execute(&format!("DROP SCHEMA \"{}\" CASCADE", target.schema));
        }
    }
    let mut md = String::new();
    md.push_str("| query (PostgreSQL) |");
    for (n, _) in &results {
        md.push_str(&format!(" {n}: ours ms | hand ms | ratio |"));
    }
    md.push('\n');
    md.push_str("|---|");
    for _ in &results {
        md.push_str("---:|---:|---:|");
    }
    md.push('\n');
    if let Some((_, first)) = results.first() {
        for (i, (name, _, _)) in first.rows.iter().enumerate() {
            md.push_str(&format!("| {name} |"));
            for (_, r) in &results {
                let (_, o, h) = &r.rows[i];
                md.push_str(&format!(
                    " {} | {} | {:.2}× |",
                    fmt_ms(*o),
                    fmt_ms(*h),
                    o / h
                ));
            }
            md.push('\n');
        }
    }
    for (_, r) in &results {
        for e in &r.extra {
            md.push_str(&format!("\n{e}"));
        }
    }
    md.push('\n');
    md
}
