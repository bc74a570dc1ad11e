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

#[test]
fn pods_are_scanned_only_while_the_run_is_pending() {
    let waiting = JobStatus {
        active: Some(1),
        ready: Some(0),
        ..Default::default()
    };
    let pending = job(false, waiting.clone());
    assert!(needs_pod_scan(&pending, false, false));
    assert!(
        !needs_pod_scan(&pending, false, true),
        "created now: no pod yet"
    );
    assert!(!needs_pod_scan(&pending, true, false), "cancelled");
    assert!(
        !needs_pod_scan(&job(true, waiting.clone()), false, false),
        "suspended"
    );
    let running = JobStatus {
        ready: Some(1),
        ..waiting.clone()
    };
    assert!(!needs_pod_scan(&job(false, running), false, false));
    let failed = JobStatus {
        conditions: Some(vec![condition("Failed", "True", "DeadlineExceeded", 9)]),
        ..waiting
    };
    assert!(!needs_pod_scan(&job(false, failed), false, false));
}

/// A `Pending` run's `Ready` names why its pods do not run: the Job's refusal first (no pod exists then), the
/// scheduler, a container that cannot start; nothing found is plain waiting.
#[test]
fn a_pending_run_says_why_its_pods_do_not_run() {
    let refused = "Error creating: pods \"ft-1-x\" is forbidden: exceeded quota: gpus";
    let unschedulable = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.";
    let stalled = "pod ft-1-x: container main: ImagePullBackOff";
    let all = PodFindings {
        refused: Some(refused),
        unschedulable: Some(unschedulable),
        stalled: Some(stalled),
    };
    let said = |findings| {
        let c = pending_ready(findings);
        assert_eq!(c.status, crate::conditions::ConditionStatus::False);
        (c.reason, c.message)
    };
    assert_eq!(
        said(all),
        (
            Reason::Progressing,
            format!("run stalled: the Job cannot create pods: {refused}")
        )
    );
    let placed = PodFindings {
        refused: None,
        ..all
    };
    assert_eq!(
        said(placed),
        (Reason::Unschedulable, unschedulable.to_owned())
    );
    let scheduled = PodFindings {
        unschedulable: None,
        ..placed
    };
    assert_eq!(
        said(scheduled),
        (Reason::Progressing, format!("run stalled: {stalled}"))
    );
    assert_eq!(
        said(PodFindings::default()),
        (Reason::Progressing, "waiting for a ready pod".to_owned())
    );
}

/// A refusal counts from the Job's (re)start or its newest pod, whichever is later.
#[test]
fn refusals_count_from_the_latest_start_or_pod() {
    let started = job(
        false,
        JobStatus {
            start_time: Some(at(10)),
            ..Default::default()
        },
    );
    let pod = |created: i64| k8s_openapi::api::core::v1::Pod {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            creation_timestamp: Some(at(created)),
            ..Default::default()
        },
        ..Default::default()
    };
    assert_eq!(refusals_since(&started, &[]), Some(at(10).0));
    assert_eq!(refusals_since(&started, &[pod(5), pod(20)]), Some(at(20).0));
    assert_eq!(refusals_since(&job(false, JobStatus::default()), &[]), None);
}
