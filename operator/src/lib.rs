//! Model Fleet operator: reconciles `InferenceService`, `TrainingRun` and `Dataset` custom
//! resources (group `modelfleet.io`) into plain Kubernetes children.
//!
//! The pure core (types, capacity, render, status) is the `model-fleet-api` crate; this crate is
//! the runtime around it (DESIGN.md section 2): [`controller`] (the reconcilers and the thin API
//! layer), [`telemetry`] (metrics, health, logs), [`manifests`] (`render -f`, offline) and [`slack`] (the `/fleet`
//! bot of `model-fleet-operator slack`).
pub mod controller;
pub mod manifests;
pub mod slack;
pub mod telemetry;
