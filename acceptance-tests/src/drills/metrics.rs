//! The operator's reconcile-error counter (`model_fleet_reconcile_errors_total`, every kind and step summed) sampled
//! in the background, so a drill reports how the error rate rose during a fault and fell back after it.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Samples of (time, counter total) taken every 500 ms from an operator's /metrics.
#[derive(Debug)]
pub struct ErrorSampler {
    samples: Arc<Mutex<Vec<(Instant, f64)>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The total of `model_fleet_reconcile_errors_total` on `address`'s /metrics; None when it does not answer.
pub fn error_total(address: &str) -> Option<f64> {
    let out = Command::new("curl")
        .args(["-sf", "--max-time", "2"])
        .arg(format!("http://{address}/metrics"))
        .output()
        .ok()?;
    let body = String::from_utf8(out.stdout).ok()?;
    out.status.success().then(|| {
        body.lines()
            .filter(|l| l.starts_with("model_fleet_reconcile_errors_total{"))
            .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
            .sum()
    })
}

impl ErrorSampler {
    /// Starts sampling the operator whose metrics server listens on `address`.
    pub fn start(address: &str) -> Self {
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (into, until, address) = (samples.clone(), stop.clone(), address.to_owned());
        let thread = std::thread::spawn(move || {
            while !until.load(Ordering::Relaxed) {
                if let Some(total) = error_total(&address) {
                    into.lock().expect("samples").push((Instant::now(), total));
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        });
        Self {
            samples,
            stop,
            thread: Some(thread),
        }
    }

    /// Errors counted between `from` and `to` (the counter's growth over that window).
    pub fn errors_between(&self, from: Instant, to: Instant) -> f64 {
        let samples = self.samples.lock().expect("samples");
        let at = |t: Instant| {
            samples
                .iter()
                .take_while(|(when, _)| *when <= t)
                .last()
                .or(samples.first())
                .map_or(0.0, |(_, v)| *v)
        };
        at(to) - at(from)
    }

    /// The highest error rate (errors per second) over any 5 s window between `from` and `to`.
    pub fn peak_rate(&self, from: Instant, to: Instant) -> f64 {
        let starts: Vec<Instant> = self
            .samples
            .lock()
            .expect("samples")
            .iter()
            .map(|(t, _)| *t)
            .filter(|t| *t >= from && *t <= to)
            .collect();
        starts
            .into_iter()
            .map(|t| self.errors_between(t, t + Duration::from_secs(5)) / 5.0)
            .fold(0.0, f64::max)
    }
}

impl Drop for ErrorSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
