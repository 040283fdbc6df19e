//! The clock the tools stamp events with and the clock claims are judged by
//! (spec/tq.md §9 "Events": a claim is live while its `until` is in the
//! future; docs/store.md "Claims: one clock decides").
//!
//! Two readings: [`Clock::now`] stamps events, mints slugs and names handoff
//! files; [`Clock::claims_now`] — the store's clock — decides whether a claim
//! is live, when a new claim ends, and stamps claim-register events. In
//! production both are the system clock of the process that reads or writes
//! the store (on a server, the server's). `CAIRN_NOW` on the CLI
//! ([`Clock::Stamped`]) fixes only the stamp, for reproducible transcripts:
//! a caller's fake clock can neither take another agent's live claim nor
//! record a claim that has already lapsed. [`Clock::Fixed`] fixes both
//! readings; only a program linking the library (the tests) can build it.

/// A source of "now" in Unix seconds (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// The system clock (`store::now()`) for both readings.
    #[default]
    System,
    /// Events stamped at a fixed instant (Unix seconds UTC; `CAIRN_NOW`),
    /// claims judged by the system clock.
    Stamped(i64),
    /// Both readings a fixed instant, Unix seconds UTC: tests that let a
    /// lease lapse without sleeping. Never built from the environment.
    Fixed(i64),
}

impl Clock {
    /// The stamp clock: events, slugs and handoff names, Unix seconds UTC.
    pub fn now(self) -> i64 {
        match self {
            Clock::System => crate::store::now(),
            Clock::Stamped(ts) | Clock::Fixed(ts) => ts,
        }
    }

    /// The store clock claims are judged by (live or lapsed, a new claim's
    /// `until`, the stamp of a claim or release), Unix seconds UTC: the
    /// system clock unless the whole clock is [`Clock::Fixed`].
    pub fn claims_now(self) -> i64 {
        match self {
            Clock::System | Clock::Stamped(_) => crate::store::now(),
            Clock::Fixed(ts) => ts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_reads_its_instant_system_reads_today() {
        assert_eq!(Clock::Fixed(1_000).now(), 1_000);
        assert_eq!(Clock::Fixed(1_000).claims_now(), 1_000);
        assert!(Clock::System.now() > 1_700_000_000);
        assert_eq!(Clock::Stamped(1_000).now(), 1_000);
        assert!(Clock::Stamped(1_000).claims_now() > 1_700_000_000);
    }
}
