//! Every built-in view on a generated store of 10,000 tasks (criterion).

#[path = "support/gen.rs"]
mod generator;

use std::time::Duration;

use cairn::session::Session;
use cairn::tq::engine::Engine;
use cairn::tq::{Surface, registry};
use criterion::{Criterion, criterion_group, criterion_main};

fn views(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = generator::generate(&dir.path().join("cairn.db"), 10_000);
    let mut session = Session::new();
    session.current = Some(generator::slug(5_000));
    let engine = Engine::new();
    let mut group = c.benchmark_group("view");
    for v in registry::builtin_views() {
        let q = format!("(query \"{}\")", v.name);
        // Fail loudly if a view errors on the generated store.
        engine
            .run(&store, &session, &q, Surface::Read)
            .expect("view runs");
        group.bench_function(v.name, |b| {
            b.iter(|| engine.run(&store, &session, &q, Surface::Read))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    targets = views
}
criterion_main!(benches);
