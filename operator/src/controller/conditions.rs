//! Condition helpers for the condition table of DESIGN.md section 3 (one table for all kinds).
//!
//! Reconcilers describe the conditions they want with [`DesiredCondition`] (no timestamps); [`merge`] turns them into
//! `metav1.Condition`s, keeping `lastTransitionTime` from the current status when a condition's `status` did not
//! change, so an unchanged object produces a byte-identical status and the status writer performs no write.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// Condition types (the `type` column of the DESIGN.md table).
pub mod types {
    /// All kinds: serving / data usable.
    pub const READY: &str = "Ready";
    /// InferenceService: a rollout is under way.
    pub const PROGRESSING: &str = "Progressing";
    /// InferenceService: the HTTPRoute is accepted by its Gateway.
    pub const ROUTE_READY: &str = "RouteReady";
    /// InferenceService: the ScaledObject is valid and can act.
    pub const SCALING_READY: &str = "ScalingReady";
    /// InferenceService, TrainingRun: intent is suspended.
    pub const SUSPENDED: &str = "Suspended";
    /// TrainingRun: every referenced Dataset exists, matches and allows the run.
    pub const DATASETS_READY: &str = "DatasetsReady";
    /// All kinds: something needs a human (the message says what).
    pub const DEGRADED: &str = "Degraded";
    /// Dataset: the named claim is Bound.
    pub const PVC_BOUND: &str = "PVCBound";
}

/// Condition reasons (the `reasons when not True` column of the DESIGN.md table, plus the True reasons we use).
pub mod reasons {
    /// Ready=False: a rollout has not finished.
    pub const PROGRESSING: &str = "Progressing";
    /// Ready=False / Suspended=True: intent is suspended.
    pub const SUSPENDED: &str = "Suspended";
    /// Ready=False: scaled to zero by the autoscaler.
    pub const SCALED_TO_ZERO: &str = "ScaledToZero";
    /// Ready=False: pods cannot be placed on any node.
    pub const UNSCHEDULABLE: &str = "Unschedulable";
    /// Ready=False: the last reconcile failed.
    pub const RECONCILE_ERROR: &str = "ReconcileError";
    /// Ready=False: the KEDA or Gateway API CRDs are not installed.
    pub const DEPENDENCY_MISSING: &str = "DependencyMissing";
    /// Progressing=False: the rollout finished.
    pub const ROLLOUT_COMPLETE: &str = "RolloutComplete";
    /// RouteReady=False: no `gateway` in the spec and no default gateway.
    pub const NOT_REQUESTED: &str = "NotRequested";
    /// RouteReady=False: the Gateway did not accept the route (yet).
    pub const NOT_ACCEPTED: &str = "NotAccepted";
    /// RouteReady=False: the parent Gateway does not exist.
    pub const GATEWAY_NOT_FOUND: &str = "GatewayNotFound";
    /// RouteReady=False: a hostname is already taken.
    pub const HOSTNAME_CONFLICT: &str = "HostnameConflict";
    /// ScalingReady (warning): the ScaledObject can reach 0 but no trigger's metric exists at zero pods.
    pub const SCALE_FROM_ZERO_UNREACHABLE: &str = "ScaleFromZeroUnreachable";
    /// ScalingReady=False: KEDA's CRDs are not installed.
    pub const KEDA_MISSING: &str = "KedaMissing";
    /// DatasetsReady=False: a referenced Dataset does not exist.
    pub const DATASET_NOT_FOUND: &str = "DatasetNotFound";
    /// DatasetsReady=False: the referenced version differs from the Dataset's `spec.version`.
    pub const VERSION_MISMATCH: &str = "VersionMismatch";
    /// DatasetsReady=False: the run's service account is not allowed.
    pub const ACCESS_DENIED: &str = "AccessDenied";
    /// DatasetsReady=False: the Dataset is in another namespace.
    pub const CROSS_NAMESPACE: &str = "CrossNamespace";
    /// PVCBound=False: the claim does not exist.
    pub const CLAIM_NOT_FOUND: &str = "ClaimNotFound";
    /// PVCBound=False: the claim is not Bound yet.
    pub const CLAIM_PENDING: &str = "ClaimPending";
    /// Ready/others=True: the generic positive reason.
    pub const AS_EXPECTED: &str = "AsExpected";
}

/// Status value of a condition (`True`, `False`, `Unknown`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConditionStatus {
    /// `"True"`.
    True,
    /// `"False"`.
    False,
    /// `"Unknown"`.
    Unknown,
}

impl ConditionStatus {
    /// The Kubernetes spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }
}

impl ConditionStatus {
    /// Reads the Kubernetes spelling; anything but `"True"` or `"False"` is `Unknown` (as the
    /// `metav1.Condition` API defines the field).
    pub fn parse(status: &str) -> Self {
        match status {
            "True" => ConditionStatus::True,
            "False" => ConditionStatus::False,
            _ => ConditionStatus::Unknown,
        }
    }
}

impl From<bool> for ConditionStatus {
    fn from(value: bool) -> Self {
        if value {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        }
    }
}

/// A condition as a reconciler wants it, without timestamps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DesiredCondition {
    /// Condition type (see [`types`]).
    pub type_: String,
    /// True / False / Unknown.
    pub status: ConditionStatus,
    /// CamelCase reason (see [`reasons`]); never empty (the API server requires one).
    pub reason: String,
    /// Human-readable message; may be empty.
    pub message: String,
}

impl DesiredCondition {
    /// Builds a desired condition.
    pub fn new(
        type_: &str,
        status: impl Into<ConditionStatus>,
        reason: &str,
        message: impl Into<String>,
    ) -> Self {
        Self {
            type_: type_.to_owned(),
            status: status.into(),
            reason: reason.to_owned(),
            message: message.into(),
        }
    }
}

impl From<&Condition> for DesiredCondition {
    /// The condition as observed, to be written again unchanged (its transition time is kept by [`merge`]).
    fn from(observed: &Condition) -> Self {
        Self {
            type_: observed.type_.clone(),
            status: ConditionStatus::parse(&observed.status),
            reason: observed.reason.clone(),
            message: observed.message.clone(),
        }
    }
}

/// The conditions after a failed reconcile step: `Ready=False, ReconcileError` with `error` as the message, then
/// every other observed condition unchanged (what the last successful reconcile knew still stands).
pub fn after_error(
    observed: &[Condition],
    error: &impl std::fmt::Display,
) -> Vec<DesiredCondition> {
    let ready = DesiredCondition::new(
        types::READY,
        false,
        reasons::RECONCILE_ERROR,
        error.to_string(),
    );
    std::iter::once(ready)
        .chain(
            observed
                .iter()
                .filter(|c| c.type_ != types::READY)
                .map(DesiredCondition::from),
        )
        .collect()
}

/// Merges desired conditions with the current ones.
///
/// The result has exactly the desired conditions, in the desired order, each with `observedGeneration =
/// generation`. `lastTransitionTime` is kept from the current condition of the same type when its `status` did not
/// change (a changed reason or message is not a transition), and is `now` otherwise.
pub fn merge(
    current: &[Condition],
    desired: &[DesiredCondition],
    generation: Option<i64>,
    now: &Time,
) -> Vec<Condition> {
    desired
        .iter()
        .map(|want| {
            let previous = current.iter().find(|c| c.type_ == want.type_);
            let last_transition_time = match previous {
                Some(prev) if prev.status == want.status.as_str() => {
                    prev.last_transition_time.clone()
                }
                _ => now.clone(),
            };
            Condition {
                type_: want.type_.clone(),
                status: want.status.as_str().to_owned(),
                reason: want.reason.clone(),
                message: want.message.clone(),
                observed_generation: generation,
                last_transition_time,
            }
        })
        .collect()
}

/// Finds the condition of `type_` in a list.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of `type_` exists and is `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    find(conditions, type_).is_some_and(|c| c.status == "True")
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::Timestamp;

    fn at(seconds: i64) -> Time {
        Time(Timestamp::from_second(seconds).unwrap())
    }

    fn ready(status: bool, reason: &str) -> DesiredCondition {
        DesiredCondition::new(types::READY, status, reason, "")
    }

    #[test]
    fn after_error_replaces_ready_and_keeps_the_rest() {
        let observed = merge(
            &[],
            &[
                ready(true, reasons::AS_EXPECTED),
                DesiredCondition::new(types::ROUTE_READY, true, reasons::AS_EXPECTED, "accepted"),
                DesiredCondition::new(
                    types::SCALING_READY,
                    ConditionStatus::Unknown,
                    reasons::PROGRESSING,
                    "",
                ),
            ],
            Some(1),
            &at(100),
        );
        let after = after_error(&observed, &"apply Deployment: 500");
        assert_eq!(
            after,
            [
                DesiredCondition::new(
                    types::READY,
                    false,
                    reasons::RECONCILE_ERROR,
                    "apply Deployment: 500"
                ),
                DesiredCondition::new(types::ROUTE_READY, true, reasons::AS_EXPECTED, "accepted"),
                DesiredCondition::new(
                    types::SCALING_READY,
                    ConditionStatus::Unknown,
                    reasons::PROGRESSING,
                    ""
                ),
            ]
        );
        assert_eq!(ConditionStatus::parse("maybe"), ConditionStatus::Unknown);
    }

    #[test]
    fn new_conditions_get_now() {
        let merged = merge(
            &[],
            &[ready(false, reasons::PROGRESSING)],
            Some(3),
            &at(100),
        );
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].status, "False");
        assert_eq!(merged[0].reason, "Progressing");
        assert_eq!(merged[0].observed_generation, Some(3));
        assert_eq!(merged[0].last_transition_time, at(100));
    }

    #[test]
    fn unchanged_status_keeps_the_transition_time_even_if_reason_changes() {
        let current = merge(
            &[],
            &[ready(false, reasons::PROGRESSING)],
            Some(1),
            &at(100),
        );
        let merged = merge(
            &current,
            &[ready(false, reasons::UNSCHEDULABLE)],
            Some(2),
            &at(200),
        );
        assert_eq!(merged[0].last_transition_time, at(100));
        assert_eq!(merged[0].reason, "Unschedulable");
        assert_eq!(merged[0].observed_generation, Some(2));
    }

    #[test]
    fn changed_status_is_a_transition() {
        let current = merge(
            &[],
            &[ready(false, reasons::PROGRESSING)],
            Some(1),
            &at(100),
        );
        let merged = merge(
            &current,
            &[ready(true, reasons::AS_EXPECTED)],
            Some(1),
            &at(200),
        );
        assert_eq!(merged[0].last_transition_time, at(200));
        assert!(is_true(&merged, types::READY));
    }

    #[test]
    fn merging_twice_is_idempotent_and_drops_stale_types() {
        let desired = [
            ready(true, reasons::AS_EXPECTED),
            DesiredCondition::new(
                types::ROUTE_READY,
                false,
                reasons::NOT_REQUESTED,
                "no gateway",
            ),
        ];
        let mut current = merge(&[], &desired, Some(1), &at(100));
        current.push(Condition {
            type_: "Stale".into(),
            status: "True".into(),
            reason: "Old".into(),
            message: String::new(),
            observed_generation: None,
            last_transition_time: at(1),
        });
        let once = merge(&current, &desired, Some(1), &at(500));
        let twice = merge(&once, &desired, Some(1), &at(900));
        assert_eq!(once, twice);
        assert!(find(&once, "Stale").is_none());
        assert_eq!(
            find(&once, types::ROUTE_READY)
                .unwrap()
                .last_transition_time,
            at(100)
        );
    }
}
