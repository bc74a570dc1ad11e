//! What one resource kind adds to the generic custom-resource machinery ([`super::object::CustomResource`]): one
//! small trait per kind, so every rule about a kind lives in that kind's file.
//!
//! A kind names its custom resource type, which spec fields change in place, its computed attributes (each with how
//! its value is obtained: at plan time from the configuration, or refreshed from the live object) and its
//! `wait_for` rule. Adding a computed attribute to a kind is one [`Computed`] entry in that kind's file.

use serde_json::Value as Json;

use crate::diag::Diagnostics;
use crate::value::{Type, Value};

/// Which spec fields may change in place (DESIGN.md section 6: immutable fields require replacement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutable {
    /// Every spec field changes in place (the operator rolls the children).
    All,
    /// Only these spec properties (JSON names) change in place; every other requires replacement.
    Only(&'static [&'static str]),
}

/// What plan-time computations read: the object's name and the spec JSON (camelCase, as the custom resource holds
/// it) of the attributes the value depends on, all wholly known.
#[derive(Clone, Copy, Debug)]
pub struct PlanInputs<'a> {
    /// `metadata.name` of the object.
    pub name: &'a str,
    /// The spec properties listed in [`Source::Plan::inputs`], as JSON; absent when null.
    pub spec: &'a Json,
}

/// How a computed attribute gets its value.
#[derive(Clone)]
pub enum Source {
    /// Known at plan time from the configuration (DESIGN.md section 6: `capacity_class`, `url`, `job_name`),
    /// recomputed on every plan and read; unknown while any of `inputs` (Terraform attribute names) is unknown.
    Plan {
        /// Top-level Terraform attributes the value reads (`name` is always available).
        inputs: &'static [&'static str],
        /// The value, or a diagnostic with the attribute path of what cannot be planned.
        value: fn(&PlanInputs<'_>) -> Result<Value, Diagnostics>,
    },
    /// A run-time fact read from the live object (its JSON, `status` included): refreshed on read and after apply,
    /// planned as its prior value while the spec is unchanged (use-state-for-unknown), unknown otherwise.
    Live(fn(&Json) -> Value),
}

/// A computed attribute of a kind.
#[derive(Clone)]
pub struct Computed {
    /// Terraform attribute name.
    pub name: &'static str,
    /// Terraform type.
    pub ty: Type,
    /// Schema description (shown in docs and `terraform providers schema`).
    pub description: &'static str,
    /// How its value is obtained.
    pub source: Source,
}

impl Computed {
    /// Whether the value is known at plan time.
    pub fn is_plan_time(&self) -> bool {
        matches!(self.source, Source::Plan { .. })
    }
}

/// Where a `wait_for` stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitState {
    /// The condition holds.
    Done,
    /// Not yet; the text says what is missing (shown when the wait times out). It may only need more time: pods
    /// waiting for a node the capacity provider adds, a model still loading.
    Waiting(String),
    /// Not yet, and more time alone will not help: the operator's reconcile of this generation keeps failing, or the
    /// rollout or run is stalled (`Ready`'s message, [`model_fleet_api::conditions::says_stalled`]: pods the API
    /// server refuses, containers the kubelet cannot start). It waits for a change (the spec, the namespace's policy,
    /// a quota others hold), so the wait goes on to its timeout; the text says what is missing.
    Stalled(String),
    /// It can no longer hold (a failed or cancelled run); the text says why.
    Failed(String),
}

/// One resource kind (see the module docs).
pub trait Kind: Send + Sync + 'static {
    /// The custom resource type (its CRD gives the schema and the API coordinates).
    type Object: kube::CustomResourceExt + kube::Resource<DynamicType = ()>;

    /// Terraform type name, e.g. `modelfleet_inference`.
    const TYPE_NAME: &'static str;

    /// Schema description of the resource.
    const DESCRIPTION: &'static str;

    /// Which spec fields change in place.
    const MUTABLE: Mutable;

    /// The computed attributes this kind adds.
    const COMPUTED: &'static [Computed] = &[];

    /// Accepted `wait_for` values, the first being the default; empty means the kind has no `wait_for`.
    const WAIT_VALUES: &'static [&'static str] = &[];

    /// Whether the kind-specific `wait_for` value (anything but `none` and `reconciled`, which the generic wait
    /// handles) holds for the live object's JSON; `state` is the resource's new state (e.g. its planned
    /// `capacity_class`, to name it in a message).
    fn wait(wait_for: &str, object: &Json, state: &Value) -> WaitState {
        let _ = (object, state);
        WaitState::Failed(format!("unknown wait_for {wait_for:?}"))
    }

    /// Warnings about a valid configuration that is almost never what was meant, the same the operator reports as
    /// warning conditions, returned with the plan (`PlanResourceChange`), so `terraform plan` shows each once. `spec`
    /// holds only the top-level spec attributes whose values are wholly known (JSON names). By default: a `gpu.fit`
    /// with no headroom.
    fn warnings(spec: &serde_json::Map<String, Json>) -> Diagnostics {
        super::capacity::fit_warnings(spec.get("gpu"))
    }
}
