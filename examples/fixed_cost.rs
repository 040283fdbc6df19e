//! Profiling aid for the engine's fixed cost per read (issue 23): runs one
//! TQ query N times through `Engine::run_value` on the warm reader, then its
//! hand SQL N times on a warm read-only connection, so a profiler
//! (`valgrind --tool=callgrind`, `perf record`) can compare the two.
//! `cargo run --release --example fixed_cost -- DB CURRENT 'TQ' 'SQL' [N]`;
//! DB is a `cairn.db` path or a `postgres://` URL (schema `cairn`, hand
//! SQL with `$1` for the current slug, prepared once).

use cairn::session::Session;
use cairn::store::Store;
use cairn::tq::Surface;
use cairn::tq::engine::Engine;
use rusqlite::{Connection, OpenFlags};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, db, current, tq, sql, rest @ ..] = args.as_slice() else {
        return Err("usage: fixed_cost DB CURRENT TQ SQL [N]".into());
    };
    let n: usize = rest.first().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    if db.starts_with("postgres") {
        return pg(db, current, tq, sql, n);
    }
    let store = Store::open(std::path::Path::new(db))?;
    let engine = Engine::new();
    let mut session = Session::new();
    session.current = Some(current.clone());
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let t = std::time::Instant::now();
        ours(&engine, &store, &session, tq);
        a.push(t.elapsed());
        let t = std::time::Instant::now();
        hand(&conn, sql, current)?;
        b.push(t.elapsed());
    }
    a.sort();
    b.sort();
    println!(
        "sqlite medians, interleaved: ours {:.2} us, hand {:.2} us, {:.2}x",
        a[n / 2].as_secs_f64() * 1e6,
        b[n / 2].as_secs_f64() * 1e6,
        a[n / 2].as_secs_f64() / b[n / 2].as_secs_f64()
    );
    Ok(())
}

fn pg(
    db: &str,
    current: &str,
    tq: &str,
    sql: &str,
    n: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let target = cairn::store::pg::PgTarget::parse(db, None)?;
    let store = cairn::store::pg::PgStore::open(&target)?;
    let engine = Engine::new();
    let mut session = Session::new();
    session.current = Some(current.to_string());
    let mut client = cairn::store::pg::connect::connect(&target)?;
    client.batch_execute("SET search_path TO cairn")?;
    let st = client.prepare(sql)?;
    let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let t = std::time::Instant::now();
        ours_pg(&engine, &store, &session, tq);
        a.push(t.elapsed());
        let t = std::time::Instant::now();
        let rows = if st.params().is_empty() {
            client.query(&st, &[])?
        } else {
            client.query(&st, &[&current])?
        };
        std::hint::black_box(rows);
        b.push(t.elapsed());
    }
    a.sort();
    b.sort();
    println!(
        "pg medians, interleaved: ours {:.1} us, hand {:.1} us, {:.2}x",
        a[n / 2].as_secs_f64() * 1e6,
        b[n / 2].as_secs_f64() * 1e6,
        a[n / 2].as_secs_f64() / b[n / 2].as_secs_f64()
    );
    Ok(())
}

#[inline(never)]
fn ours_pg(engine: &Engine, store: &cairn::store::pg::PgStore, session: &Session, tq: &str) {
    std::hint::black_box(engine.run_value_pg(store, session, tq, Surface::Read).ok());
}

/// `CAIRN_FRESH=1`: every run on a new read-only connection (the first
/// query of a process), ours compiling each time, hand preparing each time.
fn fresh() -> bool {
    std::env::var_os("CAIRN_FRESH").is_some()
}

#[inline(never)]
fn ours(engine: &Engine, store: &Store, session: &Session, tq: &str) {
    if fresh() {
        let Ok(mut conn) = store.reader() else { return };
        if let Ok(p) = engine.prepare(&conn, session, tq, Surface::Read) {
            std::hint::black_box(engine.execute_read(&mut conn, &p).ok());
        }
        return;
    }
    std::hint::black_box(engine.run_value(store, session, tq, Surface::Read).ok());
}

#[inline(never)]
fn hand(conn: &Connection, sql: &str, current: &str) -> rusqlite::Result<()> {
    if fresh() {
        let c = Connection::open_with_flags(
            conn.path().unwrap_or_default(),
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        return hand_on(&c, sql, current);
    }
    hand_on(conn, sql, current)
}

fn hand_on(conn: &Connection, sql: &str, current: &str) -> rusqlite::Result<()> {
    let mut st = conn.prepare_cached(sql)?;
    let n = st.column_count();
    let mut rows = if st.parameter_count() > 0 {
        st.query([current])?
    } else {
        st.query([])?
    };
    while let Some(r) = rows.next()? {
        for i in 0..n {
            std::hint::black_box(r.get::<_, rusqlite::types::Value>(i)?);
        }
    }
    Ok(())
}
