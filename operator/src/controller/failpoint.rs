//! Test-only failpoints for the crash-safety tests (issue 4: crash after the Deployment is applied).
//!
//! The hidden `run --test-failpoint NAME` flag arms one [`Failpoint`] in the operator's configuration; reaching it
//! ends the process at once with exit code [`FAILPOINT_EXIT_CODE`], without running destructors or releasing the
//! Lease, as a crash would. Unarmed (the production case) a failpoint costs one comparison.

/// Exit code of a triggered failpoint.
pub const FAILPOINT_EXIT_CODE: i32 = 86;

/// The places a test can crash the operator at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Failpoint {
    /// Right after a child Deployment has been applied (before the status write).
    AfterDeploymentApply,
}

impl Failpoint {
    /// The flag spelling, e.g. `after-deployment-apply`.
    pub fn as_str(self) -> &'static str {
        match self {
            Failpoint::AfterDeploymentApply => "after-deployment-apply",
        }
    }
}

/// Ends the process abruptly if `armed` is `point`.
pub fn hit(armed: Option<Failpoint>, point: Failpoint) {
    if armed == Some(point) {
        eprintln!(
            "failpoint {} triggered: exiting with code {FAILPOINT_EXIT_CODE}",
            point.as_str()
        );
        std::process::exit(FAILPOINT_EXIT_CODE);
    }
}
