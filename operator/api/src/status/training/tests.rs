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
