//! `modelfleet_training`: one TrainingRun custom resource (DESIGN.md section 3, "TrainingRun";
//! section 6 for the plan-time and run-time attributes).
//!
//! The schema is derived from the shared API type's CRD (`model_fleet_operator::api::TrainingRun`).
//! Only `intent` and `cancel` change in place (`TRAINING_MUTABLE_FIELDS`, the CRD's immutability
//! rules: a Job template cannot change, a new attempt is a new run); every other spec field,
//! `name` and `namespace` require replacement. Added attributes: `capacity_class`,
//! `per_gpu_memory_gib`, `job_name` (plan time), `phase` (refreshed), `wait_for` (`none`,
//! `reconciled`, `completed`).

use kube::core::ApiResource;
use model_fleet_operator::api::{TRAINING_MUTABLE_FIELDS, TrainingRun};

use super::computed::WorkloadKind;
use super::custom::CustomResourceType;
use super::workload::{WorkloadResource, spec_schema_of};

/// Terraform type name.
pub const TYPE_NAME: &str = "modelfleet_training";

/// The resource type.
///
/// # Panics
/// Never in practice: a collision between the API and the built-in attributes is caught by this
/// module's tests.
#[allow(clippy::expect_used)]
pub fn training() -> WorkloadResource {
    let spec_schema = spec_schema_of::<TrainingRun>();
    let api = ApiResource::erase::<TrainingRun>(&());
    let inner = CustomResourceType::new(
        TYPE_NAME,
        api.clone(),
        &spec_schema,
        TRAINING_MUTABLE_FIELDS,
        "A Model Fleet TrainingRun: one batch Job. Only intent and cancel change in place; any \
         other change replaces the run (a new attempt is a new run).",
    )
    .expect("TrainingRun API fits the resource layout");
    WorkloadResource::new(inner, WorkloadKind::Training, api, spec_schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::Resource as _;

    #[test]
    fn everything_but_intent_and_cancel_replaces() {
        let resource = training();
        let replacing = resource.inner().replacing_attributes();
        for attr in ["intent", "cancel"] {
            assert!(!replacing.contains(&attr.to_string()), "{attr}");
        }
        for attr in [
            "name",
            "namespace",
            "container",
            "gpu",
            "datasets",
            "retries",
            "parallelism",
        ] {
            assert!(replacing.contains(&attr.to_string()), "{attr}");
        }
        let block = &resource.schema().block;
        assert_eq!(block.invariant_violations(""), Vec::<String>::new());
        for attr in &replacing {
            assert!(
                block.attribute(attr).is_some() || block.nested(attr).is_some(),
                "{attr}"
            );
        }
        for computed in ["capacity_class", "per_gpu_memory_gib", "job_name", "phase"] {
            assert!(block.attribute(computed).unwrap().computed, "{computed}");
        }
    }
}
