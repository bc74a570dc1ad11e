//! Logs on stderr (stdout belongs to the handshake), at the level Terraform's `TF_LOG_PROVIDER`
//! or `TF_LOG` asks for (`TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR`, `JSON` = trace, `OFF`).
//! Terraform relays plugin stderr into its own log.

use tracing_subscriber::EnvFilter;

/// The tracing filter directive for a `TF_LOG`-style level (unset or unrecognised: `warn`).
/// Transport crates stay at `info` at most, their trace output drowns everything else.
pub fn filter_directive(level: Option<&str>) -> String {
    let level = match level.map(|l| l.trim().to_ascii_lowercase()).as_deref() {
        Some("trace" | "json") => "trace",
        Some("debug") => "debug",
        Some("info") => "info",
        Some("error") => "error",
        Some("off") => "off",
        _ => "warn",
    };
    let quiet = if matches!(level, "trace" | "debug") {
        "info"
    } else {
        level
    };
    format!(
        "{level},h2={quiet},hyper={quiet},hyper_util={quiet},tower={quiet},rustls={quiet},tonic={quiet}"
    )
}

/// Installs the stderr subscriber. `env` reads environment variables.
pub fn init(env: impl Fn(&str) -> Option<String>) {
    let level = env("TF_LOG_PROVIDER").or_else(|| env("TF_LOG"));
    let filter = EnvFilter::try_new(filter_directive(level.as_deref()))
        .unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tf_log_levels() {
        assert!(filter_directive(Some("DEBUG")).starts_with("debug,"));
        assert!(filter_directive(Some("JSON")).starts_with("trace,"));
        assert!(filter_directive(None).starts_with("warn,"));
        assert!(filter_directive(Some("bogus")).starts_with("warn,"));
        assert!(EnvFilter::try_new(filter_directive(Some("trace"))).is_ok());
    }
}
