//! What the bench generators share (`gen.rs`, `realistic.rs`): a small
//! deterministic PRNG, so runs are comparable, and a batch writer that sends
//! events through the write boundary (`Store::write`) in batches.

use cairn::store::{NewEvent, Store};

/// A 64-bit LCG (Knuth's MMIX constants).
pub struct Lcg(pub u64);

impl Lcg {
    /// Next value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }

    /// True with probability `pct`%.
    #[allow(dead_code)]
    pub fn pct(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

/// Events collected for `store`, written whenever `batch` are pending and
/// once more by [`Batch::finish`]. Panics on a write error (benches only).
pub struct Batch<'a> {
    store: &'a Store,
    batch: usize,
    /// The pending events.
    pub events: Vec<NewEvent>,
}

impl<'a> Batch<'a> {
    /// A writer of batches of `batch` events.
    pub fn new(store: &'a Store, batch: usize) -> Batch<'a> {
        Batch {
            store,
            batch,
            events: Vec::with_capacity(batch + 64),
        }
    }

    /// Adds one event.
    pub fn push(&mut self, ev: NewEvent) {
        self.events.push(ev);
    }

    /// Writes the pending events when there are `batch` or more.
    pub fn flush_full(&mut self) {
        if self.events.len() >= self.batch {
            self.store.write(&self.events).expect("write");
            self.events.clear();
        }
    }

    /// Writes what is pending.
    pub fn finish(mut self) {
        self.store.write(&self.events).expect("write");
        self.events.clear();
    }
}
