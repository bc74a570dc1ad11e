//! `ScalingReady`: what KEDA said about the ScaledObject, and whether a service that can reach zero can ever wake.

use serde_json::Value;

use crate::conditions::{ConditionType, DesiredCondition, Reason};
use crate::status::json::conditions_of;
use crate::{InferenceServiceSpec, Intent, Replicas, Scaling, Trigger};

/// What is known about autoscaling.
#[derive(Clone, Debug, PartialEq)]
pub enum ScalingState<'a> {
    /// No triggers: replicas fixed at this count.
    Fixed(i32),
    /// Triggers given but KEDA's CRDs are not installed.
    KedaMissing,
    /// The ScaledObject exists; `status` is its `.status` (absent until KEDA writes it).
    Applied {
        /// The ScaledObject's `.status`, if any.
        status: Option<&'a Value>,
        /// When it can reach zero with no trigger able to wake it, the warning naming the triggers
        /// ([`scale_from_zero_warning`]).
        unreachable_from_zero: Option<String>,
        /// Whether the operator paused it (`intent: suspended`); a pause KEDA reports otherwise is news.
        paused_by_intent: bool,
        /// Whether the live ScaledObject carries a KEDA pause annotation ([`pause_annotated`]). Without one, KEDA's
        /// `Paused=True` predates the operator's removal of its own (a resume): KEDA has not caught up yet, no news.
        pause_annotated: bool,
    },
}

/// Prefix of KEDA's pause annotations (`autoscaling.keda.sh/paused-replicas`, `autoscaling.keda.sh/paused`, ...).
const KEDA_PAUSE_ANNOTATION_PREFIX: &str = "autoscaling.keda.sh/paused";

/// Whether a ScaledObject's `annotations` hold a KEDA pause annotation: the only way KEDA pauses one.
pub fn pause_annotated(annotations: Option<&std::collections::BTreeMap<String, String>>) -> bool {
    annotations.is_some_and(|a| {
        a.keys()
            .any(|k| k.starts_with(KEDA_PAUSE_ANNOTATION_PREFIX))
    })
}

/// DESIGN.md section 3: the ScaledObject can reach 0 replicas but every trigger's metric disappears with the pods
/// (cpu/memory, or a Prometheus query on the model's own `vllm:` metrics), so nothing would ever scale it back up.
pub fn scale_from_zero_unreachable(spec: &InferenceServiceSpec) -> bool {
    scale_from_zero_warning(spec).is_some()
}

/// The warning of [`scale_from_zero_unreachable`], naming each trigger and why it cannot fire without a pod; what
/// the operator writes on `ScalingReady` (`ScaleToZeroUnwakeable`) and the provider shows in `terraform plan`.
pub fn scale_from_zero_warning(spec: &InferenceServiceSpec) -> Option<String> {
    scale_from_zero_warning_of(spec.intent, spec.replicas.as_ref(), spec.scaling.as_ref())
}

/// [`scale_from_zero_warning`] from the three spec fields it reads (`intent`, `replicas`, `scaling`), for callers
/// that hold only part of a spec (the provider's plan, where other fields may be unknown).
pub fn scale_from_zero_warning_of(
    intent: Option<Intent>,
    replicas: Option<&Replicas>,
    scaling: Option<&Scaling>,
) -> Option<String> {
    let replicas = replicas.cloned().unwrap_or_default();
    let can_reach_zero = intent.unwrap_or_default() == Intent::Automatic
        && (replicas.min == Some(0) || replicas.idle_replica_count == Some(0));
    if scaling.is_some_and(|s| s.http.is_some()) {
        // The KEDA HTTP add-on's interceptor counts requests while no pod runs: it wakes the service.
        return None;
    }
    let triggers = scaling
        .and_then(|s| s.triggers.as_deref())
        .unwrap_or_default();
    let needs_a_pod = |t: &Trigger| match t.type_.as_str() {
        "cpu" | "memory" => true,
        "prometheus" => t.metadata.get("query").is_some_and(|q| q.contains("vllm:")),
        _ => false,
    };
    if !can_reach_zero || triggers.is_empty() || !triggers.iter().all(needs_a_pod) {
        return None;
    }
    let named: Vec<String> = triggers
        .iter()
        .enumerate()
        .map(|(i, t)| match t.type_.as_str() {
            "prometheus" => {
                format!("scaling.triggers[{i}] (prometheus on the model's own vllm: metrics)")
            }
            other => format!("scaling.triggers[{i}] ({other})"),
        })
        .collect();
    Some(format!(
        "the service can scale to 0 but no trigger can wake it: {} report(s) a value only while a pod runs: add \
         scaling.http (the KEDA HTTP add-on wakes it on a request) or a queue-style trigger (a queue length), or set \
         replicas.min >= 1",
        named.join(", ")
    ))
}

/// `ScalingReady` from what is known about the ScaledObject; with a live one, from the `Ready` condition KEDA writes.
/// `ScaleToZeroUnwakeable` is reported as False (a warning: the object still scales above zero).
pub fn scaling_ready(scaling: &ScalingState<'_>) -> DesiredCondition {
    let condition = |status: bool, reason: Reason, message: String| {
        DesiredCondition::new(ConditionType::ScalingReady, status, reason, message)
    };
    match scaling {
        ScalingState::Fixed(replicas) => condition(
            true,
            Reason::FixedReplicas,
            format!("no triggers: replicas fixed at {replicas}"),
        ),
        ScalingState::KedaMissing => condition(
            false,
            Reason::KedaMissing,
            "the KEDA CRDs are not installed: no ScaledObject created".into(),
        ),
        ScalingState::Applied {
            status,
            unreachable_from_zero,
            paused_by_intent,
            pause_annotated,
        } => {
            let keda_condition = |type_: &str| {
                status.and_then(|s| conditions_of(s).into_iter().find(|c| c.type_ == type_))
            };
            if let Some(c) = keda_condition("Paused")
                .filter(|c| c.status == "True" && !paused_by_intent && *pause_annotated)
            {
                return condition(
                    false,
                    Reason::AutoscalerPaused,
                    format!(
                        "KEDA reports the ScaledObject paused although intent is not suspended ({}): remove the \
                         autoscaling.keda.sh/paused-replicas or paused annotation someone left on it",
                        c.words("Paused")
                    ),
                );
            }
            let keda = keda_condition("Ready");
            if let Some(c) = keda.as_ref().filter(|c| c.status == "False") {
                return condition(
                    false,
                    Reason::ScaledObjectNotReady,
                    format!("KEDA: {}", c.words("NotReady")),
                );
            }
            if let Some(warning) = unreachable_from_zero {
                return condition(false, Reason::ScaleToZeroUnwakeable, warning.clone());
            }
            let message = match keda {
                Some(_) => "the ScaledObject is ready",
                None => "the ScaledObject is applied",
            };
            condition(true, Reason::AsExpected, message.into())
        }
    }
}
