//! The Model Fleet API (group `modelfleet.io`, version `v1alpha1`; DESIGN.md section 3), shared by
//! the operator and the Terraform provider: plain serde types, every optional field an `Option`
//! skipped when absent, so a spec round-trips exactly as written. The CRDs carry no `default:`.
//!
//! Validation lives in the generated schema (enums, ranges, lengths) and CEL rules; see
//! [`crds`] for the CustomResourceDefinitions and `charts/model-fleet-operator/crds/` for the
//! checked-in copy (regenerate with `cargo run -p model-fleet-operator -- crd --out-dir
//! charts/model-fleet-operator/crds`).

pub mod common;
pub mod dataset;
pub mod inference;
mod quantities;
mod rules;
pub mod scheduling;
pub mod security;
pub mod toleration;
pub mod training;

pub use common::*;
pub use dataset::*;
pub use inference::*;
pub use scheduling::*;
pub use security::*;
pub use toleration::*;
pub use training::*;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

/// API group of the three kinds.
pub const GROUP: &str = "modelfleet.io";
/// API version of the three kinds.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of the three kinds.
pub const API_VERSION: &str = "modelfleet.io/v1alpha1";

/// The three CustomResourceDefinitions, in the order InferenceService, TrainingRun, Dataset.
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![InferenceService::crd(), TrainingRun::crd(), Dataset::crd()]
}

/// The file name each CRD has under `charts/model-fleet-operator/crds/`
/// (`<plural>.<group>.yaml`).
pub fn crd_file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}.yaml", crd.metadata.name.as_deref().unwrap_or("unnamed"))
}

/// A CRD as YAML, exactly as checked in (serde_yaml, fields in struct order).
pub fn crd_yaml(crd: &CustomResourceDefinition) -> String {
    serde_yaml::to_string(crd).expect("a CustomResourceDefinition always serializes")
}
