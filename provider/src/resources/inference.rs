//! `modelfleet_inference`: one InferenceService custom resource (DESIGN.md section 3,
//! "InferenceService"; section 6 for the plan-time and run-time attributes).
//!
//! The schema is derived from the shared API type's CRD (`model_fleet_operator::api::InferenceService`),
//! so a field added to the API appears here with no hand-kept list. Every spec field may change
//! in place (the operator rolls the Deployment); `name` and `namespace` require replacement.
//! Added attributes: `capacity_class`, `per_gpu_memory_gib`, `url` (plan time), `ready`,
//! `ready_replicas` (refreshed), `wait_for` (`none`, `reconciled`, `ready`).

use kube::core::ApiResource;
use model_fleet_operator::api::InferenceService;

use super::computed::WorkloadKind;
use super::custom::CustomResourceType;
use super::workload::{WorkloadResource, spec_schema_of};

/// Terraform type name.
pub const TYPE_NAME: &str = "modelfleet_inference";

/// The resource type.
///
/// # Panics
/// Never in practice: a collision between the API and the built-in attributes is caught by this
/// module's tests.
#[allow(clippy::expect_used)]
pub fn inference() -> WorkloadResource {
    let spec_schema = spec_schema_of::<InferenceService>();
    let mutable: Vec<&str> = spec_schema
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let api = ApiResource::erase::<InferenceService>(&());
    let inner = CustomResourceType::new(
        TYPE_NAME,
        api.clone(),
        &spec_schema,
        &mutable,
        "A Model Fleet InferenceService: a model server Deployment with its Service, optional \
         HTTPRoute and KEDA ScaledObject. Every spec field changes in place.",
    )
    .expect("InferenceService API fits the resource layout");
    WorkloadResource::new(inner, WorkloadKind::Inference, api, spec_schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::Resource as _;
    use crate::schema::Nesting;
    use crate::value::Type;

    #[test]
    fn schema_follows_the_api() {
        let resource = inference();
        let block = &resource.schema().block;
        assert_eq!(block.invariant_violations(""), Vec::<String>::new());
        let container = block.nested("container").unwrap();
        assert_eq!(
            (container.nesting, container.min_items),
            (Nesting::Single, 1)
        );
        let resources = container.block.nested("resources").unwrap();
        assert_eq!(
            resources.block.attribute("requests").unwrap().ty,
            Type::map(Type::String),
            "quantities are a map of strings"
        );
        let fit = block.nested("gpu").unwrap().block.nested("fit").unwrap();
        assert_eq!(fit.block.attribute("runtime_gib").unwrap().ty, Type::Number);
        assert_eq!(fit.block.nested("modules").unwrap().nesting, Nesting::List);
        for computed in [
            "capacity_class",
            "per_gpu_memory_gib",
            "url",
            "ready",
            "ready_replicas",
        ] {
            let attr = block.attribute(computed).unwrap();
            assert!(attr.computed && !attr.optional, "{computed}");
        }
        assert!(block.attribute("wait_for").unwrap().optional);
        assert!(block.attribute("intent").unwrap().optional);
    }

    #[test]
    fn only_name_and_namespace_replace() {
        assert_eq!(
            inference().inner().replacing_attributes(),
            vec!["name".to_string(), "namespace".to_string()]
        );
    }
}
