//! `modelfleet_dataset`: one Dataset custom resource (DESIGN.md section 3, "Dataset").
//!
//! The schema is derived from the shared API type's CRD (`model_fleet_operator::api::Dataset`),
//! so a field added to the API appears here with no hand-kept list. Only
//! `allowed_service_accounts` may change in place (`DATASET_MUTABLE_FIELDS`); every other spec
//! field, `name` and `namespace` require replacement, matching the CRD's immutability rules.

use kube::CustomResourceExt as _;
use kube::core::ApiResource;
use model_fleet_operator::api::{DATASET_MUTABLE_FIELDS, Dataset};

use super::custom::CustomResourceType;

/// Terraform type name.
pub const TYPE_NAME: &str = "modelfleet_dataset";

/// The `spec` OpenAPI schema of the Dataset CRD (JSON).
pub fn spec_schema() -> serde_json::Value {
    let crd = Dataset::crd();
    crd.spec
        .versions
        .first()
        .and_then(|v| v.schema.as_ref())
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .and_then(|s| serde_json::to_value(s).ok())
        .and_then(|s| s.pointer("/properties/spec").cloned())
        .unwrap_or_default()
}

/// The resource type.
///
/// # Panics
/// Never in practice: a collision between the API and the built-in attributes is caught by this
/// module's tests.
#[allow(clippy::expect_used)]
pub fn dataset() -> CustomResourceType {
    CustomResourceType::new(
        TYPE_NAME,
        ApiResource::erase::<Dataset>(&()),
        &spec_schema(),
        DATASET_MUTABLE_FIELDS,
        "A Model Fleet Dataset: one immutable dataset version that TrainingRuns reference. Only \
         allowed_service_accounts can change in place.",
    )
    .expect("Dataset API fits the resource layout")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::Resource as _;
    use crate::schema::Nesting;
    use crate::value::Type;

    #[test]
    fn schema_follows_the_api() {
        let resource = dataset();
        let block = &resource.schema().block;
        assert_eq!(block.invariant_violations(""), Vec::<String>::new());
        assert!(block.attribute("version").unwrap().required);
        assert_eq!(
            block.attribute("allowed_service_accounts").unwrap().ty,
            Type::list(Type::String)
        );
        let source = block.nested("source").unwrap();
        assert_eq!((source.nesting, source.min_items), (Nesting::Single, 1));
        assert!(source.block.attribute("uri").unwrap().required);
        let splits = block.nested("splits").unwrap();
        assert_eq!(splits.nesting, Nesting::Map);
        assert_eq!(splits.block.attribute("records").unwrap().ty, Type::Number);
        assert_eq!(
            block
                .nested("pvc")
                .unwrap()
                .block
                .attribute("claim_name")
                .unwrap()
                .ty,
            Type::String
        );
        assert!(block.attribute("id").unwrap().computed);
        let ns = block.attribute("namespace").unwrap();
        assert!(ns.optional && ns.computed);
    }

    #[test]
    fn everything_but_allowed_service_accounts_replaces() {
        let resource = dataset();
        let replacing = resource.replacing_attributes();
        assert!(!replacing.contains(&"allowed_service_accounts".to_string()));
        for attr in [
            "name",
            "namespace",
            "version",
            "source",
            "format",
            "splits",
            "description",
            "pvc",
        ] {
            assert!(replacing.contains(&attr.to_string()), "{attr}");
        }
        // Every requires-replace path exists in the schema.
        let block = &resource.schema().block;
        for attr in &replacing {
            assert!(
                block.attribute(attr).is_some() || block.nested(attr).is_some(),
                "{attr}"
            );
        }
    }
}
