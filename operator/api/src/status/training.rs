//! TrainingRun status, computed (DESIGN.md section 3, TrainingRun `phase`): the render facts, a refusal and the live
//! Job in, the desired status and conditions out.
//!
//! The phase is derived from the Job's spec and status on every reconcile, never from the run's own leftover
//! conditions. The only thing taken from the previous status is the memory that the run already finished (or already
//! had a Job): the TTL controller may delete a finished Job, and the run must neither forget its outcome nor create
//! the Job again.

use k8s_openapi::api::batch::v1::{Job, JobCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

mod awaiting;

pub use awaiting::{
    PodFindings, awaits_pods, missing_pods, needs_pod_scan, refusals_since, wanted_pods,
};
use awaiting::{kept_refusal, pending_ready, pods_refused};

use super::Draft;
use crate::conditions::{self, ConditionStatus, ConditionType, DesiredCondition, Reason};
use crate::render::{RenderError, TrainingFacts};
use crate::schedule::ScheduleState;
use crate::{Intent, TrainingPhase, TrainingRun, TrainingRunStatus};

/// Reason of a run whose Job disappeared before the run was seen to finish (deleted by hand or by a TTL of 0).
pub const JOB_DELETED: &str = "JobDeleted";

/// What the status says about the run and its Job.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFacts {
    /// The phase.
    pub phase: TrainingPhase,
    /// The Job's reason when `Failed` (e.g. `DeadlineExceeded`, `BackoffLimitExceeded`).
    pub reason: Option<String>,
    /// Name of the Job, once one was created.
    pub job_name: Option<String>,
    /// When the Job started (Job `status.startTime`).
    pub start_time: Option<Time>,
    /// When the run finished: Job `status.completionTime`, else the time of its terminal condition.
    pub completion_time: Option<Time>,
    /// Pods counts from the Job's status (active, ready, succeeded, failed); 0 when absent.
    pub counts: Counts,
}

/// Pod counts of a Job's status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// `status.active`.
    pub active: i32,
    /// `status.ready` (pods with the Ready condition).
    pub ready: i32,
    /// `status.succeeded`.
    pub succeeded: i32,
    /// `status.failed`.
    pub failed: i32,
}

/// Whether `phase` is final: the run will not start pods again.
pub fn is_finished(phase: Option<TrainingPhase>) -> bool {
    matches!(
        phase,
        Some(TrainingPhase::Succeeded | TrainingPhase::Failed | TrainingPhase::Cancelled)
    )
}

/// Whether the controller may create the run's Job: never for a cancelled run, and never again once a Job was
/// created (its name is recorded in `status.jobName` from the live Job): a deleted Job of a finished run stays
/// deleted, and a new attempt is a new TrainingRun.
pub fn may_create_job(cancelled: bool, previous: Option<&TrainingRunStatus>) -> bool {
    !cancelled && previous.is_none_or(|s| s.job_name.is_none() && !is_finished(s.phase))
}

/// The terminal outcome the Job's conditions report, if any: `(phase, reason, when)`. `Complete` and
/// `SuccessCriteriaMet` mean success; `Failed` and `FailureTarget` (set as soon as the Job controller decided, before
/// the pods are gone) mean failure with the condition's reason.
pub fn job_outcome(job: &Job) -> Option<(TrainingPhase, Option<String>, Option<Time>)> {
    let conditions: &[JobCondition] = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let active = |type_: &str| {
        conditions
            .iter()
            .find(|c| c.type_ == type_ && c.status == "True")
    };
    if let Some(c) = active("Complete").or_else(|| active("SuccessCriteriaMet")) {
        return Some((
            TrainingPhase::Succeeded,
            None,
            c.last_transition_time.clone(),
        ));
    }
    if let Some(c) = active("Failed").or_else(|| active("FailureTarget")) {
        return Some((
            TrainingPhase::Failed,
            Some(c.reason.clone().unwrap_or_else(|| "Failed".to_owned())),
            c.last_transition_time.clone(),
        ));
    }
    None
}

/// Derives the run facts.
///
/// - With a Job: its outcome (Succeeded / Failed with reason) wins; otherwise `cancelled` gives `Cancelled`, a Job
///   with `spec.suspend = true` gives `Suspended`, `status.ready > 0` gives `Running`, anything else `Pending`.
/// - Without a Job: a run that already finished keeps its recorded outcome; a cancelled run is `Cancelled`; a run
///   whose Job was created but is gone before it was seen to finish is `Failed` with [`JOB_DELETED`]; otherwise
///   `Pending` (the Job is about to be created, or a dataset refusal prevents it).
pub fn derive(
    cancelled: bool,
    job: Option<&Job>,
    previous: Option<&TrainingRunStatus>,
) -> RunFacts {
    let Some(job) = job else {
        return without_job(cancelled, previous);
    };
    let status = job.status.as_ref();
    let counts = Counts {
        active: status.and_then(|s| s.active).unwrap_or(0),
        ready: status.and_then(|s| s.ready).unwrap_or(0),
        succeeded: status.and_then(|s| s.succeeded).unwrap_or(0),
        failed: status.and_then(|s| s.failed).unwrap_or(0),
    };
    let suspended = job.spec.as_ref().and_then(|s| s.suspend) == Some(true);
    let (phase, reason, finished_at) = match job_outcome(job) {
        Some(outcome) => outcome,
        None if cancelled => (TrainingPhase::Cancelled, None, None),
        None if suspended => (TrainingPhase::Suspended, None, None),
        None if counts.ready > 0 => (TrainingPhase::Running, None, None),
        None => (TrainingPhase::Pending, None, None),
    };
    // `SuccessCriteriaMet` / `FailureTarget` come before the Job's `completionTime` (set only once every pod is
    // gone, and never for a failure): until then the condition's time says when the run finished.
    let completion_time = status
        .and_then(|s| s.completion_time.clone())
        .or(finished_at);
    RunFacts {
        phase,
        reason,
        job_name: job.metadata.name.clone(),
        start_time: status.and_then(|s| s.start_time.clone()),
        completion_time,
        counts,
    }
}

fn without_job(cancelled: bool, previous: Option<&TrainingRunStatus>) -> RunFacts {
    let remembered = |phase: TrainingPhase, reason: Option<String>| {
        let p = previous.cloned().unwrap_or_default();
        RunFacts {
            phase,
            reason,
            job_name: p.job_name,
            start_time: p.start_time,
            completion_time: p.completion_time,
            counts: Counts {
                active: 0,
                ready: 0,
                succeeded: p.succeeded.unwrap_or(0),
                failed: p.failed.unwrap_or(0),
            },
        }
    };
    match previous.and_then(|s| s.phase) {
        Some(phase @ (TrainingPhase::Succeeded | TrainingPhase::Failed)) => {
            remembered(phase, previous.and_then(|s| s.reason.clone()))
        }
        _ if cancelled => remembered(TrainingPhase::Cancelled, None),
        _ if TrainingRunStatus::job_recorded(previous) => {
            remembered(TrainingPhase::Failed, Some(JOB_DELETED.to_owned()))
        }
        _ => RunFacts {
            phase: TrainingPhase::Pending,
            reason: None,
            job_name: None,
            start_time: None,
            completion_time: None,
            counts: Counts::default(),
        },
    }
}

/// The desired status of `run`.
///
/// `facts` are render's (always known, even when render refused), `refusal` is render's error, `job` the live Job,
/// `findings` what its pods say while the run [`awaits_pods`]: a `Pending` run's `Ready` names it (see
/// [`RunConditions`]), and a refusal to create pods also sets `Degraded=True, PodsRefused`, for a `Running` run too.
/// A refusal matters only while it blocks the creation of the Job (no Job yet, and one may still be created): then
/// `Ready=False` and `Degraded=True` carry its reason and message, and `DatasetsReady` says which Dataset refused.
/// Once a Job was created its mounts are fixed, so `DatasetsReady` keeps what it said then (a Dataset deleted after
/// the run started, or finished, is no news).
pub fn desired(
    run: &TrainingRun,
    facts: &TrainingFacts,
    refusal: Option<&RenderError>,
    job: Option<&Job>,
    findings: PodFindings<'_>,
) -> Draft<TrainingRunStatus> {
    let previous = run.status.as_ref();
    let run_facts = derive(facts.cancelled, job, previous);
    let job_created = job.is_some() || TrainingRunStatus::job_recorded(previous);
    let current = previous
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let kept = job
        .filter(|_| findings.refused.is_none())
        .and_then(|job| kept_refusal(job, current));
    let findings = PodFindings {
        refused: findings.refused.or(kept),
        ..findings
    };
    let mut list = RunConditions::of(
        run,
        facts,
        &run_facts,
        findings,
        datasets_ready(run, refusal, job_created, current),
    );
    let awaiting = matches!(
        run_facts.phase,
        TrainingPhase::Pending | TrainingPhase::Running
    );
    if let (Some(job), Some(refused), true) = (job, findings.refused, awaiting) {
        list.degraded = pods_refused(job, refused);
    }
    if let Some(refusal) =
        refusal.filter(|_| job.is_none() && may_create_job(facts.cancelled, previous))
    {
        let message = refusal.condition_message();
        list.ready = DesiredCondition::new(
            ConditionType::Ready,
            false,
            refusal.reason(),
            message.clone(),
        );
        list.degraded =
            DesiredCondition::new(ConditionType::Degraded, true, refusal.reason(), message);
    }
    let mut conditions = list.into_vec();
    super::with_fit_warning(&mut conditions, facts.budget.as_ref());
    Draft {
        status: facts_status(run, facts, &run_facts),
        conditions,
    }
}

/// `Suspended`: False for a finished run (nothing suspends it any more), else `Cancelled`, else what the (effective)
/// intent says ([`super::inference::suspended`]).
fn suspended(run: &TrainingRun, facts: &TrainingFacts, phase: TrainingPhase) -> DesiredCondition {
    if matches!(phase, TrainingPhase::Succeeded | TrainingPhase::Failed) {
        DesiredCondition::new(
            ConditionType::Suspended,
            false,
            Reason::AsExpected,
            format!(
                "phase {phase:?}: the run finished, so intent, cancel and expiresAt no longer act on it"
            ),
        )
    } else if facts.cancelled {
        DesiredCondition::new(
            ConditionType::Suspended,
            true,
            Reason::Cancelled,
            "spec.cancel is true",
        )
    } else {
        // Not cancelled: `facts.suspend` is exactly the (effective) intent `suspended`, as for a service.
        super::inference::suspended(run.spec.intent.unwrap_or_default())
    }
}

/// The schedule's part of a run's status: once `spec.schedule.expiresAt` has passed, `Suspended` says `Expired`
/// ([`ScheduleState::annotate`]), and before it `status.nextTransition` announces it; neither for a finished run
/// (nothing suspends it any more), and no announcement for a cancelled one. `intent` is the spec's own.
pub fn with_schedule(
    draft: &mut Draft<TrainingRunStatus>,
    schedule: &ScheduleState,
    intent: Option<Intent>,
    cancelled: bool,
) {
    let finished = is_finished(draft.status.phase);
    if !finished {
        schedule.annotate(intent, &mut draft.conditions);
    }
    draft.status.next_transition = schedule
        .next_transition(intent)
        .filter(|_| !cancelled && !finished);
}

/// The status fields other than conditions.
fn facts_status(
    run: &TrainingRun,
    facts: &TrainingFacts,
    run_facts: &RunFacts,
) -> TrainingRunStatus {
    TrainingRunStatus {
        conditions: None,
        observed_generation: run.metadata.generation,
        phase: Some(run_facts.phase),
        reason: run_facts.reason.clone(),
        job_name: run_facts.job_name.clone(),
        start_time: run_facts.start_time.clone(),
        completion_time: run_facts.completion_time.clone(),
        active: Some(run_facts.counts.active),
        ready: Some(run_facts.counts.ready),
        succeeded: Some(run_facts.counts.succeeded),
        failed: Some(run_facts.counts.failed),
        capacity_class: facts.capacity_class().map(str::to_owned),
        per_gpu_memory_gib: facts.per_gpu_memory_gib(),
        kv_cache: crate::KvCacheStatus::of(facts.budget.as_ref()),
        next_transition: None,
    }
}

/// The conditions of a run, by type (so an override names the condition it replaces).
#[derive(Clone, Debug, PartialEq)]
struct RunConditions {
    ready: DesiredCondition,
    suspended: DesiredCondition,
    datasets: DesiredCondition,
    degraded: DesiredCondition,
}

/// What a stopped run's Job is: suspended and kept, or never created (a review's finding: a run cancelled before it
/// had a Job said its Job was suspended).
fn job_state(run_facts: &RunFacts) -> &'static str {
    if run_facts.job_name.is_some() {
        "the Job is suspended"
    } else {
        "no Job was created"
    }
}

impl RunConditions {
    /// `Ready`, `Suspended`, `DatasetsReady`, `Degraded` for a run whose phase is known; a `Pending` run's `Ready`
    /// says why its pods do not run ([`pending_ready`]).
    fn of(
        run: &TrainingRun,
        facts: &TrainingFacts,
        run_facts: &RunFacts,
        findings: PodFindings<'_>,
        datasets: DesiredCondition,
    ) -> RunConditions {
        let phase = run_facts.phase;
        let job_reason = run_facts.reason.as_deref().unwrap_or("Failed");
        let ready = match phase {
            TrainingPhase::Running | TrainingPhase::Succeeded => DesiredCondition::new(
                ConditionType::Ready,
                true,
                Reason::AsExpected,
                format!("phase {phase:?}"),
            ),
            TrainingPhase::Pending => pending_ready(findings),
            TrainingPhase::Suspended => DesiredCondition::new(
                ConditionType::Ready,
                false,
                Reason::Suspended,
                format!("phase Suspended: {}", job_state(run_facts)),
            ),
            TrainingPhase::Cancelled => DesiredCondition::new(
                ConditionType::Ready,
                false,
                Reason::Cancelled,
                format!("phase Cancelled: {}", job_state(run_facts)),
            ),
            TrainingPhase::Failed => DesiredCondition::new(
                ConditionType::Ready,
                false,
                Reason::Failed,
                format!("the Job failed: {job_reason}"),
            ),
        };
        let suspended = suspended(run, facts, phase);
        let stall = super::stall_problem(&ready);
        let degraded = if phase == TrainingPhase::Failed {
            DesiredCondition::new(
                ConditionType::Degraded,
                true,
                Reason::Failed,
                format!("the run failed ({job_reason}): create a new TrainingRun to try again"),
            )
        } else if let Some(stall) = stall {
            DesiredCondition::new(ConditionType::Degraded, true, Reason::NeedsAttention, stall)
        } else {
            DesiredCondition::new(ConditionType::Degraded, false, Reason::AsExpected, "")
        };
        RunConditions {
            ready,
            suspended,
            datasets,
            degraded,
        }
    }

    fn into_vec(self) -> Vec<DesiredCondition> {
        vec![self.ready, self.suspended, self.datasets, self.degraded]
    }
}

/// `DatasetsReady`: the dataset check of render until a Job is created. A Job is created only when every Dataset
/// passed the check, so once it exists the condition says they did: the one written then is kept, and a refusal shown
/// before it (the Dataset fixed since, in the reconcile that created the Job) gives way to the passed check (a hunt's
/// finding: the refusal was kept for good). A Dataset deleted or changed after that is no news (see [`desired`]).
fn datasets_ready(
    run: &TrainingRun,
    refusal: Option<&RenderError>,
    job_created: bool,
    current: &[Condition],
) -> DesiredCondition {
    let previous = conditions::find(current, ConditionType::DatasetsReady)
        .and_then(DesiredCondition::from_observed);
    if job_created && let Some(passed) = previous.filter(|p| p.status == ConditionStatus::True) {
        return passed;
    }
    match refusal.filter(|_| !job_created) {
        Some(RenderError::Datasets(refusal)) => DesiredCondition::new(
            ConditionType::DatasetsReady,
            false,
            refusal.reason,
            refusal.message.clone(),
        ),
        _ => {
            let count = run.spec.datasets.iter().flatten().count();
            DesiredCondition::new(
                ConditionType::DatasetsReady,
                true,
                Reason::AsExpected,
                format!("{count} dataset(s) resolved and allowed"),
            )
        }
    }
}

#[cfg(test)]
mod tests;
