use super::*;
use crate::schedule::Scheduled;
use k8s_openapi::api::batch::v1::{JobSpec, JobStatus};
use k8s_openapi::jiff::Timestamp;
use std::str::FromStr;

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

/// A Job whose 2 pods succeeded: `Complete` at second 7.
fn completed() -> Job {
    job(
        false,
        JobStatus {
            succeeded: Some(2),
            conditions: Some(vec![condition("Complete", "True", "CompletionsReached", 7)]),
            ..Default::default()
        },
    )
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
fn pods_are_scanned_only_while_the_run_awaits_them() {
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
    // In the reconcile that resumes a Job its status still shows the suspension (and `startTime` is kept): a
    // refusal from before the suspension is not news.
    let resumed = job(
        false,
        JobStatus {
            start_time: Some(at(10)),
            conditions: Some(vec![condition("Suspended", "True", "JobSuspended", 30)]),
            ..Default::default()
        },
    );
    assert_eq!(refusals_since(&resumed, &[pod(20)]), Some(at(30).0));
}

/// A Job of `parallelism` pods (and `completions`, when given) with `status`.
fn parallel_job(parallelism: i32, completions: Option<i32>, status: JobStatus) -> Job {
    let mut job = job(false, status);
    let spec = job.spec.get_or_insert_default();
    spec.parallelism = Some(parallelism);
    spec.completions = completions;
    job
}

fn counts(active: i32, ready: i32, succeeded: i32) -> JobStatus {
    JobStatus {
        active: Some(active),
        ready: Some(ready),
        succeeded: Some(succeeded),
        ..Default::default()
    }
}

/// The pods a Job wants follow the Job controller's `wantActive`: parallelism, capped by the completions left; a
/// work queue (no completions) wants no new pod once one succeeded.
#[test]
fn wanted_and_missing_pods_follow_the_job_controller() {
    let queue = parallel_job(4, None, counts(1, 1, 0));
    assert_eq!((wanted_pods(&queue), missing_pods(&queue)), (4, 3));
    let draining = parallel_job(4, None, counts(2, 2, 1));
    assert_eq!((wanted_pods(&draining), missing_pods(&draining)), (2, 0));
    let tail = parallel_job(4, Some(6), counts(1, 1, 4));
    assert_eq!((wanted_pods(&tail), missing_pods(&tail)), (2, 1));
    let over = parallel_job(4, Some(2), counts(0, 0, 3));
    assert_eq!((wanted_pods(&over), missing_pods(&over)), (0, 0));
    let defaults = job(false, JobStatus::default());
    assert_eq!((wanted_pods(&defaults), missing_pods(&defaults)), (1, 1));
    // Under `podReplacementPolicy: Failed` a terminating pod is replaced only once it is gone.
    let mut replacing = parallel_job(
        2,
        Some(2),
        JobStatus {
            terminating: Some(1),
            ..counts(1, 1, 0)
        },
    );
    assert_eq!(missing_pods(&replacing), 1);
    replacing.spec.as_mut().unwrap().pod_replacement_policy = Some("Failed".into());
    assert_eq!(missing_pods(&replacing), 0);
    // A podFailurePolicy (the operator always renders one) makes the controller wait for terminating pods too.
    let mut with_policy = parallel_job(
        2,
        Some(2),
        JobStatus {
            terminating: Some(1),
            ..counts(1, 1, 0)
        },
    );
    with_policy.spec.as_mut().unwrap().pod_failure_policy = Some(Default::default());
    assert_eq!(missing_pods(&with_policy), 0);
    // During the back-off after a pod failure the Job controller writes `active: 0` while a ready pod runs.
    let backing_off = parallel_job(2, Some(2), counts(0, 1, 0));
    assert_eq!(missing_pods(&backing_off), 1);
}

/// A running run awaits pods (so it is scanned and requeued) only while its Job misses some.
#[test]
fn a_running_run_awaits_pods_only_while_some_are_missing() {
    let partial = parallel_job(2, Some(2), counts(1, 1, 0));
    assert!(awaits_pods(&partial, false));
    assert!(needs_pod_scan(&partial, false, false));
    assert!(!needs_pod_scan(&partial, false, true), "created now");
    assert!(!awaits_pods(&partial, true), "cancelled");
    let whole = parallel_job(2, Some(2), counts(2, 2, 0));
    assert!(!awaits_pods(&whole, false));
    assert!(!needs_pod_scan(&whole, false, false));
}

fn training_run() -> TrainingRun {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun",
        "metadata": {"name": "ft", "namespace": "ml", "uid": "u", "generation": 1},
        "spec": {"container": {"image": "i"}, "parallelism": 2, "completions": 2}}))
    .unwrap()
}

/// `(status, reason, message)` of condition `type_` in the desired status of `run` with `job` and `findings`.
fn said(
    run: &TrainingRun,
    job: &Job,
    findings: PodFindings<'_>,
    type_: ConditionType,
) -> (bool, Reason, String) {
    let facts = crate::render::render_training(run, &[], &Default::default()).facts;
    let draft = desired(run, &facts, None, Some(job), findings);
    let c = draft
        .conditions
        .into_iter()
        .find(|c| c.type_ == type_)
        .unwrap();
    (
        c.status == crate::conditions::ConditionStatus::True,
        c.reason,
        c.message,
    )
}

/// A refusal to create pods is `Degraded=True, PodsRefused` with how many are missing, for a run with some of its
/// pods (its `Ready` stays True) as for one with none (its `Ready` says the run stalled); not for a run that no
/// longer wants pods.
#[test]
fn refused_pods_are_degraded_with_how_many_are_missing() {
    let run = training_run();
    let quota = "exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1";
    let refused = PodFindings {
        refused: Some(quota),
        ..Default::default()
    };
    let running = parallel_job(2, Some(2), counts(1, 1, 0));
    assert_eq!(
        said(&run, &running, refused, ConditionType::Degraded),
        (
            true,
            Reason::PodsRefused,
            format!("the Job cannot create 1 of its 2 pods: {quota}")
        )
    );
    assert_eq!(
        said(&run, &running, refused, ConditionType::Ready),
        (true, Reason::AsExpected, "phase Running".to_owned())
    );
    assert_eq!(
        said(
            &run,
            &running,
            PodFindings::default(),
            ConditionType::Degraded
        ),
        (false, Reason::AsExpected, String::new())
    );
    let none = parallel_job(2, Some(2), counts(0, 0, 0));
    assert_eq!(
        said(&run, &none, refused, ConditionType::Degraded).2,
        format!("the Job cannot create 2 of its 2 pods: {quota}")
    );
    assert_eq!(
        said(&run, &none, refused, ConditionType::Ready),
        (
            false,
            Reason::Progressing,
            format!("run stalled: the Job cannot create pods: {quota}")
        )
    );
    // A refusal read against a Job whose status already counts every pod (its update raced the read) names no count.
    let whole = parallel_job(2, Some(2), counts(2, 2, 0));
    assert_eq!(
        said(&run, &whole, refused, ConditionType::Degraded).2,
        format!("the Job cannot create pods: {quota}")
    );
    let suspended = job(true, counts(0, 0, 0));
    assert_eq!(
        said(&run, &suspended, refused, ConditionType::Degraded).1,
        Reason::AsExpected
    );
}

/// A `Pending` run whose container cannot start needs a human: `Degraded=True, NeedsAttention` quotes `Ready`'s
/// stall; plain waiting is not degraded.
#[test]
fn a_stalled_run_is_degraded() {
    let run = training_run();
    let stalled = "pod ft-1-x: container main: ImagePullBackOff";
    let findings = PodFindings {
        stalled: Some(stalled),
        ..Default::default()
    };
    let pending = job(false, counts(0, 0, 0));
    assert_eq!(
        said(&run, &pending, findings, ConditionType::Degraded),
        (
            true,
            Reason::NeedsAttention,
            format!("Ready: run stalled: {stalled}")
        )
    );
    assert_eq!(
        said(
            &run,
            &pending,
            PodFindings::default(),
            ConditionType::Degraded
        )
        .1,
        Reason::AsExpected
    );
}

/// `run` with the status [`desired`] gives it for `job` and `findings`, as the controller writes it.
fn written(mut run: TrainingRun, job: &Job, findings: PodFindings<'_>) -> TrainingRun {
    let facts = crate::render::render_training(&run, &[], &Default::default()).facts;
    let draft = desired(&run, &facts, None, Some(job), findings);
    run.status = Some(TrainingRunStatus {
        conditions: Some(crate::conditions::merge(
            &[],
            &draft.conditions,
            Some(1),
            &at(40),
        )),
        ..draft.status
    });
    run
}

/// A refusal shown is kept while the Job still misses pods and no newer refusal was read (a failed read, an Event the
/// event library held back), so `Degraded` does not flap, and reads the same reconcile after reconcile (a fit
/// warning is not added twice); it goes once the Job has its pods.
#[test]
fn a_refusal_is_kept_while_pods_are_missing() {
    let quota = "exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1";
    let refused = PodFindings {
        refused: Some(quota),
        ..Default::default()
    };
    let running = parallel_job(2, Some(2), counts(1, 1, 0));
    let run = written(training_run(), &running, refused);
    assert_eq!(
        said(
            &run,
            &running,
            PodFindings::default(),
            ConditionType::Degraded
        ),
        (
            true,
            Reason::PodsRefused,
            format!("the Job cannot create 1 of its 2 pods: {quota}")
        )
    );
    let whole = parallel_job(2, Some(2), counts(2, 2, 0));
    assert_eq!(
        said(
            &run,
            &whole,
            PodFindings::default(),
            ConditionType::Degraded
        )
        .1,
        Reason::AsExpected
    );
    // A Pending run keeps saying it stalled, and a fit warning stays said once.
    let mut tight = training_run();
    tight.spec.gpu = serde_json::from_value(serde_json::json!({"count": 1, "fit": {"modules": [
        {"name": "w", "weightsGiB": 9, "placement": "sharded"}], "runtimeGiB": 0, "marginPercent": 0}}))
    .unwrap();
    let none = parallel_job(2, Some(2), counts(0, 0, 0));
    let once = written(tight, &none, refused);
    let first = said(&once, &none, refused, ConditionType::Degraded);
    assert!(first.2.contains("; FitWithoutHeadroom: "), "{first:?}");
    let twice = written(once, &none, PodFindings::default());
    assert_eq!(
        said(
            &twice,
            &none,
            PodFindings::default(),
            ConditionType::Degraded
        ),
        first
    );
    assert_eq!(
        said(&twice, &none, PodFindings::default(), ConditionType::Ready).2,
        format!("run stalled: the Job cannot create pods: {quota}")
    );
}

/// A hunt's finding: a run refused for its Datasets kept `DatasetsReady=False` for good after the Dataset was fixed,
/// because the reconcile that created the Job already counted as "Job created" and kept the refusal. A Job is created
/// only when every Dataset passed, so once it exists the condition says so.
#[test]
fn a_dataset_refusal_gives_way_once_the_job_is_created() {
    let mut run = training_run();
    run.status = Some(TrainingRunStatus {
        conditions: Some(crate::conditions::merge(
            &[],
            &[DesiredCondition::new(
                ConditionType::DatasetsReady,
                false,
                Reason::AccessDenied,
                "ServiceAccount \"default\" is not in allowedServiceAccounts of Dataset corpus",
            )],
            Some(1),
            &at(10),
        )),
        ..Default::default()
    });
    let created = parallel_job(2, Some(2), counts(0, 0, 0));
    let (ready, reason, _) = said(
        &run,
        &created,
        PodFindings::default(),
        ConditionType::DatasetsReady,
    );
    assert!(ready, "the refusal is over once the Job exists");
    assert_eq!(reason, Reason::AsExpected);
    // Without a Job the refusal stands (render refuses again; here the status alone says nothing new).
    let facts = crate::render::render_training(&run, &[], &Default::default()).facts;
    let refusal = RenderError::Datasets(crate::render::DatasetRefusal {
        reason: Reason::AccessDenied,
        message: "not allowed".into(),
    });
    let draft = desired(&run, &facts, Some(&refusal), None, PodFindings::default());
    let datasets = draft
        .conditions
        .iter()
        .find(|c| c.type_ == ConditionType::DatasetsReady)
        .unwrap();
    assert_eq!(datasets.reason, Reason::AccessDenied);
    // A Dataset deleted after the Job was created is no news: the passed check is kept.
    let started = written(run, &created, PodFindings::default());
    let draft = desired(
        &started,
        &facts,
        Some(&refusal),
        Some(&created),
        PodFindings::default(),
    );
    let datasets = draft
        .conditions
        .iter()
        .find(|c| c.type_ == ConditionType::DatasetsReady)
        .unwrap();
    assert_eq!(datasets.status, ConditionStatus::True);
}

/// A hunt's finding: `cancel: true` set on a run that already succeeded said `Suspended=True, Cancelled` beside
/// `phase: Succeeded`. A finished run is not suspended by anything: `Suspended` says it finished.
#[test]
fn a_finished_run_is_not_suspended_by_a_late_cancel() {
    let mut run = training_run();
    run.spec.cancel = Some(true);
    let done = completed();
    let (suspended, reason, message) = said(
        &run,
        &done,
        PodFindings::default(),
        ConditionType::Suspended,
    );
    assert!(!suspended, "{message}");
    assert_eq!(reason, Reason::AsExpected);
    assert!(message.contains("finished"), "{message}");
    // An unfinished run is cancelled as before.
    let running = job(true, counts(1, 1, 0));
    let (suspended, reason, _) = said(
        &run,
        &running,
        PodFindings::default(),
        ConditionType::Suspended,
    );
    assert!(suspended);
    assert_eq!(reason, Reason::Cancelled);
    // A review's finding: a run cancelled before it had a Job said its Job was suspended.
    let facts = crate::render::render_training(&run, &[], &Default::default()).facts;
    let draft = desired(&run, &facts, None, None, PodFindings::default());
    let ready = draft
        .conditions
        .iter()
        .find(|c| c.type_ == ConditionType::Ready)
        .unwrap();
    assert_eq!(
        (ready.reason, ready.message.as_str()),
        (Reason::Cancelled, "phase Cancelled: no Job was created")
    );
}

/// Nor does an expiry suspend a finished run, or announce itself on one; an unfinished run is suspended by it.
#[test]
fn a_finished_run_ignores_its_expiry() {
    let mut run = training_run();
    run.spec.schedule =
        serde_json::from_value(serde_json::json!({"expiresAt": "2026-12-03T00:00:00Z"})).unwrap();
    let facts = crate::render::render_training(&run, &[], &Default::default()).facts;
    let suspended_reason = |job: &Job, now: i64| {
        let mut draft = desired(&run, &facts, None, Some(job), PodFindings::default());
        let schedule = ScheduleState::of(run.expires_at(), Timestamp::from_second(now).unwrap());
        with_schedule(&mut draft, &schedule, None, false);
        let suspended = draft
            .conditions
            .iter()
            .find(|c| c.type_ == ConditionType::Suspended)
            .unwrap();
        (suspended.reason, draft.status.next_transition.is_some())
    };
    let expiry = Timestamp::from_str("2026-12-03T00:00:00Z")
        .unwrap()
        .as_second();
    let done = completed();
    assert_eq!(
        suspended_reason(&done, expiry + 60),
        (Reason::AsExpected, false)
    );
    assert_eq!(
        suspended_reason(&done, expiry - 60),
        (Reason::AsExpected, false)
    );
    let running = job(false, counts(1, 1, 0));
    assert_eq!(
        suspended_reason(&running, expiry + 60),
        (Reason::Expired, false)
    );
    assert_eq!(
        suspended_reason(&running, expiry - 60),
        (Reason::AsExpected, true)
    );
}

/// A review's finding: a run refused for a Dataset in another namespace said `Ready=False, CrossNamespace` with the
/// message `CrossNamespace: spec.datasets[0]...`, the reason twice wherever both are shown. The conditions' messages
/// carry the refusal's words alone; `render -f`, which has no reason beside it, keeps the reason in front.
#[test]
fn a_dataset_refusal_says_its_reason_once() {
    let mut run = training_run();
    run.spec.datasets = Some(vec![
        serde_json::from_value(serde_json::json!({
            "name": "corpus", "version": "v3", "mountPath": "/data", "namespace": "other"}))
        .unwrap(),
    ]);
    let rendered = crate::render::render_training(&run, &[], &Default::default());
    let refusal = rendered.children.unwrap_err();
    assert_eq!(refusal.reason(), Reason::CrossNamespace);
    assert!(
        refusal
            .to_string()
            .starts_with("CrossNamespace: spec.datasets[0].namespace: "),
        "{refusal}"
    );
    let draft = desired(
        &run,
        &rendered.facts,
        Some(&refusal),
        None,
        PodFindings::default(),
    );
    for type_ in [
        ConditionType::Ready,
        ConditionType::Degraded,
        ConditionType::DatasetsReady,
    ] {
        let c = draft.conditions.iter().find(|c| c.type_ == type_).unwrap();
        assert_eq!(c.reason, Reason::CrossNamespace, "{type_:?}");
        assert!(
            c.message.starts_with(
                "spec.datasets[0].namespace: Dataset other/corpus is in another namespace"
            ),
            "{type_:?}: {}",
            c.message
        );
    }
}
