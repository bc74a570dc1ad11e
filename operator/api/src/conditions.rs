//! The condition vocabulary of the three kinds (DESIGN.md section 3, "Conditions": one table for all kinds) and the
//! pure helpers that turn desired conditions into `metav1.Condition`s.
//!
//! Types and reasons are enums, not strings: the operator emits them, the provider's `wait_for` and the tests match
//! on them, and renaming one is a compile error everywhere. The wire spelling is the variant name (CamelCase, as
//! Kubernetes requires for `reason`). `docs/CONDITIONS.md` is the table of every reason with what it means and what
//! to do; a test keeps the table and [`Reason::ALL`] equal, and another proves every reason is emitted by the code.
//!
//! Reconcilers describe the conditions they want with [`DesiredCondition`] (no timestamps); [`merge`] turns them into
//! `metav1.Condition`s, keeping `lastTransitionTime` from the current status when a condition's `status` did not
//! change, so an unchanged object produces a byte-identical status and the status writer performs no write.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// Declares a closed vocabulary: the enum, `ALL`, `as_str` (the variant name) and `parse`.
macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident { $($(#[$doc:meta])* $variant:ident,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$doc])* $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The wire spelling (the variant name).
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => stringify!($variant),)+
                }
            }

            /// The value spelled `text`, if it is one of ours.
            pub fn parse(text: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == text)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

vocabulary! {
    /// Condition types (the `type` column of the table).
    ConditionType {
        /// All kinds: serving (InferenceService), data usable (Dataset), a pod is ready or the run succeeded
        /// (TrainingRun; its `phase` says more).
        Ready,
        /// InferenceService: a rollout is under way.
        Progressing,
        /// InferenceService: the HTTPRoute is accepted by its Gateway for the current spec.
        RouteReady,
        /// InferenceService: the ScaledObject is valid and can act (or replicas are fixed).
        ScalingReady,
        /// InferenceService, TrainingRun: intent is suspended (or the run is cancelled).
        Suspended,
        /// TrainingRun: every referenced Dataset exists, matches and allows the run.
        DatasetsReady,
        /// InferenceService, TrainingRun: something needs a human; the message says what.
        Degraded,
        /// Dataset: the named PersistentVolumeClaim is Bound.
        PVCBound,
    }
}

vocabulary! {
    /// Condition reasons: every reason the operator writes, True reasons included.
    Reason {
        /// The condition holds (or, for `Degraded` and `Suspended` False, nothing is unusual).
        AsExpected,
        /// Ready=False: a rollout has not finished, or a run's pods are not ready yet.
        Progressing,
        /// Progressing=True: the Deployment is rolling out its current template.
        RollingOut,
        /// Progressing=False: the rollout of the current template finished.
        RolloutComplete,
        /// Ready=False, Suspended=True: intent is suspended.
        Suspended,
        /// Suspended=True: `spec.schedule.expiresAt` has passed, so the object is suspended as with `intent: suspended`.
        Expired,
        /// InferenceService Suspended=True: no KEDA trigger was active for `spec.schedule.suspendAfterIdleSeconds`, so
        /// the service is suspended as with `intent: suspended` until its spec changes.
        Idle,
        /// TrainingRun Ready=False, Suspended=True: `spec.cancel` is true (terminal).
        Cancelled,
        /// InferenceService Ready=False: the Deployment is at 0 replicas, where the autoscaler holds it until a trigger
        /// is active (scaled down, or created at 0 with `replicas.min: 0`).
        ScaledToZero,
        /// Ready=False: the scheduler cannot place the pods on any node (no node of the capacity class).
        Unschedulable,
        /// TrainingRun Degraded=True: the Job controller cannot create some of the run's pods (a ResourceQuota, Pod
        /// Security); the message has how many and the API server's reason.
        PodsRefused,
        /// Ready=False: the last reconcile failed; the message has the error.
        ReconcileError,
        /// Ready=False: a child's name is taken by an object this one does not own (someone else's, or a deleted
        /// object's still terminating); it is never adopted, overwritten or deleted; the message names it.
        ForeignObject,
        /// Ready=False, RouteReady=False: the KEDA, Gateway API or KEDA HTTP add-on CRDs are not installed, or the
        /// operator runs with `--http-add-on=disabled` and the spec has `scaling.http`; the message names each.
        DependencyMissing,
        /// TrainingRun Ready=False, Degraded=True: the Job failed; `status.reason` has the Job's reason.
        Failed,
        /// Dataset Ready=False: its deletion waits for the unfinished runs using it.
        InUse,
        /// RouteReady=False: no `gateway` in the spec.
        NotRequested,
        /// RouteReady=False: no Gateway condition describes the route's current generation yet.
        NotAccepted,
        /// RouteReady=False (a warning): the Gateway refused the route for its current generation (`Accepted=False`,
        /// e.g. `NotAllowedByListeners`, `NoMatchingListenerHostname`); the message has the Gateway's reason.
        GatewayRefused,
        /// RouteReady=True: the Gateway accepted the route for its current generation.
        Accepted,
        /// RouteReady=False: the parent Gateway does not exist, or none is configured (then also Ready=False and
        /// Degraded=True: the spec is refused).
        GatewayNotFound,
        /// RouteReady=False: another route already serves the hostname and path.
        HostnameConflict,
        /// ScalingReady=True: no triggers, replicas are fixed.
        FixedReplicas,
        /// ScalingReady=False: triggers are given but KEDA's CRDs are not installed.
        KedaMissing,
        /// ScalingReady=False (a warning): the service can reach 0 replicas but no trigger can wake it.
        ScaleToZeroUnwakeable,
        /// ScalingReady=False: KEDA reports the ScaledObject not ready; the message has KEDA's reason.
        ScaledObjectNotReady,
        /// ScalingReady=False (a warning): KEDA reports the ScaledObject paused while intent is not suspended (a
        /// pause annotation someone left).
        AutoscalerPaused,
        /// DatasetsReady=False: a referenced Dataset does not exist.
        DatasetNotFound,
        /// DatasetsReady=False: the referenced version differs from the Dataset's `spec.version`.
        VersionMismatch,
        /// DatasetsReady=False: the run's ServiceAccount is not in the Dataset's allowlist.
        AccessDenied,
        /// DatasetsReady=False: the reference names another namespace.
        CrossNamespace,
        /// PVCBound=True: the claim is Bound.
        Bound,
        /// PVCBound=False, Dataset Ready=False: the claim does not exist.
        ClaimNotFound,
        /// PVCBound=False, Dataset Ready=False: the claim exists but is not Bound yet.
        ClaimPending,
        /// PVCBound=False, Dataset Ready=False: the claim is `Lost` (its PersistentVolume is gone).
        ClaimLost,
        /// InferenceService Degraded=True: another condition is a warning; the message lists them.
        NeedsAttention,
        /// Degraded=True, Ready=False: the GPU fit budget fits no capacity class, or is malformed.
        FitTooLarge,
        /// Degraded=True, Ready=False: tensor parallelism cannot split a module's KV or attention heads over the
        /// fit's shard count; the message lists the counts that work.
        FitUnsplittable,
        /// Degraded=True (a warning): the fit has `runtimeGiB: 0` and `marginPercent: 0`, so nothing is left for the
        /// runtime; the object is still reconciled.
        FitWithoutHeadroom,
        /// Degraded=True, Ready=False: the spec uses a name the operator reserves.
        InvalidSpec,
        /// TrainingRun Degraded=True, Ready=False: a dataset mount was asked to be writable (case O-07).
        WritableDatasetMount,
    }
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

    /// Reads the Kubernetes spelling; anything but `"True"` or `"False"` is `Unknown` (as the `metav1.Condition`
    /// API defines the field).
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
    /// Condition type.
    pub type_: ConditionType,
    /// True / False / Unknown.
    pub status: ConditionStatus,
    /// Reason (never empty on the wire: the API server requires one).
    pub reason: Reason,
    /// Human-readable message; may be empty.
    pub message: String,
    /// Carried unchanged from an earlier reconcile ([`after_error`]): [`merge`] keeps the `observedGeneration` it was
    /// written with, the generation it describes, instead of stamping the one being reconciled.
    pub carried: bool,
}

impl DesiredCondition {
    /// Builds a desired condition.
    pub fn new(
        type_: ConditionType,
        status: impl Into<ConditionStatus>,
        reason: Reason,
        message: impl Into<String>,
    ) -> Self {
        Self {
            type_,
            status: status.into(),
            reason,
            message: message.into(),
            carried: false,
        }
    }

    /// The condition as observed, to be written again unchanged (its transition time is kept by [`merge`]);
    /// `None` for a type or reason outside our vocabulary (written by something else: dropped on the next write).
    pub fn from_observed(observed: &Condition) -> Option<Self> {
        Some(Self {
            type_: ConditionType::parse(&observed.type_)?,
            status: ConditionStatus::parse(&observed.status),
            reason: Reason::parse(&observed.reason)?,
            message: observed.message.clone(),
            carried: false,
        })
    }

    /// Whether the condition is `True`.
    pub fn is_true(&self) -> bool {
        self.status == ConditionStatus::True
    }
}

/// The conditions after a failed reconcile step: `Ready=False` with `reason` (`ReconcileError`, or `ForeignObject`
/// when a child's name is taken by an object this one does not own) and `error` as the message, then every other
/// observed condition unchanged (what the last successful reconcile knew still stands) and marked `carried`, so it
/// keeps the `observedGeneration` it describes (a hunt saw `RouteReady` say "no gateway in the spec" stamped with the
/// generation that added one).
pub fn after_error(
    observed: &[Condition],
    reason: Reason,
    error: &impl fmt::Display,
) -> Vec<DesiredCondition> {
    let ready = DesiredCondition::new(ConditionType::Ready, false, reason, error.to_string());
    std::iter::once(ready)
        .chain(carried(observed, &[ConditionType::Ready]))
        .collect()
}

/// The `observed` conditions of our vocabulary whose type is not in `except`, unchanged and marked `carried` (they
/// keep the `observedGeneration` they describe): what a reconcile that applied nothing (a failure, a refused spec)
/// writes again of the conditions it did not compute.
pub fn carried(observed: &[Condition], except: &[ConditionType]) -> Vec<DesiredCondition> {
    observed
        .iter()
        .filter_map(DesiredCondition::from_observed)
        .filter(|c| !except.contains(&c.type_))
        .map(|c| DesiredCondition { carried: true, ..c })
        .collect()
}

/// Merges desired conditions with the current ones.
///
/// The result has exactly the desired conditions, in the desired order, each with `observedGeneration = generation`
/// (a `carried` one keeps the current condition's).
/// `lastTransitionTime` is kept from the current condition of the same type when its `status` did not change (a
/// changed reason or message is not a transition), and is `now` otherwise.
pub fn merge(
    current: &[Condition],
    desired: &[DesiredCondition],
    generation: Option<i64>,
    now: &Time,
) -> Vec<Condition> {
    desired
        .iter()
        .map(|want| {
            let previous = find(current, want.type_);
            let last_transition_time = match previous {
                Some(prev) if prev.status == want.status.as_str() => {
                    prev.last_transition_time.clone()
                }
                _ => now.clone(),
            };
            Condition {
                type_: want.type_.as_str().to_owned(),
                status: want.status.as_str().to_owned(),
                reason: want.reason.as_str().to_owned(),
                message: want.message.clone(),
                observed_generation: match previous {
                    Some(prev) if want.carried => prev.observed_generation,
                    _ => generation,
                },
                last_transition_time,
            }
        })
        .collect()
}

/// How `Ready`'s message (reason `Progressing`) starts when an InferenceService's rollout cannot go on without a
/// change: the ReplicaSet cannot create pods, or a container cannot start (docs/CONDITIONS.md). The provider's
/// `wait_for` reads it ([`says_stalled`]) to tell a stall from a slow start.
pub const ROLLOUT_STALLED: &str = "rollout stalled: ";

/// How `Ready`'s message (reason `Progressing`) starts when a `Pending` TrainingRun cannot go on without a change:
/// the Job cannot create pods, or a container cannot start (docs/CONDITIONS.md).
pub const RUN_STALLED: &str = "run stalled: ";

/// Whether a `Ready` message says a rollout or run is stalled: it starts [`ROLLOUT_STALLED`] or [`RUN_STALLED`].
pub fn says_stalled(message: &str) -> bool {
    message.starts_with(ROLLOUT_STALLED) || message.starts_with(RUN_STALLED)
}

/// Finds the condition of `type_` in a list.
pub fn find(conditions: &[Condition], type_: ConditionType) -> Option<&Condition> {
    conditions.iter().find(|c| c.type_ == type_.as_str())
}

/// Whether the condition of `type_` exists and is `True`.
pub fn is_true(conditions: &[Condition], type_: ConditionType) -> bool {
    find(conditions, type_).is_some_and(|c| c.status == ConditionStatus::True.as_str())
}

#[cfg(test)]
mod tests;
