//! Telemetry: Prometheus metrics, the health/metrics HTTP server and structured logs.
//!
//! DESIGN.md section 5: Prometheus `/metrics` (reconciles, errors, duration by kind), `/healthz`, `/readyz`, JSON logs
//! via tracing. Each concern is its own module: [`metrics`] (the registry and reconcile instruments), [`health`]
//! (the facts `/healthz` and `/readyz` report), [`server`] (the axum router serving them) and [`logging`] (the
//! tracing subscriber).

pub mod health;
pub mod logging;
pub mod metrics;
pub mod server;

pub use health::Health;
pub use logging::LogFormat;
pub use metrics::Metrics;
