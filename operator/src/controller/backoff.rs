//! Per-object exponential backoff for `error_policy`: the n-th consecutive failure of one object waits
//! `base * 2^(n-1)`, capped at `max`; a successful reconcile resets that object's count. Objects do not share a
//! count, so one broken object cannot slow down the others (DESIGN.md section 5: errors requeue with backoff).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// The pure delay rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackoffPolicy {
    /// Delay after the first failure.
    pub base: Duration,
    /// Upper bound of any delay.
    pub max: Duration,
}

impl Default for BackoffPolicy {
    /// 1 s doubling up to 5 minutes.
    fn default() -> Self {
        Self {
            base: Duration::from_secs(1),
            max: Duration::from_secs(300),
        }
    }
}

impl BackoffPolicy {
    /// Delay before retrying after `failures` consecutive failures (`failures >= 1`; 0 is treated as 1).
    pub fn delay(&self, failures: u32) -> Duration {
        let exponent = failures.saturating_sub(1).min(32);
        let factor = 1u64 << exponent;
        let millis = u64::try_from(self.base.as_millis())
            .unwrap_or(u64::MAX)
            .saturating_mul(factor);
        Duration::from_millis(millis).min(self.max)
    }
}

/// Consecutive-failure counts keyed by object (`kind/namespace/name`), shared by a controller's reconcile and
/// error policy.
#[derive(Debug, Default)]
pub struct ErrorBackoff {
    policy: BackoffPolicy,
    failures: Mutex<HashMap<String, u32>>,
}

impl ErrorBackoff {
    /// Creates an empty tracker using `policy`.
    pub fn new(policy: BackoffPolicy) -> Self {
        Self {
            policy,
            failures: Mutex::default(),
        }
    }

    /// Records one more failure of `key` and returns how long to wait before retrying it.
    pub fn failed(&self, key: &str) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let count = failures.entry(key.to_owned()).or_insert(0);
        *count = count.saturating_add(1);
        self.policy.delay(*count)
    }

    /// Forgets the failures of `key` after a successful reconcile (or its deletion).
    pub fn succeeded(&self, key: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        failures.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_doubles_and_is_capped() {
        let policy = BackoffPolicy {
            base: Duration::from_millis(500),
            max: Duration::from_secs(10),
        };
        let delays: Vec<u128> = (1..=7).map(|n| policy.delay(n).as_millis()).collect();
        assert_eq!(delays, vec![500, 1000, 2000, 4000, 8000, 10000, 10000]);
        assert_eq!(policy.delay(0), Duration::from_millis(500));
        assert_eq!(policy.delay(u32::MAX), Duration::from_secs(10));
    }

    #[test]
    fn counts_are_per_object_and_reset_on_success() {
        let backoff = ErrorBackoff::new(BackoffPolicy::default());
        assert_eq!(backoff.failed("a"), Duration::from_secs(1));
        assert_eq!(backoff.failed("a"), Duration::from_secs(2));
        assert_eq!(backoff.failed("b"), Duration::from_secs(1));
        backoff.succeeded("a");
        assert_eq!(backoff.failed("a"), Duration::from_secs(1));
        assert_eq!(backoff.failed("b"), Duration::from_secs(2));
    }
}
