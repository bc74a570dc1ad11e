//! Operator fault drills (issue 18, `make drills`): a seeded burst of creates, updates and deletes across the three
//! kinds ([`burst`]), the end-state checks every drill shares ([`check`]: convergence, objects lost, duplicate
//! children, orphans, status regressions, Jobs created twice) and the one figure line each drill prints.
//!
//! Sizes and lengths come from the environment so `make drills` stays bounded and `make drills-full` runs the
//! issue's sizes: [`env_usize`] reads them.

pub mod burst;
pub mod check;
pub mod metrics;

use std::time::Duration;

/// `name` from the environment as a number, else `default` (a value that does not parse is an error, not a default).
///
/// # Panics
/// When the variable is set but is not a number: a typo must not silently run another size.
pub fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a number")),
        Err(_) => default,
    }
}

/// The drill's seed: `DRILL_SEED` when set (to replay a run), else the clock's nanoseconds.
pub fn seed() -> u64 {
    std::env::var("DRILL_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
}

/// A small seeded pseudo-random generator (xorshift64*): the same seed replays the same burst and kill points.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is mapped to a fixed non-zero state).
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1) ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// A duration between `low` and `high` (milliseconds).
    pub fn millis(&mut self, low: u64, high: u64) -> Duration {
        Duration::from_millis(low + self.below(high.saturating_sub(low) + 1))
    }
}

/// The figures of one drill: the line `make drills` prints and docs/RELIABILITY.md quotes.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// Time from the end of the fault to every check passing.
    pub converge: Duration,
    /// Objects the burst left in place that are missing (or replaced by another UID).
    pub lost: usize,
    /// Owners with more than one Deployment or Job.
    pub duplicates: usize,
    /// Children whose owner is gone (after the garbage collector ran), or that have no owner.
    pub orphans: usize,
    /// Status regressions seen while the drill ran (observedGeneration going back, a finished run unfinished).
    pub regressions: usize,
    /// What each regression was (kind/name: from -> to), shown when the drill fails.
    pub regression_details: Vec<String>,
    /// Runs whose Job was created more often than the run had incarnations (audit log): per run, the counts and the
    /// audit trail of its Job and run ([`check::jobs_created_twice`]), shown when the drill fails.
    pub jobs_twice: Vec<String>,
}

impl Figures {
    /// Prints `DRILL <name> converge_s=.. lost=.. duplicates=.. orphans=.. regressions=.. jobs_created_twice=..
    /// <extra>` on stdout (shown by `cargo test -- --nocapture`).
    pub fn print(&self, name: &str, extra: &str) {
        println!(
            "DRILL {name} converge_s={:.1} lost={} duplicates={} orphans={} regressions={} jobs_created_twice={} {extra}",
            self.converge.as_secs_f64(),
            self.lost,
            self.duplicates,
            self.orphans,
            self.regressions,
            self.jobs_twice.len()
        );
    }

    /// Asserts the zeros (never a time).
    ///
    /// # Panics
    /// When any count is not zero.
    pub fn assert_zeros(&self, name: &str) {
        let counts = [
            self.lost,
            self.duplicates,
            self.orphans,
            self.regressions,
            self.jobs_twice.len(),
        ];
        assert_eq!(counts, [0; 5], "{name}: {self:?}");
    }
}
