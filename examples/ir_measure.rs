//! Measures the IR rewrites on a generated store (docs/planner.md
//! "Measured"): for each query, the median time optimized and with
//! `--no-optimize`, and the optimized `EXPLAIN QUERY PLAN`.
//! `cargo run --release --example ir_measure -- [TASKS]` (default 10,000).

#[path = "../benches/support/gen.rs"]
mod generator;

use std::time::{Duration, Instant};

use cairn::session::Session;
use cairn::tq::Surface;
use cairn::tq::engine::Engine;

fn median(engine: &Engine, store: &cairn::store::Store, s: &Session, q: &str) -> Duration {
    let mut times = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        let _ = engine.run(store, s, q, Surface::Read);
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let dir = std::env::temp_dir().join(format!("cairn-ir-measure-{n}"));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("cairn.db");
    let store = if path.exists() {
        cairn::store::Store::open(&path).unwrap_or_else(|e| panic!("{e}"))
    } else {
        generator::generate(&path, n)
    };
    let mut session = Session::new();
    session.current = Some(generator::slug(n / 2));
    let on = Engine::new();
    let mut off = Engine::new();
    off.optimize = false;
    let mut queries: Vec<String> = cairn::tq::registry::builtin_views()
        .iter()
        .map(|v| format!("(query \"{}\")", v.name))
        .collect();
    queries.extend(
        [
            "(-> (current) (:ids))",
            "(-> (active) (:count))",
            "(-> (active) (:minus (dormant)) (:union (-> (all) (:where (has :parent)))) (:count))",
            "(-> (all) (:where (= (count (:follow :depends-on)) 0)) (:count))",
            "(-> (active) (:sort :created-ts :desc) (:take 5) (:ids))",
        ]
        .map(String::from),
    );
    for q in &queries {
        let a = on.run(&store, &session, q, Surface::Read);
        let b = off.run(&store, &session, q, Surface::Read);
        assert!(a.is_ok(), "{q}: {a:?}");
        assert!(a == b, "answers differ for {q}");
        let (t_on, t_off) = (
            median(&on, &store, &session, q),
            median(&off, &store, &session, q),
        );
        println!(
            "{q}\n  optimized {:>9.3} ms   unoptimized {:>9.3} ms   ({:.1}×)",
            t_on.as_secs_f64() * 1e3,
            t_off.as_secs_f64() * 1e3,
            t_off.as_secs_f64() / t_on.as_secs_f64().max(1e-9)
        );
        if std::env::var_os("IR_MEASURE_PLAN").is_some()
            && let Ok(ex) = on.explain(&store, &session, q, Surface::Read)
        {
            for st in ex.statements {
                for row in st.plan {
                    println!("    {row}");
                }
            }
        }
    }
}
