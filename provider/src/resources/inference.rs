//! `modelfleet_inference`: one InferenceService custom resource (DESIGN.md section 3, "InferenceService"; section 6
//! for the plan-time and run-time attributes).
//!
//! The schema is derived from the shared API type's CRD, so a field added to the API appears here with no hand-kept
//! list. Every spec field changes in place (the operator rolls the Deployment); `name` and `namespace` require
//! replacement. Computed: `capacity_class`, `per_gpu_memory_gib`, `url` (plan time), `ready`, `ready_replicas`
//! (refreshed). `wait_for`: `none`, `reconciled`, `ready`. To add a computed attribute, add one [`Computed`] entry to
//! [`Inference::COMPUTED`] and its function here.

use model_fleet_api::conditions::{ConditionType, Reason, says_stalled};
use model_fleet_api::render::gateway_url;
use model_fleet_api::status::inference::scale_from_zero_warning_of;
use model_fleet_api::{Gateway, InferenceService};
use serde_json::Value as Json;

use super::capacity::{CAPACITY_CLASS, KV_CACHE_PER_GPU_MIB, PER_GPU_MEMORY_GIB, fit_warnings};
use super::kind::{Computed, Kind, Mutable, PlanInputs, Source, WaitState};
use super::object::CustomResource;
use super::wait::{self, condition, condition_is};
use crate::diag::{AttrPath, Diagnostics};
use crate::value::{Number, Type, Value};

/// The `modelfleet_inference` kind.
pub struct Inference;

/// `wait_for` value: the Ready condition is True.
pub const READY: &str = "ready";

impl Kind for Inference {
    type Object = InferenceService;
    const TYPE_NAME: &'static str = "modelfleet_inference";
    const DESCRIPTION: &'static str = "A Model Fleet InferenceService: a model server Deployment with its Service, \
        optional HTTPRoute and KEDA ScaledObject. Every spec field changes in place.";
    const MUTABLE: Mutable = Mutable::All;
    const COMPUTED: &'static [Computed] = &[
        CAPACITY_CLASS,
        PER_GPU_MEMORY_GIB,
        KV_CACHE_PER_GPU_MIB,
        Computed {
            name: "url",
            ty: Type::String,
            description: "`http://<first gateway hostname><path_prefix>`, computed at plan time, the first \
                          hostname that is not a wildcard (`*.`); null without one.",
            source: Source::Plan {
                inputs: &["gateway"],
                value: url,
            },
        },
        Computed {
            name: "ready",
            ty: Type::Bool,
            description: "Whether the Ready condition is True (refreshed on read).",
            source: Source::Live(ready),
        },
        Computed {
            name: "ready_replicas",
            ty: Type::Number,
            description: "Ready replicas of the Deployment (refreshed on read).",
            source: Source::Live(ready_replicas),
        },
    ];
    const WAIT_VALUES: &'static [&'static str] = &[wait::NONE, wait::RECONCILED, READY];

    fn wait(wait_for: &str, object: &Json, state: &Value) -> WaitState {
        if wait_for != READY {
            return WaitState::Failed(format!("unknown wait_for {wait_for:?}"));
        }
        let capacity_class = state.get(CAPACITY_CLASS.name).and_then(Value::as_str);
        ready_state(object, capacity_class)
    }

    /// The fit's warning, and `ScaleToZeroUnwakeable` (the operator's `ScalingReady` warning) on
    /// `scaling.triggers` when the service can reach 0 but no trigger could wake it.
    fn warnings(spec: &serde_json::Map<String, Json>) -> Diagnostics {
        let mut diags = fit_warnings(spec.get("gpu"));
        let (intent, replicas, scaling) = (
            part(spec, "intent"),
            part(spec, "replicas"),
            part(spec, "scaling"),
        );
        if let Some(warning) =
            scale_from_zero_warning_of(intent, replicas.as_ref(), scaling.as_ref())
        {
            diags.push_warning(
                Some(AttrPath::attrs(&["scaling", "triggers"])),
                "Scale to zero without a trigger that can wake it (ScaleToZeroUnwakeable)",
                warning,
            );
        }
        diags
    }
}

/// The spec field `name` as `T`, `None` when absent or not of that shape (validation reports the latter).
fn part<T: serde::de::DeserializeOwned>(
    spec: &serde_json::Map<String, Json>,
    name: &str,
) -> Option<T> {
    serde_json::from_value(spec.get(name)?.clone()).ok()
}

/// The resource type.
///
/// # Panics
/// Never in practice: a collision between the API and the built-in attributes is caught by this module's tests.
#[allow(clippy::expect_used)]
pub fn inference() -> CustomResource<Inference> {
    CustomResource::new().expect("InferenceService API fits the resource layout")
}

fn url(inputs: &PlanInputs<'_>) -> Result<Value, Diagnostics> {
    let Some(gateway) = inputs.spec.get("gateway") else {
        return Ok(Value::Null);
    };
    let gateway: Gateway = serde_json::from_value(gateway.clone()).map_err(|e| {
        Diagnostics::error_at(
            AttrPath::attrs(&["gateway"]),
            "Invalid gateway block",
            e.to_string(),
        )
    })?;
    Ok(gateway_url(&gateway).map_or(Value::Null, Value::string))
}

fn ready(object: &Json) -> Value {
    Value::Bool(condition_is(object, ConditionType::Ready, "True", None).is_some())
}

fn ready_replicas(object: &Json) -> Value {
    let replicas = object
        .pointer("/status/readyReplicas")
        .and_then(Json::as_i64)
        .unwrap_or(0);
    Value::Number(Number::from(replicas))
}

/// `ready`: waits for Ready=True; an Unschedulable message names the class no node offers.
fn ready_state(object: &Json, capacity_class: Option<&str>) -> WaitState {
    let Some(ready) = condition(object, ConditionType::Ready.as_str()) else {
        return WaitState::Waiting("the Ready condition is not set yet".into());
    };
    let text = |key: &str| ready.get(key).and_then(Json::as_str).unwrap_or_default();
    if text("status") == "True" {
        return unrouted(object).unwrap_or(WaitState::Done);
    }
    let (reason, message) = (text("reason"), text("message"));
    if reason == Reason::ScaledToZero.as_str() {
        return WaitState::Failed(scaled_to_zero(message));
    }
    if reason == Reason::Unschedulable.as_str() {
        let class = capacity_class
            .map(|c| format!(": no node of class {c}"))
            .unwrap_or_default();
        return WaitState::Waiting(format!("pods Unschedulable{class} ({message})"));
    }
    let missing = format!("not Ready: {reason}: {message}");
    // A stalled rollout, or a volume of a Dataset's claim its allowlist refuses (`AccessDenied`: nothing is applied
    // until the Dataset's owner widens the allowlist or the configuration changes): no wait ends either by itself.
    let stalled = reason == Reason::Progressing.as_str() && says_stalled(message);
    if stalled || reason == Reason::AccessDenied.as_str() {
        WaitState::Stalled(missing)
    } else {
        WaitState::Waiting(missing)
    }
}

/// Why `ready` cannot be waited for on a service the operator reports at rest (`Ready=False, ScaledToZero`: an
/// `automatic` service with `replicas.min = 0`, held at 0 by its autoscaler until a trigger is active). Only traffic
/// wakes it, so no timeout is long enough (a breaker's finding: a new scale-to-zero service with `wait_for = "ready"`
/// waited out its 20 minutes, was tainted and replaced at every later apply, the advice being to wait longer).
fn scaled_to_zero(message: &str) -> String {
    format!(
        "it rests at 0 replicas (Ready=False, ScaledToZero: {message}): it becomes ready only when a trigger is \
         active, which no apply can wait for: set wait_for = \"reconciled\" for a service that may rest at 0, or \
         keep a replica with replicas.min >= 1 or intent = \"active\""
    )
}

/// `Stalled` while another service holds the route's hostname and path (`RouteReady=False, HostnameConflict`): its
/// pods may be ready, but its URL serves the other service, and only a change (either service's hostnames, or the
/// holder deleted) ends that (a user's finding: such an apply succeeded without a word).
fn unrouted(object: &Json) -> Option<WaitState> {
    let conflict = Reason::HostnameConflict;
    let route = condition_is(object, ConditionType::RouteReady, "False", Some(conflict))?;
    let message = route
        .get("message")
        .and_then(Json::as_str)
        .unwrap_or_default();
    Some(WaitState::Stalled(format!(
        "not routed: {}: {message}",
        conflict.as_str()
    )))
}

#[cfg(test)]
mod tests;
