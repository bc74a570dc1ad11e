//! Structured logs through `tracing-subscriber`.
//!
//! The filter comes from `RUST_LOG` (default `info`); the format from `--log-format`: `json` (one JSON object per
//! line, the default, for log collectors) or `text` (human-readable, for local runs). Text is coloured only when
//! stderr is a terminal and `NO_COLOR` is unset or empty: in a pod, `kubectl logs` shows no escape codes.

use std::ffi::OsStr;
use std::io::IsTerminal;

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

/// Whether the logs carry ANSI colour codes: text logs to a terminal only, unless `NO_COLOR` (its value given) is
/// set to something non-empty (<https://no-color.org/>). JSON logs never do.
pub fn ansi_colours(format: LogFormat, stderr_is_terminal: bool, no_color: Option<&OsStr>) -> bool {
    format == LogFormat::Text && stderr_is_terminal && no_color.is_none_or(OsStr::is_empty)
}

/// Installs the global tracing subscriber writing to stderr.
///
/// # Errors
/// When a global subscriber is already installed (e.g. called twice).
pub fn init(format: LogFormat) -> anyhow::Result<()> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let no_color = std::env::var_os("NO_COLOR");
    let ansi = ansi_colours(format, std::io::stderr().is_terminal(), no_color.as_deref());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    let result = match format {
        LogFormat::Json => builder.json().with_current_span(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
    result.map_err(|e| anyhow::anyhow!("installing the log subscriber: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_coloured_only_on_a_terminal_without_no_color() {
        assert!(ansi_colours(LogFormat::Text, true, None));
        assert!(ansi_colours(LogFormat::Text, true, Some(OsStr::new(""))));
        // A pod's stderr is a pipe: `kubectl logs` must not show escape codes.
        assert!(!ansi_colours(LogFormat::Text, false, None));
        assert!(!ansi_colours(LogFormat::Text, true, Some(OsStr::new("1"))));
    }

    #[test]
    fn json_is_never_coloured() {
        assert!(!ansi_colours(LogFormat::Json, true, None));
        assert!(!ansi_colours(LogFormat::Json, false, None));
    }
}
