//! Plan-time computed attributes (DESIGN.md section 6): values derived from the configuration
//! alone, known in `terraform plan` and stable across refreshes. Pure: no I/O.
//!
//! * `capacity_class`, `per_gpu_memory_gib` (GiB, rounded up): the operator's
//!   [`model_fleet_operator::capacity::plan`] on the `gpu` block (one implementation); null
//!   without `gpu.fit`; a fit too big for every class is an error on `gpu.fit`.
//! * `url` (inference): the operator's [`route_url`], `http://<first hostname><path prefix>`;
//!   null without `gateway.hostnames`.
//! * `job_name` (training): the operator's [`job_name`] for the run's name.
//!
//! Every value is unknown while any input it reads is unknown.

use std::collections::BTreeMap;

use model_fleet_operator::api::{Gpu, InferenceService, TrainingRunSpec};
use model_fleet_operator::capacity::{self, CapacityError};
use model_fleet_operator::render::{job_name, route_url};
use serde_json::{Value as Json, json};

use super::fields::{self, Field};
use crate::diag::{AttrPath, Diagnostics};
use crate::value::{Number, Value};

/// Which custom resource a workload resource manages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    /// `modelfleet_inference` (InferenceService).
    Inference,
    /// `modelfleet_training` (TrainingRun).
    Training,
}

/// Names of the plan-time computed attributes of `kind`.
pub fn plan_time_attributes(kind: WorkloadKind) -> &'static [&'static str] {
    match kind {
        WorkloadKind::Inference => &["capacity_class", "per_gpu_memory_gib", "url"],
        WorkloadKind::Training => &["capacity_class", "per_gpu_memory_gib", "job_name"],
    }
}

/// The plan-time computed values of `kind` for the resource value `resource` (a planned value or
/// a state), keyed by attribute name; every name of [`plan_time_attributes`] is present.
///
/// # Errors
/// A fit that no capacity class can hold, with the path of the offending `gpu.fit` attribute.
pub fn plan_time_values(
    kind: WorkloadKind,
    fields: &[Field],
    resource: &Value,
) -> Result<BTreeMap<String, Value>, Diagnostics> {
    let mut out = capacity_values(fields, resource)?;
    match kind {
        WorkloadKind::Inference => {
            out.insert("url".into(), url(fields, resource));
        }
        WorkloadKind::Training => {
            out.insert("job_name".into(), training_job_name(fields, resource));
        }
    }
    Ok(out)
}

/// The JSON of the top-level attributes `names` of `resource` (spec layout), or `None` when any
/// of them holds an unknown value.
fn known_json(fields: &[Field], resource: &Value, names: &[&str]) -> Option<Json> {
    let mut subset = BTreeMap::new();
    for name in names {
        let value = resource.get(name).cloned().unwrap_or(Value::Null);
        if !value.is_wholly_known() {
            return None;
        }
        subset.insert((*name).to_string(), value);
    }
    fields::to_json(fields, &Value::Object(subset), &AttrPath::root())
        .ok()
        .map(Json::Object)
}

fn capacity_values(
    fields: &[Field],
    resource: &Value,
) -> Result<BTreeMap<String, Value>, Diagnostics> {
    let both = |class: Value, gib: Value| {
        BTreeMap::from([
            ("capacity_class".to_string(), class),
            ("per_gpu_memory_gib".to_string(), gib),
        ])
    };
    let Some(spec) = known_json(fields, resource, &["gpu"]) else {
        return Ok(both(Value::Unknown, Value::Unknown));
    };
    let Some(gpu) = spec.get("gpu") else {
        return Ok(both(Value::Null, Value::Null));
    };
    let gpu: Gpu = serde_json::from_value(gpu.clone()).map_err(|e| {
        Diagnostics::error_at(
            AttrPath::attrs(&["gpu"]),
            "Invalid gpu block",
            e.to_string(),
        )
    })?;
    match capacity::plan(&gpu) {
        Ok(None) => Ok(both(Value::Null, Value::Null)),
        Ok(Some(budget)) => Ok(both(
            Value::string(budget.class().name),
            Value::Number(Number::from(budget.per_gpu_memory_gib())),
        )),
        Err(err) => Err(fit_error(&err)),
    }
}

/// The plan-time diagnostic of a fit that cannot be placed, on the attribute it is about.
pub fn fit_error(err: &CapacityError) -> Diagnostics {
    let path = match err {
        CapacityError::BadNumber { index, .. } if *index != usize::MAX => {
            AttrPath::attrs(&["gpu", "fit", "modules"]).index(*index)
        }
        CapacityError::BadNumber { .. } => AttrPath::attrs(&["gpu", "fit", "runtime_gib"]),
        CapacityError::NoShards(_) => AttrPath::attrs(&["gpu", "fit", "shards"]),
        CapacityError::TooBig { .. } => AttrPath::attrs(&["gpu", "fit"]),
    };
    Diagnostics::error_at(path, "GPU fit cannot be placed", err.to_string())
}

fn url(fields: &[Field], resource: &Value) -> Value {
    let Some(spec) = known_json(fields, resource, &["gateway"]) else {
        return Value::Unknown;
    };
    let Some(gateway) = spec.get("gateway") else {
        return Value::Null;
    };
    // route_url reads only `spec.gateway`; the other required fields are placeholders.
    let isvc: Result<InferenceService, _> = serde_json::from_value(json!({
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceService",
        "metadata": {"name": "plan"},
        "spec": {"model": {"name": "plan"}, "container": {"image": "plan"}, "gateway": gateway},
    }));
    isvc.ok()
        .and_then(|isvc| route_url(&isvc))
        .map_or(Value::Null, Value::string)
}

fn training_job_name(fields: &[Field], resource: &Value) -> Value {
    let Some(Value::String(name)) = resource.get("name") else {
        return Value::Unknown;
    };
    let Some(Json::Object(mut spec)) = known_json(
        fields,
        resource,
        &["completion_mode", "completions", "parallelism"],
    ) else {
        return Value::Unknown;
    };
    // job_name reads only these three fields; the container is a placeholder.
    spec.insert("container".into(), json!({"image": "plan"}));
    serde_json::from_value::<TrainingRunSpec>(Json::Object(spec))
        .map_or(Value::Null, |spec| Value::string(job_name(name, &spec)))
}

#[cfg(test)]
mod tests;
