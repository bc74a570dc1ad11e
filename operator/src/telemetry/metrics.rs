//! Prometheus instruments for reconciles, built on `prometheus-client`.
//!
//! Exposed series (all labelled by `kind`, the custom resource kind, e.g. `InferenceService`):
//! - `model_fleet_reconciles_total`: reconciles started (counter);
//! - `model_fleet_reconcile_errors_total{step=...,error=...}`: reconciles that failed, labelled with the failed
//!   [`step`](crate::controller::Error::step) (`fetch`, `validate`, `render`, `apply`, `prune`, `status`) and the
//!   error's [`metric_label`](crate::controller::Error::metric_label) class, so `/metrics` shows *which* failure
//!   rises (counter);
//! - `model_fleet_reconcile_conflicts_total`: reconciles retried because they worked from an outdated read
//!   ([`is_conflict`](crate::controller::Error::is_conflict): their status write's `resourceVersion` precondition
//!   answered 409 Conflict, or a child created without a read existed after all): optimistic concurrency at work,
//!   not a failure, so not in the error counter (counter);
//! - `model_fleet_reconcile_duration_seconds`: wall time of each reconcile in seconds (histogram).

use std::sync::Arc;
use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of the per-kind series: `kind` is the custom resource kind (`InferenceService`, ...).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    /// Custom resource kind being reconciled.
    pub kind: String,
}

/// Labels of the error counter: the kind, the failed step and the error's stable `metric_label`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    /// Custom resource kind being reconciled.
    pub kind: String,
    /// Reconcile step that failed (`controller::Error::step`).
    pub step: String,
    /// Stable, low-cardinality error class from `controller::Error::metric_label`.
    pub error: String,
}

type HistogramFamily = Family<KindLabels, Histogram, fn() -> Histogram>;

/// Buckets of the duration histogram in seconds: 5 ms doubling up to about 20 s (13 buckets).
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 13))
}

/// The operator's metric registry and reconcile instruments. Cheap to clone (shared `Arc`s).
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    reconciles: Family<KindLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    conflicts: Family<KindLabels, Counter>,
    duration: HistogramFamily,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Creates a fresh registry (prefix `model_fleet`) holding the three reconcile instruments.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("model_fleet");
        let reconciles = Family::<KindLabels, Counter>::default();
        let errors = Family::<ErrorLabels, Counter>::default();
        let conflicts = Family::<KindLabels, Counter>::default();
        let duration: HistogramFamily = Family::new_with_constructor(duration_histogram);
        registry.register(
            "reconciles",
            "Reconciles started, by kind",
            reconciles.clone(),
        );
        registry.register(
            "reconcile_errors",
            "Reconciles that returned an error, by kind, step and error class",
            errors.clone(),
        );
        registry.register(
            "reconcile_conflicts",
            "Reconciles retried because the object changed since it was read (409 on the status write), by kind",
            conflicts.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Wall time of one reconcile in seconds, by kind",
            duration.clone(),
        );
        Self {
            registry: Arc::new(registry),
            reconciles,
            errors,
            conflicts,
            duration,
        }
    }

    /// Counts a reconcile of `kind` and returns a timer that records its duration when dropped.
    pub fn reconcile_started(&self, kind: &str) -> ReconcileTimer {
        let labels = KindLabels {
            kind: kind.to_owned(),
        };
        self.reconciles.get_or_create(&labels).inc();
        ReconcileTimer {
            histogram: self.duration.get_or_create_owned(&labels),
            start: Instant::now(),
        }
    }

    /// Counts a failed reconcile of `kind` at `step` under the error class `error` (a `metric_label`).
    pub fn reconcile_failed(&self, kind: &str, step: &str, error: &str) {
        self.errors
            .get_or_create(&ErrorLabels {
                kind: kind.to_owned(),
                step: step.to_owned(),
                error: error.to_owned(),
            })
            .inc();
    }

    /// Counts a reconcile of `kind` retried because its object changed since it was read.
    pub fn reconcile_conflicted(&self, kind: &str) {
        self.conflicts
            .get_or_create(&KindLabels {
                kind: kind.to_owned(),
            })
            .inc();
    }

    /// Number of reconciles of `kind` counted so far (for tests and logs).
    pub fn reconciles(&self, kind: &str) -> u64 {
        self.reconciles
            .get_or_create(&KindLabels {
                kind: kind.to_owned(),
            })
            .get()
    }

    /// Number of failed reconciles of `kind` at `step` with error class `error` counted so far.
    pub fn errors(&self, kind: &str, step: &str, error: &str) -> u64 {
        self.errors
            .get_or_create(&ErrorLabels {
                kind: kind.to_owned(),
                step: step.to_owned(),
                error: error.to_owned(),
            })
            .get()
    }

    /// Renders the registry in the Prometheus/OpenMetrics text format served at `/metrics`.
    ///
    /// # Errors
    /// Only a formatter error, which writing into a `String` does not produce in practice.
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// Records the elapsed wall time (seconds) of one reconcile into the duration histogram when dropped,
/// so early returns and errors are measured too.
#[derive(Debug)]
pub struct ReconcileTimer {
    histogram: Histogram,
    start: Instant,
}

impl Drop for ReconcileTimer {
    fn drop(&mut self) {
        self.histogram.observe(self.start.elapsed().as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_reconciles_errors_and_durations_by_kind() {
        let metrics = Metrics::new();
        drop(metrics.reconcile_started("InferenceService"));
        drop(metrics.reconcile_started("InferenceService"));
        metrics.reconcile_failed("InferenceService", "prune", "kube_api");
        metrics.reconcile_conflicted("TrainingRun");
        assert_eq!(metrics.reconciles("InferenceService"), 2);
        assert_eq!(metrics.reconciles("TrainingRun"), 0);
        assert_eq!(metrics.errors("InferenceService", "prune", "kube_api"), 1);
        assert_eq!(metrics.errors("InferenceService", "status", "kube_api"), 0);

        let text = metrics.encode().unwrap();
        assert!(
            text.contains(r#"model_fleet_reconciles_total{kind="InferenceService"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"model_fleet_reconcile_errors_total{kind="InferenceService",step="prune",error="kube_api"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"model_fleet_reconcile_conflicts_total{kind="TrainingRun"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"model_fleet_reconcile_duration_seconds_count{kind="InferenceService"} 2"#
            ),
            "{text}"
        );
    }
}
