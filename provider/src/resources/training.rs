//! `modelfleet_training`: one TrainingRun custom resource (DESIGN.md section 3, "TrainingRun"; section 6 for the
//! plan-time and run-time attributes).
//!
//! Only `intent`, `cancel` and `schedule` change in place (`TRAINING_MUTABLE_FIELDS`, the CRD's immutability rules: a
//! Job template cannot change, a new attempt is a new run); every other spec field, `name` and `namespace` require
//! replacement. Computed: `capacity_class`, `per_gpu_memory_gib`, `job_name` (plan time), `phase` (refreshed).
//! `wait_for`: `none`, `reconciled`, `completed`.

use model_fleet_api::conditions::{ConditionType, Reason, says_stalled};
use model_fleet_api::render::job_name_of;
use model_fleet_api::{CompletionMode, TRAINING_MUTABLE_FIELDS, TrainingPhase, TrainingRun};
use serde_json::Value as Json;

use super::capacity::{CAPACITY_CLASS, KV_CACHE_PER_GPU_MIB, PER_GPU_MEMORY_GIB};
use super::kind::{Computed, Kind, Mutable, PlanInputs, Source, WaitState};
use super::object::CustomResource;
use super::wait::{self, condition, condition_is};
use crate::diag::{AttrPath, Diagnostics};
use crate::value::{Type, Value};

/// The `modelfleet_training` kind.
pub struct Training;

/// `wait_for` value: the run's phase is `Succeeded` (fails early on `Failed` or `Cancelled`).
pub const COMPLETED: &str = "completed";

impl Kind for Training {
    type Object = TrainingRun;
    const TYPE_NAME: &'static str = "modelfleet_training";
    const DESCRIPTION: &'static str = "A Model Fleet TrainingRun: one batch Job. Only intent, cancel and schedule \
        change in place; any other change replaces the run (a new attempt is a new run).";
    const MUTABLE: Mutable = Mutable::Only(TRAINING_MUTABLE_FIELDS);
    const COMPUTED: &'static [Computed] = &[
        CAPACITY_CLASS,
        PER_GPU_MEMORY_GIB,
        KV_CACHE_PER_GPU_MIB,
        Computed {
            name: "job_name",
            ty: Type::String,
            description: "Name of the run's Job, computed at plan time.",
            source: Source::Plan {
                inputs: &["completion_mode", "completions", "parallelism"],
                value: job_name,
            },
        },
        Computed {
            name: "phase",
            ty: Type::String,
            description: "Phase of the run: Pending, Running, Succeeded, Failed, Suspended or Cancelled \
                          (refreshed on read; null before the operator reports one).",
            source: Source::Live(phase_value),
        },
    ];
    const WAIT_VALUES: &'static [&'static str] = &[wait::NONE, wait::RECONCILED, COMPLETED];

    fn wait(wait_for: &str, object: &Json, _state: &Value) -> WaitState {
        if wait_for != COMPLETED {
            return WaitState::Failed(format!("unknown wait_for {wait_for:?}"));
        }
        completed_state(object)
    }
}

/// The resource type.
///
/// # Panics
/// Never in practice: a collision between the API and the built-in attributes is caught by this module's tests.
#[allow(clippy::expect_used)]
pub fn training() -> CustomResource<Training> {
    CustomResource::new().expect("TrainingRun API fits the resource layout")
}

/// The operator's Job name for the run (it reads only these three spec fields).
fn job_name(inputs: &PlanInputs<'_>) -> Result<Value, Diagnostics> {
    let int = |key: &str| {
        inputs
            .spec
            .get(key)
            .and_then(Json::as_i64)
            .and_then(|n| i32::try_from(n).ok())
    };
    let mode: Option<CompletionMode> = match inputs.spec.get("completionMode") {
        Some(mode) => Some(serde_json::from_value(mode.clone()).map_err(|e| {
            Diagnostics::error_at(
                AttrPath::attrs(&["completion_mode"]),
                "Invalid completion_mode",
                e.to_string(),
            )
        })?),
        None => None,
    };
    Ok(Value::string(job_name_of(
        inputs.name,
        mode,
        int("completions"),
        int("parallelism"),
    )))
}

/// The phase the operator reported, if any.
fn phase(object: &Json) -> Option<TrainingPhase> {
    object
        .pointer("/status/phase")
        .and_then(|p| serde_json::from_value(p.clone()).ok())
}

fn phase_value(object: &Json) -> Value {
    object
        .pointer("/status/phase")
        .and_then(Json::as_str)
        .map_or(Value::Null, Value::string)
}

/// `completed`: waits for `Succeeded`; `Failed` and `Cancelled` end the wait with an error. While it waits, the
/// message of `Degraded=True, PodsRefused`, else of `Ready`, says why.
fn completed_state(object: &Json) -> WaitState {
    let reason = object
        .pointer("/status/reason")
        .and_then(Json::as_str)
        .unwrap_or("no reason given");
    match phase(object) {
        Some(TrainingPhase::Succeeded) => WaitState::Done,
        Some(TrainingPhase::Failed) => WaitState::Failed(format!("the run failed: {reason}")),
        Some(TrainingPhase::Cancelled) => WaitState::Failed("the run was cancelled".into()),
        other => {
            // Pods a quota refuses (`Degraded=True, PodsRefused`, the only word of it while the run is Running),
            // else why the run is not ready. Another Degraded reason (a fit warning) does not hide a stall.
            let refused = condition_is(
                object,
                ConditionType::Degraded,
                "True",
                Some(Reason::PodsRefused),
            );
            let message = refused
                .or_else(|| condition(object, ConditionType::Ready.as_str()))
                .or_else(|| condition(object, ConditionType::DatasetsReady.as_str()))
                .and_then(|c| c.get("message"))
                .and_then(Json::as_str);
            let detail = message.map(|m| format!(" ({m})")).unwrap_or_default();
            let phase = other.map_or("none".to_string(), |p| format!("{p:?}"));
            let missing = format!("phase is {phase}, not Succeeded{detail}");
            // Only Ready's message can say `run stalled: ` (conditions::RUN_STALLED). A Dataset refusal
            // (`DatasetsReady=False`) waits for a change too: the Dataset created, its allowlist widened, the version
            // registered (a user's finding: its timeout advised a longer wait).
            let datasets_refused =
                condition_is(object, ConditionType::DatasetsReady, "False", None).is_some();
            if datasets_refused || message.is_some_and(says_stalled) {
                WaitState::Stalled(missing)
            } else {
                WaitState::Waiting(missing)
            }
        }
    }
}

#[cfg(test)]
mod tests;
