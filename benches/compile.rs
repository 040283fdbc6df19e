//! Front-end speed: parse + check (`tq::compile`) of the longest grammar
//! example, and of every example in turn. Run: `cargo bench --bench compile`.

use std::hint::black_box;

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

criterion_group!(benches, bench_compile);
criterion_main!(benches);
