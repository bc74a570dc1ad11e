//! Test-only failpoints for the crash-safety test (issue 4: crash after the Deployment is applied).
//!
//! When the environment variable [`FAILPOINT_ENV`] names a failpoint, reaching it ends the process at once with exit
//! code [`FAILPOINT_EXIT_CODE`], without running destructors or releasing the Lease, as a crash would. Unset (the
//! production case) a failpoint costs one environment lookup.

/// Environment variable naming the failpoint to trigger, e.g. `after-deployment-apply`.
pub const FAILPOINT_ENV: &str = "MODEL_FLEET_FAILPOINT";

/// Exit code of a triggered failpoint.
pub const FAILPOINT_EXIT_CODE: i32 = 86;

/// Failpoint right after a child Deployment has been applied.
pub const AFTER_DEPLOYMENT_APPLY: &str = "after-deployment-apply";

/// Whether `name` is the failpoint configured in `configured` (pure part of [`hit`]).
pub fn matches(configured: Option<&str>, name: &str) -> bool {
    configured.is_some_and(|value| value.split(',').any(|v| v.trim() == name))
}

/// Ends the process abruptly if [`FAILPOINT_ENV`] names `name` (comma-separated list allowed).
pub fn hit(name: &str) {
    let configured = std::env::var(FAILPOINT_ENV).ok();
    if matches(configured.as_deref(), name) {
        eprintln!("failpoint {name} triggered: exiting with code {FAILPOINT_EXIT_CODE}");
        std::process::exit(FAILPOINT_EXIT_CODE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_only_the_named_failpoints() {
        assert!(matches(
            Some("after-deployment-apply"),
            AFTER_DEPLOYMENT_APPLY
        ));
        assert!(matches(
            Some("x, after-deployment-apply"),
            AFTER_DEPLOYMENT_APPLY
        ));
        assert!(!matches(Some("after-deployment"), AFTER_DEPLOYMENT_APPLY));
        assert!(!matches(None, AFTER_DEPLOYMENT_APPLY));
    }
}
