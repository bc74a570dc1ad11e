//! Polling with a deadline, for conditions the control plane reaches asynchronously.

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `check` every 200 ms until it returns `Ok(Some(value))`, and returns that value.
///
/// Errors: `what` plus the last observation (`Ok(None)` keeps polling; `Err(e)` is remembered as
/// the last observation and polling continues) when `timeout` passes first.
pub async fn wait_for<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<Option<T>>>,
{
    let deadline = Instant::now() + timeout;
    let mut last = String::from("no observation yet");
    loop {
        match check().await {
            Ok(Some(value)) => return Ok(value),
            Ok(None) => {}
            Err(e) => last = format!("{e:#}"),
        }
        if Instant::now() >= deadline {
            anyhow::bail!("timed out after {timeout:?} waiting for {what} (last error: {last})");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
