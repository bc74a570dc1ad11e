//! Model Fleet operator: reconciles `InferenceService`, `TrainingRun` and `Dataset` custom
//! resources (group `modelfleet.io`) into plain Kubernetes children.
//!
//! The module layout follows DESIGN.md section 2; the modules arrive with their issues.
pub mod api;
pub mod capacity;
pub mod controller;
pub mod names;
pub mod render;
pub mod telemetry;
