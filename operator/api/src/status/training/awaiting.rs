//! What the pods of a run that awaits them say (DESIGN.md section 3, TrainingRun `phase`): which runs the controller
//! reads pods for, how many pods the Job wants and misses, and the `Ready` and `Degraded` conditions that say why
//! they do not run.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use super::derive;
use crate::TrainingPhase;
use crate::conditions::{ConditionType, DesiredCondition, Reason};

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

/// How many pods the Job wants ([`wanted_pods`]) but has neither active (`status.active`, which leaves out pods being
/// deleted) nor, under `podReplacementPolicy: Failed`, still terminating (`status.terminating`: the Job controller
/// waits for those before it creates their replacements); at least 0.
pub fn missing_pods(job: &Job) -> i32 {
    let status = job.status.as_ref();
    let active = status.and_then(|s| s.active).unwrap_or(0);
    let waits_for_terminating = job
        .spec
        .as_ref()
        .and_then(|s| s.pod_replacement_policy.as_deref())
        == Some("Failed");
    let terminating = status
        .and_then(|s| s.terminating)
        .filter(|_| waits_for_terminating)
        .unwrap_or(0);
    (wanted_pods(job) - active - terminating).max(0)
}

/// Since when a `FailedCreate` Event speaks for the Job's current attempt: the later of the Job's `status.startTime`
/// (cleared on suspend and set again on resume by the Job controller) and the newest pod's creation; `None` when
/// neither is known. An older refusal is about pods the Job no longer wants, or was followed by a pod that was
/// created.
pub fn refusals_since(job: &Job, pods: &[Pod]) -> Option<Timestamp> {
    let started = job.status.as_ref().and_then(|s| s.start_time.as_ref());
    pods.iter()
        .filter_map(|p| p.metadata.creation_timestamp.as_ref())
        .chain(started)
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
            format!("run stalled: the Job cannot create pods: {refused}"),
        ),
        PodFindings {
            unschedulable: Some(message),
            ..
        } => (Reason::Unschedulable, message.to_owned()),
        PodFindings {
            stalled: Some(stalled),
            ..
        } => (Reason::Progressing, format!("run stalled: {stalled}")),
        _ => (Reason::Progressing, "waiting for a ready pod".to_owned()),
    };
    DesiredCondition::new(ConditionType::Ready, false, reason, message)
}

/// `Degraded=True, PodsRefused` while the Job controller cannot create some of the run's pods: the API server's
/// reason (`refused`) and how many of the pods the Job wants are missing ([`missing_pods`] of [`wanted_pods`]). A run
/// with some of its pods (phase `Running`) says it here only; its `Ready` stays True. A data-parallel run usually
/// waits for every worker, so a human must free or raise the quota.
pub(super) fn pods_refused(job: &Job, refused: &str) -> DesiredCondition {
    let (missing, wanted) = (missing_pods(job), wanted_pods(job));
    let message = if missing > 0 {
        format!("the Job cannot create {missing} of its {wanted} pods: {refused}")
    } else {
        format!("the Job cannot create pods: {refused}")
    };
    DesiredCondition::new(ConditionType::Degraded, true, Reason::PodsRefused, message)
}
