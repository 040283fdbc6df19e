//! Profiling aid for the engine's fixed cost per read (issue 23): runs one
//! TQ query N times through `Engine::run_value` on the warm reader, then its
//! hand SQL N times on a warm read-only connection, so a profiler
//! (`valgrind --tool=callgrind`, `perf record`) can compare the two.
//! `cargo run --release --example fixed_cost -- DB CURRENT 'TQ' 'SQL' [N]`.

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
    let store = Store::open(std::path::Path::new(db))?;
    let engine = Engine::new();
    let mut session = Session::new();
    session.current = Some(current.clone());
    let t = std::time::Instant::now();
    for _ in 0..n {
        ours(&engine, &store, &session, tq);
    }
    let ours_t = t.elapsed();
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let t = std::time::Instant::now();
    for _ in 0..n {
        hand(&conn, sql, current)?;
    }
    let hand_t = t.elapsed();
    println!(
        "ours {:.2} us, hand {:.2} us per run",
        ours_t.as_secs_f64() * 1e6 / n as f64,
        hand_t.as_secs_f64() * 1e6 / n as f64
    );
    Ok(())
}

#[inline(never)]
fn ours(engine: &Engine, store: &Store, session: &Session, tq: &str) {
    std::hint::black_box(engine.run_value(store, session, tq, Surface::Read).ok());
}

#[inline(never)]
fn hand(conn: &Connection, sql: &str, current: &str) -> rusqlite::Result<()> {
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
