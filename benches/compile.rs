//! Text → SQL (lex, parse, check, plan, lower) for the §8 read queries and
//! the built-in views (criterion). No database involved.

#[path = "../tests/common/queries.rs"]
mod queries;

use std::time::Duration;

use cairn::tq::ast::Surface;
use cairn::tq::exec::read_statement;
use cairn::tq::front;
use cairn::tq::plan::{Catalog, plan};
use cairn::tq::registry;
use criterion::{Criterion, criterion_group, criterion_main};

fn compile_all(c: &mut Criterion) {
    let cat = Catalog {
        current: Some("2026-01-01-parent".into()),
        ..Default::default()
    };
    let mut qs: Vec<(String, String)> = queries::READ_QUERIES
        .iter()
        .map(|(n, q)| (n.to_string(), q.to_string()))
        .collect();
    for v in registry::builtin_views() {
        qs.push((format!("view_{}", v.name), format!("(query \"{}\")", v.name)));
    }
    let mut group = c.benchmark_group("compile");
    for (name, q) in &qs {
        group.bench_function(name.as_str(), |b| {
            b.iter(|| {
                let typed = front::compile(q, &[]).expect("compiles");
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
    targets = compile_all
}
criterion_main!(benches);
