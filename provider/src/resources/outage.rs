//! Riding out a short API server outage in a polling loop (the `wait_for` wait, the delete wait): a read that fails
//! because the API server is unreachable or overloaded is retried for [`GRACE`], so one reset connection or a `503`
//! during an API server restart does not fail (and, after a create, taint) a resource whose object was written. Other
//! failures, and an outage longer than [`GRACE`], end the loop with the error as before.

use std::time::{Duration, Instant};

/// How long a polling loop keeps retrying reads that fail with [`is_transient`] errors, counted from the start of the
/// first failed request: 30 seconds, about what a kube-apiserver restart behind a load balancer takes. A request that
/// itself hangs until the client's read timeout (60 s, `client.rs`) is not retried: a stalled API server ends the loop
/// at that timeout, as before.
pub const GRACE: Duration = Duration::from_secs(30);

/// Whether `error` can pass by itself: the connection failed, was reset or timed out (`HyperError`, `Service`), or
/// the API server answered `429 Too Many Requests` (API Priority and Fairness), `500`, `502`, `503` or `504`. Every
/// other answer (401, 403, a type's 404, 409, 422) says something about the request, and retrying cannot change it.
pub fn is_transient(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => matches!(status.code, 429 | 500 | 502 | 503 | 504),
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// The failed reads of one polling loop since its last successful one.
#[derive(Debug)]
pub struct Outage {
    since: Option<Instant>,
    grace: Duration,
}

impl Default for Outage {
    /// No outage yet, tolerated for [`GRACE`].
    fn default() -> Self {
        Outage {
            since: None,
            grace: GRACE,
        }
    }
}

impl Outage {
    /// Records a successful read: the outage, if any, is over.
    pub fn ended(&mut self) {
        self.since = None;
    }

    /// Records a read sent at `asked` that failed with `error`; whether the loop should poll again: `error` is
    /// transient and the outage (counted from its first failed request) is shorter than [`GRACE`].
    pub fn tolerates(&mut self, asked: Instant, error: &kube::Error) -> bool {
        if !is_transient(error) {
            return false;
        }
        self.since.get_or_insert(asked).elapsed() < self.grace
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> kube::Error {
        kube::Error::Api(Box::new(
            kube::core::Status::failure("m", "R").with_code(code),
        ))
    }

    #[test]
    fn only_unreachable_or_overloaded_api_servers_are_transient() {
        for code in [429, 500, 502, 503, 504] {
            assert!(is_transient(&status(code)), "{code}");
        }
        for code in [400, 401, 403, 404, 409, 410, 422] {
            assert!(!is_transient(&status(code)), "{code}");
        }
        let timeout: Box<dyn std::error::Error + Send + Sync> = "operation timed out".into();
        assert!(is_transient(&kube::Error::Service(timeout)));
        assert!(!is_transient(&kube::Error::SerdeError(
            serde_json::from_str::<u8>("x").unwrap_err()
        )));
    }

    #[test]
    fn an_outage_is_tolerated_for_the_grace_from_its_first_failed_request() {
        let mut outage = Outage::default();
        let now = Instant::now();
        assert!(outage.tolerates(now, &status(503)));
        assert!(!outage.tolerates(now, &status(403)), "not transient");
        // A first request sent longer than the grace ago (it hung until the read timeout): not retried.
        let long_ago = now.checked_sub(GRACE + Duration::from_secs(1)).unwrap();
        assert!(!Outage::default().tolerates(long_ago, &status(503)));
        // The outage counts from its first failure, not from the latest request; a success starts it again.
        let mut outage = Outage {
            since: None,
            grace: Duration::from_millis(50),
        };
        assert!(outage.tolerates(Instant::now(), &status(502)));
        std::thread::sleep(Duration::from_millis(60));
        assert!(!outage.tolerates(Instant::now(), &status(502)));
        outage.ended();
        assert!(outage.tolerates(Instant::now(), &status(502)));
    }
}
