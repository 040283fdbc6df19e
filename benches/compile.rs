//! Compile speed (criterion). Run: `cargo bench --bench compile`.
//!
//! - Front-end: parse + check (`tq::compile`) of the longest grammar example,
//!   and of every example in turn.
//! - Whole compiler, text → SQL (lex, parse, check, plan, lower; no
//!   database): every §8 read query and every built-in view.

#[path = "../tests/common/queries.rs"]
mod queries;

use std::hint::black_box;
use std::time::Duration;

use cairn::tq::ast::Surface;
use cairn::tq::exec::read_statement;
use cairn::tq::front;
use cairn::tq::plan::{Catalog, plan};
use cairn::tq::registry;
use criterion::{Criterion, criterion_group, criterion_main};

fn examples() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("grammar/examples");
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn bench_compile(c: &mut Criterion) {
    let all = examples();
    let longest = all
        .iter()
        .max_by_key(|s| s.len())
        .cloned()
        .unwrap_or_default();
    let keys: Vec<String> = vec!["priority".into(), "objective".into()];
    c.bench_function("compile longest example", |b| {
        b.iter(|| cairn::tq::compile(black_box(&longest), black_box(&keys)))
    });
    c.bench_function("compile every example", |b| {
        b.iter(|| {
            for q in &all {
                let _ = black_box(cairn::tq::compile(black_box(q), &keys));
            }
        })
    });
}

fn text_to_sql(c: &mut Criterion) {
    let cat = Catalog {
        current: Some("2026-01-01-parent".into()),
        ..Default::default()
    };
    let mut qs: Vec<(String, String)> = queries::READ_QUERIES
        .iter()
        .map(|(n, q)| (n.to_string(), q.to_string()))
        .collect();
    for v in registry::builtin_views() {
        qs.push((
            format!("view_{}", v.name),
            format!("(query \"{}\")", v.name),
        ));
    }
    let mut group = c.benchmark_group("compile");
    for (name, q) in &qs {
        group.bench_function(name.as_str(), |b| {
            b.iter(|| {
                let typed = front::compile(black_box(q), &[]).expect("compiles");
                let p = plan(&typed, Surface::Read, &cat).expect("plans");
                read_statement(&p)
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(400));
    targets = bench_compile, text_to_sql
}
criterion_main!(benches);
