//! The clock the tools stamp events with and claims are judged by (spec/tq.md
//! §9 "Events": a claim is live while its `until` is in the future): the
//! system clock in production, a fixed instant in tests and the docs'
//! transcripts (`CAIRN_NOW` on the CLI), so a lease can lapse without
//! sleeping.

/// A source of "now" in Unix seconds (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// The system clock (`store::now()`).
    #[default]
    System,
    /// A fixed instant, Unix seconds UTC (tests, reproducible docs).
    Fixed(i64),
}

impl Clock {
    /// The current time, Unix seconds UTC.
    pub fn now(self) -> i64 {
        match self {
            Clock::System => crate::store::now(),
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
        assert!(Clock::System.now() > 1_700_000_000);
    }
}
