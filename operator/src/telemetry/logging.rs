//! Structured logs through `tracing-subscriber`.
//!
//! The filter comes from `RUST_LOG` (default `info`); the format from `--log-format`: `json` (one JSON object per
//! line, the default, for log collectors) or `text` (human-readable, for local runs).

use tracing_subscriber::EnvFilter;

/// Output format of the logs (`--log-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One JSON object per line with timestamp, level, target, fields and span context.
    #[default]
    Json,
    /// Human-readable single-line text.
    Text,
}

/// Installs the global tracing subscriber writing to stderr.
///
/// # Errors
/// When a global subscriber is already installed (e.g. called twice).
pub fn init(format: LogFormat) -> anyhow::Result<()> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let result = match format {
        LogFormat::Json => builder.json().with_current_span(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
    result.map_err(|e| anyhow::anyhow!("installing the log subscriber: {e}"))
}
