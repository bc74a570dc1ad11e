//! What the pods of a run that awaits them say (DESIGN.md section 3, TrainingRun `phase`): which runs the controller
//! reads pods for, how many pods the Job wants and misses, and the `Ready` and `Degraded` conditions that say why
//! they do not run.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;

use super::derive;
use crate::TrainingPhase;
use crate::conditions::{self, ConditionType, DesiredCondition, RUN_STALLED, Reason};

/// Why the run's pods do not run, as the controller read them while the run awaits them ([`needs_pod_scan`]); all
/// `None` when it did not look (or found nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodFindings<'a> {
    /// The Job controller's latest refusal to create a pod, read only while the Job has fewer pods than it wants
    /// ([`missing_pods`]; [`crate::status::pods::failed_create_message`] since [`refusals_since`]): Pod Security
    /// admission, a ResourceQuota such as one on `requests.nvidia.com/gpu` or on `pods`.
    pub refused: Option<&'a str>,
    /// The scheduler's message for a pod it cannot place ([`crate::status::pods::unschedulable_message`]).
    pub unschedulable: Option<&'a str>,
    /// A container the kubelet will not start without a change ([`crate::status::pods::stalled_pod_message`]).
    pub stalled: Option<&'a str>,
}

/// Whether the run waits for pods: it is `Pending` (no outcome, not suspended or cancelled, no pod ready: before the
/// first pod, or while a failed one is replaced), or `Running` with fewer pods than its Job wants ([`missing_pods`]:
/// some pods were refused, or a failed one awaits its replacement). The controller requeues such a run every few
/// seconds, as no Job change may come while the Job controller retries.
pub fn awaits_pods(job: &Job, cancelled: bool) -> bool {
    match derive(cancelled, Some(job), None).phase {
        TrainingPhase::Pending => true,
        TrainingPhase::Running => missing_pods(job) > 0,
        _ => false,
    }
}

/// Whether [`super::desired`] can use [`PodFindings`] for `job`, so the controller must read the Job's pods: only
/// while the run [`awaits_pods`], and not in the reconcile that created the Job (no pod can exist yet).
pub fn needs_pod_scan(job: &Job, cancelled: bool, created_now: bool) -> bool {
    !created_now && awaits_pods(job, cancelled)
}

/// How many pods the Job controller wants active now, by its own rule (`manageJob`'s `wantActive` in
/// `pkg/controller/job/job_controller.go`, Kubernetes v1.35): `spec.parallelism` (1 when unset), capped by the
/// completions still missing (`spec.completions - status.succeeded`, at least 0); without `spec.completions` (a work
/// queue) the pods already active once one pod succeeded.
pub fn wanted_pods(job: &Job) -> i32 {
    let spec = job.spec.as_ref();
    let status = job.status.as_ref();
    let parallelism = spec.and_then(|s| s.parallelism).unwrap_or(1);
    let active = status.and_then(|s| s.active).unwrap_or(0);
    let succeeded = status.and_then(|s| s.succeeded).unwrap_or(0);
    match spec.and_then(|s| s.completions) {
        None if succeeded > 0 => active,
        None => parallelism,
        Some(completions) => (completions - succeeded).clamp(0, parallelism.max(0)),
    }
}

/// How many pods the Job wants ([`wanted_pods`]) but has neither active nor, when the Job controller replaces only
/// failed pods, still terminating; at least 0.
///
/// Active is `status.active` (which leaves out pods being deleted), at least `status.ready`: while the Job controller
/// waits out the back-off after a pod failure it writes `active: 0` though other pods still run (`manageJob` in
/// `pkg/controller/job/job_controller.go`, Kubernetes v1.35). Terminating pods (`status.terminating`) count when
/// `podReplacementPolicy` is `Failed` or a `podFailurePolicy` is set (the controller's `onlyReplaceFailedPods`: it
/// creates their replacements only once they are gone).
pub fn missing_pods(job: &Job) -> i32 {
    let status = job.status.as_ref();
    let spec = job.spec.as_ref();
    let active = status.and_then(|s| s.active).unwrap_or(0);
    let ready = status.and_then(|s| s.ready).unwrap_or(0);
    let waits_for_terminating = spec.is_some_and(|s| {
        s.pod_replacement_policy.as_deref() == Some("Failed") || s.pod_failure_policy.is_some()
    });
    let terminating = status
        .and_then(|s| s.terminating)
        .filter(|_| waits_for_terminating)
        .unwrap_or(0);
    (wanted_pods(job) - active.max(ready) - terminating).max(0)
}

/// Since when a `FailedCreate` Event speaks for the Job's current attempt: the latest of the Job's `status.startTime`,
/// the last transition of its `Suspended` condition (a suspend or a resume: the Job controller keeps `startTime`
/// across a suspension unless the alpha gate `MutableSchedulingDirectivesForSuspendedJobs` is on, and in the
/// reconcile that resumes the Job its status still shows the suspension) and the newest pod's creation; `None` when
/// none is known. An older refusal is about pods the Job no longer wants, or was followed by a pod that was created.
pub fn refusals_since(job: &Job, pods: &[Pod]) -> Option<Timestamp> {
    let status = job.status.as_ref();
    let started = status.and_then(|s| s.start_time.as_ref());
    let suspended_or_resumed = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Suspended"))
        .and_then(|c| c.last_transition_time.as_ref());
    pods.iter()
        .filter_map(|p| p.metadata.creation_timestamp.as_ref())
        .chain(started)
        .chain(suspended_or_resumed)
        .map(|t| t.0)
        .max()
}

/// `Ready` of a `Pending` run, by precedence: the Job cannot create pods (`Progressing`, `run stalled: the Job cannot
/// create pods: ...`), the scheduler cannot place a pod (`Unschedulable`, the scheduler's message), a container
/// cannot start (`Progressing`, `run stalled: pod ...`), else `Progressing`, `waiting for a ready pod`. A stalled run
/// otherwise waits for `activeDeadlineSeconds` (or forever) saying only that it waits.
pub(super) fn pending_ready(findings: PodFindings<'_>) -> DesiredCondition {
    let (reason, message) = match findings {
        PodFindings {
            refused: Some(refused),
            ..
        } => (
            Reason::Progressing,
            format!("{RUN_STALLED}the Job cannot create pods: {refused}"),
        ),
        PodFindings {
            unschedulable: Some(message),
            ..
        } => (Reason::Unschedulable, message.to_owned()),
        PodFindings {
            stalled: Some(stalled),
            ..
        } => (Reason::Progressing, format!("{RUN_STALLED}{stalled}")),
        _ => (Reason::Progressing, "waiting for a ready pod".to_owned()),
    };
    DesiredCondition::new(ConditionType::Ready, false, reason, message)
}

/// The refusal the run's current `Degraded=True, PodsRefused` shows (from `current`, the run's status conditions; the
/// API server's reason as [`pods_refused`] wrote it, without a fit warning [`super::super::with_fit_warning`] added),
/// kept while the Job still misses pods ([`missing_pods`]) and this reconcile read no newer refusal: the read failed,
/// or the refusal's Event was not updated since the newest pod (the event library lets a Job's repeated Warning
/// through at most once in 5 minutes after a burst of 25). Without it such a run's `Degraded` would flap, each time
/// with a new Warning Event. It goes once the Job has every pod it wants, or the run stops waiting for pods.
pub(super) fn kept_refusal<'a>(job: &Job, current: &'a [Condition]) -> Option<&'a str> {
    if missing_pods(job) == 0 {
        return None;
    }
    let shown = conditions::find(current, ConditionType::Degraded)
        .filter(|c| c.status == "True" && c.reason == Reason::PodsRefused.as_str())?;
    let (_, refused) = shown
        .message
        .strip_prefix(REFUSED_HEAD)?
        .split_once("pods: ")?;
    let fit_warning = format!("; {}: ", Reason::FitWithoutHeadroom);
    Some(
        refused
            .split_once(&fit_warning)
            .map_or(refused, |(refused, _)| refused),
    )
}

/// How a `PodsRefused` message starts ([`pods_refused`], read back by [`kept_refusal`]).
const REFUSED_HEAD: &str = "the Job cannot create ";

/// `Degraded=True, PodsRefused` while the Job controller cannot create some of the run's pods: the API server's
/// reason (`refused`) and how many of the pods the Job wants are missing ([`missing_pods`] of [`wanted_pods`]). A run
/// with some of its pods (phase `Running`) says it here only; its `Ready` stays True. A data-parallel run usually
/// waits for every worker, so a human must free or raise the quota.
pub(super) fn pods_refused(job: &Job, refused: &str) -> DesiredCondition {
    let (missing, wanted) = (missing_pods(job), wanted_pods(job));
    let message = if missing > 0 {
        format!("{REFUSED_HEAD}{missing} of its {wanted} pods: {refused}")
    } else {
        format!("{REFUSED_HEAD}pods: {refused}")
    };
    DesiredCondition::new(ConditionType::Degraded, true, Reason::PodsRefused, message)
}
