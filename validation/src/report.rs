//! The outcome of one check and how the binary prints and sums them up.

use std::fmt;

/// The outcome of one named check: `PASS name: detail` or `FAIL name: reason`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// Stable check name (e.g. `device-count`, `chat-completion`): scripts may grep for it.
    pub name: &'static str,
    /// `Ok(detail)` when the check passed, `Err(reason)` when it failed; both one line.
    pub outcome: Result<String, String>,
}

impl Check {
    /// A passed check with a one-line detail.
    pub fn pass(name: &'static str, detail: impl Into<String>) -> Self {
        Self {
            name,
            outcome: Ok(detail.into()),
        }
    }

    /// A failed check with a one-line reason.
    pub fn fail(name: &'static str, reason: impl Into<String>) -> Self {
        Self {
            name,
            outcome: Err(reason.into()),
        }
    }

    /// A check from a result: `Ok` passes with its detail, `Err` fails with its reason.
    pub fn from_result(name: &'static str, result: Result<String, String>) -> Self {
        Self {
            name,
            outcome: result,
        }
    }

    /// Whether the check passed.
    pub fn passed(&self) -> bool {
        self.outcome.is_ok()
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line per check, whatever the server sent: newlines in a reason would break `grep`-based reading.
        let one_line = |s: &str| s.replace(['\n', '\r'], " ");
        match &self.outcome {
            Ok(detail) => write!(f, "PASS {}: {}", self.name, one_line(detail)),
            Err(reason) => write!(f, "FAIL {}: {}", self.name, one_line(reason)),
        }
    }
}

/// The exit codes of `model-fleet-check` (docs/MODEL_VALIDATION.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitCode {
    /// 0: every check passed.
    AllPassed = 0,
    /// 1: at least one check failed (its `FAIL` line says why).
    CheckFailed = 1,
    /// 2: the command line is wrong (unknown flag, missing value): nothing was checked.
    Usage = 2,
}

/// The exit code for a list of checks: [`ExitCode::CheckFailed`] when any failed or the list is empty (a run that
/// checked nothing proves nothing), else [`ExitCode::AllPassed`].
pub fn exit_code(checks: &[Check]) -> ExitCode {
    if !checks.is_empty() && checks.iter().all(Check::passed) {
        ExitCode::AllPassed
    } else {
        ExitCode::CheckFailed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_exit_codes() {
        let ok = Check::pass("models", "served name tiny listed");
        let bad = Check::fail("chat-completion", "choices[0].finish_reason: missing\nmore");
        assert_eq!(ok.to_string(), "PASS models: served name tiny listed");
        assert_eq!(
            bad.to_string(),
            "FAIL chat-completion: choices[0].finish_reason: missing more"
        );
        assert_eq!(exit_code(std::slice::from_ref(&ok)), ExitCode::AllPassed);
        assert_eq!(exit_code(&[ok, bad]), ExitCode::CheckFailed);
        assert_eq!(exit_code(&[]), ExitCode::CheckFailed);
    }
}
