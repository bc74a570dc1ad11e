//! `modelfleet_dataset`: one Dataset custom resource (DESIGN.md section 3, "Dataset").
//!
//! Only `allowed_service_accounts` may change in place (`DATASET_MUTABLE_FIELDS`); every other spec field, `name`
//! and `namespace` require replacement, matching the CRD's immutability rules. No computed attributes, no waits.

use model_fleet_api::{DATASET_MUTABLE_FIELDS, Dataset as DatasetObject};

use super::kind::{Kind, Mutable};
use super::object::CustomResource;

/// The `modelfleet_dataset` kind.
pub struct Dataset;

impl Kind for Dataset {
    type Object = DatasetObject;
    const TYPE_NAME: &'static str = "modelfleet_dataset";
    const DESCRIPTION: &'static str = "A Model Fleet Dataset: one immutable dataset version that TrainingRuns \
        reference. Only allowed_service_accounts can change in place.";
    const MUTABLE: Mutable = Mutable::Only(DATASET_MUTABLE_FIELDS);
}

/// The resource type.
///
/// # Panics
/// Never in practice: a collision between the API and the built-in attributes is caught by this module's tests.
#[allow(clippy::expect_used)]
pub fn dataset() -> CustomResource<Dataset> {
    CustomResource::new().expect("Dataset API fits the resource layout")
}

#[cfg(test)]
mod tests;
