//! Fuzz target `parse`: bytes → lexer → parser → checker → printer.
//! Never panics; every query that checks round-trips through the canonical
//! printer (spec/tq.md §5). Seeded from ../grammar/examples.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let keys = vec!["priority".to_string(), "objective".to_string()];
    match cairn::tq::compile(text, &keys) {
        Ok(q) => {
            let printed = cairn::tq::print(&q);
            // The canonical form may be longer than the input (`(:sort f)`
            // gains ` :desc`); past the size limit it cannot compile again.
            if printed.len() > cairn::tq::parser::MAX_BYTES {
                return;
            }
            match cairn::tq::compile(&printed, &keys) {
                Ok(again) => {
                    assert!(again == q, "round trip changed the query: {printed}");
                    assert!(cairn::tq::print(&again) == printed, "print is not a fixpoint: {printed}");
                }
                Err(d) => panic!("printed query does not compile: {printed}: {}", d.render_plain()),
            }
        }
        Err(d) => {
            let _ = d.render_plain();
            if text.len() < 4096 {
                let _ = d.render_ariadne(text, false);
            }
        }
    }
});
