//! InferenceService status, computed: the render facts and what the live children report in, the desired status
//! and conditions out (DESIGN.md section 3, condition table and scaling rules; case O-02: never Ready on stale data).

use k8s_openapi::api::apps::v1::Deployment;

use super::Draft;
use crate::conditions::{
    self, ConditionStatus, ConditionType, DesiredCondition, ROLLOUT_STALLED, Reason,
};
use crate::render::{InferenceFacts, RenderError};
use crate::{InferenceService, InferenceServiceStatus, Intent};

/// What the live children report, as the controller read them.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed<'a> {
    /// The live Deployment after apply.
    pub deployment: Option<&'a Deployment>,
    /// The scheduler's message for a pod it cannot place ([`super::pods::unschedulable_message`]), while not rolled out.
    pub unschedulable: Option<&'a str>,
    /// Why a pod of the rollout cannot start ([`super::pods::stalled_pod_message`]), while not rolled out.
    pub stalled: Option<&'a str>,
    /// Optional APIs the spec needs that the cluster lacks, e.g. `KEDA (keda.sh/v1alpha1 ScaledObject)`.
    pub missing: Vec<&'static str>,
    /// The HTTPRoute.
    pub route: RouteState<'a>,
    /// The ScaledObject, or the fixed replica count.
    pub scaling: ScalingState<'a>,
    /// Whether 0 replicas is a state the autoscaler may hold ([`InferenceFacts::may_scale_to_zero`]).
    pub may_scale_to_zero: bool,
}

/// The status after a successful apply: facts from render, counts from the Deployment, and the conditions.
pub fn desired(
    isvc: &InferenceService,
    facts: &InferenceFacts,
    observed: &Observed<'_>,
) -> Draft<InferenceServiceStatus> {
    let (replicas, ready_replicas) = counts(observed.deployment);
    Draft {
        status: InferenceServiceStatus {
            replicas: Some(replicas),
            ready_replicas: Some(ready_replicas),
            ..facts_status(isvc, facts)
        },
        conditions: {
            let mut list = conditions(facts.intent, observed);
            super::with_fit_warning(&mut list, facts.budget.as_ref());
            list
        },
    }
}

/// `(status.replicas, status.readyReplicas)` of the live Deployment (0 for a missing count or Deployment).
fn counts(deployment: Option<&Deployment>) -> (i32, i32) {
    let status = deployment.and_then(|d| d.status.as_ref());
    (
        status.and_then(|s| s.replicas).unwrap_or(0),
        status.and_then(|s| s.ready_replicas).unwrap_or(0),
    )
}

/// The status when render refused the spec: nothing was applied, so the children of the last accepted spec keep
/// running. The replica counts are read from their live `deployment` (`None`: it does not exist, so 0; recorded
/// counts are never left to go stale while pods come and go) and the `url` still describes the running route (kept
/// from `isvc`'s status: a hunt saw a service refused for want of a Gateway announce a URL nothing served); the
/// facts describe the current spec; `Ready=False` and `Degraded=True`
/// carry the refusal's reason ([`RenderError::reason`]: `FitTooLarge`, `FitUnsplittable`, `InvalidSpec`,
/// `GatewayNotFound`) and message, as a TrainingRun's do. Not `ReconcileError`: the operator does not retry a refusal,
/// it waits for the spec (or the Deployment, for its counts) to change.
pub fn refused(
    isvc: &InferenceService,
    facts: &InferenceFacts,
    refusal: &RenderError,
    deployment: Option<&Deployment>,
) -> Draft<InferenceServiceStatus> {
    let message = refusal.condition_message();
    let previous = isvc.status.clone().unwrap_or_default();
    let (replicas, ready_replicas) = counts(deployment);
    let mut conditions = vec![DesiredCondition::new(
        ConditionType::Ready,
        false,
        refusal.reason(),
        message.clone(),
    )];
    if matches!(refusal, RenderError::NoGateway) {
        conditions.push(route_ready(&RouteState::NoGateway));
    }
    conditions.push(suspended(facts.intent));
    conditions.push(DesiredCondition::new(
        ConditionType::Degraded,
        true,
        refusal.reason(),
        message,
    ));
    // The children still run as the last reconcile left them: what it said of them stands (a hunt saw
    // `Progressing`, `ScalingReady` and `RouteReady` vanish while the Deployment and route kept running).
    let computed: Vec<ConditionType> = conditions.iter().map(|c| c.type_).collect();
    conditions.extend(conditions::carried(
        previous.conditions.as_deref().unwrap_or_default(),
        &computed,
    ));
    Draft {
        status: InferenceServiceStatus {
            replicas: Some(replicas),
            ready_replicas: Some(ready_replicas),
            url: previous.url,
            ..facts_status(isvc, facts)
        },
        conditions,
    }
}

/// The status fields render's facts determine (no replica counts, no conditions).
fn facts_status(isvc: &InferenceService, facts: &InferenceFacts) -> InferenceServiceStatus {
    InferenceServiceStatus {
        conditions: None,
        observed_generation: isvc.metadata.generation,
        replicas: None,
        ready_replicas: None,
        url: facts.url.clone(),
        capacity_class: facts.capacity_class().map(str::to_owned),
        per_gpu_memory_gib: facts.per_gpu_memory_gib(),
        kv_cache: crate::KvCacheStatus::of(facts.budget.as_ref()),
        next_transition: None,
        // Kept until the reconcile evaluates idleness again (a refused render must not forget an idle suspension).
        idle: isvc.status.as_ref().and_then(|s| s.idle.clone()),
        effective: Some(facts.effective.clone()),
    }
}

/// Every condition of a reconciled InferenceService, in the order they are written: `Ready`, `Progressing`,
/// `RouteReady`, `ScalingReady`, `Suspended`, `Degraded`.
pub fn conditions(intent: Intent, observed: &Observed<'_>) -> Vec<DesiredCondition> {
    let mut list = vec![
        ready(intent, observed),
        progressing(observed.deployment),
        route_ready(&observed.route),
        scaling_ready(&observed.scaling),
        suspended(intent),
    ];
    list.push(degraded(&list));
    list
}

/// Whether the Deployment has finished rolling out the current template: its controller observed the current
/// generation and `updated == available == desired` with no old replicas left (case O-02).
pub fn rolled_out(deployment: &Deployment) -> bool {
    let desired = desired_replicas(deployment);
    let Some(status) = deployment.status.as_ref() else {
        return false;
    };
    let observed =
        status.observed_generation.unwrap_or(-1) >= deployment.metadata.generation.unwrap_or(0);
    observed
        && status.updated_replicas.unwrap_or(0) == desired
        && status.available_replicas.unwrap_or(0) == desired
        && status.replicas.unwrap_or(0) == desired
}

/// `spec.replicas` of the Deployment (Kubernetes defaults an absent value to 1).
pub fn desired_replicas(deployment: &Deployment) -> i32 {
    deployment
        .spec
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(1)
}

/// Whether [`ready`] can use the scheduler's word on the Deployment's pods ([`Observed::unschedulable`]), so the
/// controller must read them: only while it is not rolled out with at least one desired replica, and not when this
/// very reconcile created it (no pod can exist yet). `ready` decides a Deployment of 0 replicas before looking at
/// pods, so listing them then is a request for nothing (one per new service, issue 17).
pub fn needs_pod_scan(deployment: &Deployment, created_now: bool) -> bool {
    !created_now && desired_replicas(deployment) > 0 && !rolled_out(deployment)
}

/// What the Deployment's `ReplicaFailure` condition says when it is True (the ReplicaSet controller's condition,
/// copied by the Deployment controller): `the ReplicaSet cannot create pods: REASON` (reason `FailedCreate`: an
/// admission refusal such as Pod Security, or a quota) or `the ReplicaSet cannot delete pods: REASON` (reason
/// `FailedDelete`), `REASON` being the API server's reason alone ([`super::pods::refusal_reason`]), worded as a
/// TrainingRun's refusal is.
fn replica_failure(deployment: &Deployment) -> Option<String> {
    let failure = deployment
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "ReplicaFailure" && c.status == "True")?;
    let verb = match failure.reason.as_deref() {
        Some("FailedDelete") => "delete",
        _ => "create",
    };
    Some(match failure.message.as_deref().filter(|m| !m.is_empty()) {
        Some(message) => format!(
            "the ReplicaSet cannot {verb} pods: {}",
            super::pods::refusal_reason(message)
        ),
        None => format!("the ReplicaSet cannot {verb} pods"),
    })
}

/// `Ready`: True only when the Deployment rolled out the current generation with at least one replica.
/// Precedence when not ready: Suspended, DependencyMissing, ScaledToZero (only where the autoscaler may hold 0:
/// never while `active`), Unschedulable, Progressing (its message says `rollout stalled` and why when the ReplicaSet
/// cannot create pods or a pod cannot start, else the counts).
pub fn ready(intent: Intent, observed: &Observed<'_>) -> DesiredCondition {
    let (deployment, unschedulable, missing) = (
        observed.deployment,
        observed.unschedulable,
        &observed.missing,
    );
    let not_ready = |reason: Reason, message: String| {
        DesiredCondition::new(ConditionType::Ready, false, reason, message)
    };
    if intent == Intent::Suspended {
        return not_ready(Reason::Suspended, "intent is suspended: 0 replicas".into());
    }
    if !missing.is_empty() {
        return not_ready(
            Reason::DependencyMissing,
            format!("not available: {}", missing.join(", ")),
        );
    }
    let Some(deployment) = deployment else {
        return not_ready(
            Reason::Progressing,
            "the Deployment does not exist yet".into(),
        );
    };
    let desired = desired_replicas(deployment);
    if desired == 0 && observed.may_scale_to_zero {
        return not_ready(
            Reason::ScaledToZero,
            "the Deployment is at 0 replicas: replicas.min (or replicas.idleReplicaCount) is 0 and the autoscaler \
             holds it there until a trigger is active"
                .into(),
        );
    }
    if desired == 0 {
        return not_ready(
            Reason::Progressing,
            "the Deployment has 0 replicas: raising it to the autoscaler's minimum".into(),
        );
    }
    if rolled_out(deployment) {
        return DesiredCondition::new(
            ConditionType::Ready,
            true,
            Reason::AsExpected,
            format!("{desired} of {desired} replicas updated and available"),
        );
    }
    if let Some(message) = unschedulable {
        return not_ready(Reason::Unschedulable, message.to_owned());
    }
    if let Some(failure) = replica_failure(deployment) {
        return not_ready(Reason::Progressing, format!("{ROLLOUT_STALLED}{failure}"));
    }
    if let Some(message) = observed.stalled {
        return not_ready(Reason::Progressing, format!("{ROLLOUT_STALLED}{message}"));
    }
    let status = deployment.status.clone().unwrap_or_default();
    let generation = deployment.metadata.generation.unwrap_or(0);
    if status.observed_generation.unwrap_or(-1) < generation {
        // The counts describe the Deployment before its latest change (a breaker's finding: "1 updated, 1 available
        // of 1 desired" read as a contradiction); an annotation change bumps a Deployment's generation too.
        return not_ready(
            Reason::Progressing,
            format!(
                "rollout in progress: the Deployment controller has not observed generation {generation} yet"
            ),
        );
    }
    not_ready(
        Reason::Progressing,
        format!(
            "rollout in progress: {} updated, {} available of {desired} desired",
            status.updated_replicas.unwrap_or(0),
            status.available_replicas.unwrap_or(0)
        ),
    )
}

/// `Progressing`: True while a rollout is under way, else False with reason `RolloutComplete`.
pub fn progressing(deployment: Option<&Deployment>) -> DesiredCondition {
    match deployment {
        Some(d) if rolled_out(d) || desired_replicas(d) == 0 => DesiredCondition::new(
            ConditionType::Progressing,
            false,
            Reason::RolloutComplete,
            "the Deployment is rolled out",
        ),
        _ => DesiredCondition::new(
            ConditionType::Progressing,
            true,
            Reason::RollingOut,
            "the Deployment is rolling out",
        ),
    }
}

/// `Suspended`: True exactly when intent is suspended.
pub fn suspended(intent: Intent) -> DesiredCondition {
    if intent == Intent::Suspended {
        DesiredCondition::new(
            ConditionType::Suspended,
            true,
            Reason::Suspended,
            "intent is suspended",
        )
    } else {
        DesiredCondition::new(
            ConditionType::Suspended,
            false,
            Reason::AsExpected,
            format!("intent is {}", intent.as_str()),
        )
    }
}

/// `Degraded`: True when another condition is a warning a human must act on, or `Ready` says the rollout is
/// stalled ([`super::stall_problem`]); the message lists them (`Type: Reason` for a warning, `Ready: rollout
/// stalled: ...` in full for a stall, since its reason alone says nothing).
pub fn degraded(conditions: &[DesiredCondition]) -> DesiredCondition {
    let problems: Vec<String> = conditions
        .iter()
        .filter_map(|c| {
            let warning = is_warning(c).then(|| format!("{}: {}", c.type_, c.reason));
            warning.or_else(|| super::stall_problem(c))
        })
        .collect();
    if problems.is_empty() {
        DesiredCondition::new(ConditionType::Degraded, false, Reason::AsExpected, "")
    } else {
        DesiredCondition::new(
            ConditionType::Degraded,
            true,
            Reason::NeedsAttention,
            problems.join("; "),
        )
    }
}

/// Whether the desired condition is bad news a user should see as a Warning Event: a `False` condition whose reason
/// needs a human (a failed step, a missing dependency or Gateway, a route or autoscaler problem, a refused spec), or
/// `Degraded=True, FitWithoutHeadroom` (the one warning no other condition carries). `Degraded=True,
/// NeedsAttention` is not: it only lists the other warnings, each announced on its own.
pub fn is_warning(condition: &DesiredCondition) -> bool {
    match condition.status {
        ConditionStatus::False => matches!(
            condition.reason,
            Reason::Unschedulable
                | Reason::ReconcileError
                | Reason::DependencyMissing
                | Reason::GatewayNotFound
                | Reason::GatewayRefused
                | Reason::HostnameConflict
                | Reason::KedaMissing
                | Reason::ScaleToZeroUnwakeable
                | Reason::ScaledObjectNotReady
                | Reason::AutoscalerPaused
                | Reason::FitTooLarge
                | Reason::FitUnsplittable
                | Reason::InvalidSpec
        ),
        ConditionStatus::True => {
            condition.type_ == ConditionType::Degraded
                && condition.reason == Reason::FitWithoutHeadroom
        }
        ConditionStatus::Unknown => false,
    }
}

/// Whether an object whose `Ready` is `ready` is settled (resynced at the slow period) rather than still
/// converging (requeued soon: pods may be waiting for a node).
pub fn settled(ready: &DesiredCondition) -> bool {
    ready.is_true()
        || matches!(
            ready.reason,
            Reason::Suspended | Reason::ScaledToZero | Reason::DependencyMissing
        )
}

mod route;
mod scaling;

pub use route::{RouteState, route_ready};
pub use scaling::{
    ScalingState, pause_annotated, scale_from_zero_unreachable, scale_from_zero_warning,
    scale_from_zero_warning_of, scaling_ready,
};

#[cfg(test)]
mod tests;
