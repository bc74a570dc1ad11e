//! Pure derivation of a TrainingRun's `phase` and run facts from its Job (DESIGN.md section 3, TrainingRun `phase`).
//!
//! The phase is derived from the Job's spec and status on every reconcile, never from the run's own leftover
//! conditions. The only thing taken from the previous status is the memory that the run already finished (or already
//! had a Job): the TTL controller may delete a finished Job, and the run must neither forget its outcome nor create
//! the Job again.

use k8s_openapi::api::batch::v1::{Job, JobCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::{TrainingPhase, TrainingRunStatus};

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
        _ if previous.is_some_and(|s| s.job_name.is_some()) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::batch::v1::{JobSpec, JobStatus};
    use k8s_openapi::jiff::Timestamp;

    fn at(seconds: i64) -> Time {
        Time(Timestamp::from_second(seconds).unwrap())
    }

    fn job(suspend: bool, status: JobStatus) -> Job {
        Job {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some("ft-1".into()),
                ..Default::default()
            },
            spec: Some(JobSpec {
                suspend: Some(suspend),
                ..Default::default()
            }),
            status: Some(status),
        }
    }

    fn condition(type_: &str, status: &str, reason: &str, when: i64) -> JobCondition {
        JobCondition {
            type_: type_.into(),
            status: status.into(),
            reason: Some(reason.into()),
            last_transition_time: Some(at(when)),
            ..Default::default()
        }
    }

    #[test]
    fn running_iff_a_pod_is_ready() {
        let pending = job(
            false,
            JobStatus {
                active: Some(1),
                ready: Some(0),
                ..Default::default()
            },
        );
        assert_eq!(
            derive(false, Some(&pending), None).phase,
            TrainingPhase::Pending
        );
        let running = job(
            false,
            JobStatus {
                active: Some(1),
                ready: Some(1),
                start_time: Some(at(5)),
                ..Default::default()
            },
        );
        let facts = derive(false, Some(&running), None);
        assert_eq!(facts.phase, TrainingPhase::Running);
        assert_eq!(facts.start_time, Some(at(5)));
        assert_eq!(facts.counts.ready, 1);
        assert_eq!(facts.job_name.as_deref(), Some("ft-1"));
    }

    #[test]
    fn suspended_comes_from_the_job_spec_not_from_leftover_conditions() {
        let suspended = job(
            true,
            JobStatus {
                conditions: Some(vec![condition("Suspended", "True", "JobSuspended", 1)]),
                ..Default::default()
            },
        );
        assert_eq!(
            derive(false, Some(&suspended), None).phase,
            TrainingPhase::Suspended
        );
        // Resumed: the Job says suspend=false and a pod is ready, whatever the run's status said before.
        let previous = TrainingRunStatus {
            phase: Some(TrainingPhase::Suspended),
            ..Default::default()
        };
        let resumed = job(
            false,
            JobStatus {
                ready: Some(1),
                conditions: Some(vec![condition("Suspended", "False", "JobResumed", 2)]),
                ..Default::default()
            },
        );
        assert_eq!(
            derive(false, Some(&resumed), Some(&previous)).phase,
            TrainingPhase::Running
        );
    }

    #[test]
    fn failures_carry_the_jobs_reason_and_time() {
        for reason in ["DeadlineExceeded", "BackoffLimitExceeded"] {
            let failed = job(
                false,
                JobStatus {
                    failed: Some(2),
                    conditions: Some(vec![condition("Failed", "True", reason, 9)]),
                    ..Default::default()
                },
            );
            let facts = derive(false, Some(&failed), None);
            assert_eq!(facts.phase, TrainingPhase::Failed);
            assert_eq!(facts.reason.as_deref(), Some(reason));
            assert_eq!(facts.completion_time, Some(at(9)));
            assert_eq!(facts.counts.failed, 2);
        }
        let target = job(
            false,
            JobStatus {
                conditions: Some(vec![condition(
                    "FailureTarget",
                    "True",
                    "DeadlineExceeded",
                    3,
                )]),
                ..Default::default()
            },
        );
        assert_eq!(
            derive(false, Some(&target), None).reason.as_deref(),
            Some("DeadlineExceeded")
        );
    }

    #[test]
    fn success_wins_over_cancel_and_suspend() {
        let done = job(
            true,
            JobStatus {
                succeeded: Some(2),
                completion_time: Some(at(7)),
                conditions: Some(vec![condition("Complete", "True", "CompletionsReached", 7)]),
                ..Default::default()
            },
        );
        let facts = derive(true, Some(&done), None);
        assert_eq!(facts.phase, TrainingPhase::Succeeded);
        assert_eq!(facts.completion_time, Some(at(7)));
        assert_eq!(facts.reason, None);
    }

    #[test]
    fn success_criteria_met_is_success_before_the_job_completes() {
        let met = job(
            false,
            JobStatus {
                succeeded: Some(1),
                conditions: Some(vec![condition(
                    "SuccessCriteriaMet",
                    "True",
                    "CompletionsReached",
                    6,
                )]),
                ..Default::default()
            },
        );
        let facts = derive(false, Some(&met), None);
        assert_eq!(facts.phase, TrainingPhase::Succeeded);
        assert_eq!(facts.completion_time, Some(at(6)));
    }

    #[test]
    fn cancelled_runs_are_cancelled_with_or_without_a_job() {
        let suspended = job(true, JobStatus::default());
        assert_eq!(
            derive(true, Some(&suspended), None).phase,
            TrainingPhase::Cancelled
        );
        assert_eq!(derive(true, None, None).phase, TrainingPhase::Cancelled);
    }

    #[test]
    fn a_finished_run_remembers_its_outcome_after_the_ttl_deleted_the_job() {
        let previous = TrainingRunStatus {
            phase: Some(TrainingPhase::Succeeded),
            job_name: Some("ft-1".into()),
            start_time: Some(at(1)),
            completion_time: Some(at(4)),
            succeeded: Some(1),
            ..Default::default()
        };
        let facts = derive(false, None, Some(&previous));
        assert_eq!(facts.phase, TrainingPhase::Succeeded);
        assert_eq!(facts.completion_time, Some(at(4)));
        assert_eq!(facts.counts.succeeded, 1);
        assert!(!may_create_job(false, Some(&previous)));
    }

    #[test]
    fn a_job_is_created_once() {
        assert!(may_create_job(false, None));
        assert!(may_create_job(false, Some(&TrainingRunStatus::default())));
        assert!(!may_create_job(true, None));
        let had_job = TrainingRunStatus {
            job_name: Some("ft-1".into()),
            phase: Some(TrainingPhase::Running),
            ..Default::default()
        };
        assert!(!may_create_job(false, Some(&had_job)));
        let facts = derive(false, None, Some(&had_job));
        assert_eq!(facts.phase, TrainingPhase::Failed);
        assert_eq!(facts.reason.as_deref(), Some(JOB_DELETED));
        assert_eq!(derive(false, None, None).phase, TrainingPhase::Pending);
    }
}
