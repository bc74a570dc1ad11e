use super::*;
use crate::{DatasetSpec, TrainingPhase, TrainingRunSpec, TrainingRunStatus};
use k8s_openapi::api::core::v1::PersistentVolumeClaimStatus;
use serde_json::json;

fn dataset(version: &str) -> Dataset {
    let mut d = Dataset::new(
        "corpus",
        serde_json::from_value::<DatasetSpec>(
            json!({"version": version, "source": {"uri": "s3://b/c"}, "allowedServiceAccounts": ["default"]}),
        )
        .unwrap(),
    );
    d.metadata.namespace = Some("ml".into());
    d
}

fn run(name: &str, ns: &str, refs: serde_json::Value, phase: Option<TrainingPhase>) -> TrainingRun {
    let spec: TrainingRunSpec = serde_json::from_value(json!({
        "container": {"image": "x"},
        "datasets": refs,
    }))
    .unwrap();
    let mut r = TrainingRun::new(name, spec);
    r.metadata.namespace = Some(ns.into());
    r.status = Some(TrainingRunStatus {
        phase,
        ..Default::default()
    });
    r
}

#[test]
fn only_unfinished_runs_of_the_same_namespace_and_version_use_a_dataset() {
    let d = dataset("3");
    let r = |v: &str| json!([{"name": "corpus", "version": v, "mountPath": "/d"}]);
    let running = run("a", "ml", r("3"), Some(TrainingPhase::Running));
    let pending = run("b", "ml", r("3"), None);
    let done = run("c", "ml", r("3"), Some(TrainingPhase::Succeeded));
    let cancelled = run("d", "ml", r("3"), Some(TrainingPhase::Cancelled));
    let other_version = run("e", "ml", r("4"), None);
    let other_ns = run("f", "team-b", r("3"), None);
    let all = [
        &running,
        &pending,
        &done,
        &cancelled,
        &other_version,
        &other_ns,
    ];
    assert_eq!(used_by(&all, &d), vec!["ml/a", "ml/b"]);
}

/// The run's status with the `DatasetsReady=False` condition of `refusal` (the Dataset check's own words).
fn refused(mut run: TrainingRun, refusal: &crate::render::DatasetRefusal) -> TrainingRun {
    run.status.get_or_insert_default().conditions = Some(crate::conditions::merge(
        &[],
        &[DesiredCondition::new(
            ConditionType::DatasetsReady,
            false,
            refusal.reason,
            refusal.message.clone(),
        )],
        Some(1),
        &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ),
    ));
    run
}

/// A hunt's findings and their review: a run this Dataset refused never starts, so it must not hold the Dataset's
/// deletion; a run not refused yet holds it (its Job may be on its way); a run whose Job exists holds it whatever the
/// allowlist says since; and a Dataset being deleted admits no new run, while one whose Job exists still renders.
#[test]
fn refused_runs_do_not_hold_a_deletion_and_a_deleted_dataset_admits_no_new_run() {
    let r = json!([{"name": "corpus", "version": "3", "mountPath": "/d"}]);
    let mut stranger = run("s", "ml", r.clone(), None);
    stranger.spec.service_account_name = Some("stranger".into());
    let mut d = dataset("3");
    assert!(
        uses(&stranger, &d),
        "not refused yet: its reconcile may be creating the Job"
    );
    let denied = crate::render::check_datasets(&stranger, std::slice::from_ref(&d)).unwrap_err();
    assert_eq!(denied.reason, Reason::AccessDenied);
    let stranger = refused(stranger, &denied);
    assert!(
        !uses(&stranger, &d),
        "refused by its allowlist: it never starts"
    );
    let mut started = refused(
        run("a", "ml", r.clone(), Some(TrainingPhase::Running)),
        &denied,
    );
    started.status.as_mut().unwrap().job_name = Some("a".into());
    d.spec.allowed_service_accounts = Some(vec!["someone-else".into()]);
    assert!(uses(&started, &d), "its Job's mounts are fixed");
    let pending = run("p", "ml", r, None);
    d.spec.allowed_service_accounts = Some(vec!["default".into()]);
    d.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
    ));
    assert_eq!(
        used_by(&[&pending, &started, &stranger], &d),
        vec!["ml/a", "ml/p"]
    );
    let deleting = crate::render::check_datasets(&pending, std::slice::from_ref(&d)).unwrap_err();
    assert_eq!(deleting.reason, Reason::DatasetNotFound);
    assert!(
        deleting.message.contains("is being deleted"),
        "{}",
        deleting.message
    );
    assert!(
        !uses(&refused(pending, &deleting), &d),
        "refused for this Dataset's deletion: it never starts"
    );
    started.status.as_mut().unwrap().conditions = None;
    assert!(
        crate::render::check_datasets(&started, std::slice::from_ref(&d)).is_ok(),
        "a run whose Job exists keeps rendering while the deletion waits for it"
    );
}

/// A review's finding: a run refused because another of its Datasets was missing let go of this one, which a delete
/// then removed at once, while creating the missing Dataset let the run create its Job: the refusal of another
/// Dataset holds this one.
#[test]
fn a_run_refused_by_another_dataset_holds_this_one() {
    let d = dataset("3");
    let refs = json!([{"name": "missing", "version": "1", "mountPath": "/m"},
        {"name": "corpus", "version": "3", "mountPath": "/d"}]);
    let pending = run("p", "ml", refs, None);
    let not_found = crate::render::check_datasets(&pending, std::slice::from_ref(&d)).unwrap_err();
    assert_eq!(not_found.reason, Reason::DatasetNotFound);
    assert!(uses(&refused(pending, &not_found), &d));
}

#[test]
fn finalizer_is_never_added_while_deleting() {
    assert_eq!(finalizer_change(false, false, true), FinalizerChange::Add);
    assert_eq!(finalizer_change(false, true, true), FinalizerChange::Keep);
    assert_eq!(finalizer_change(true, true, true), FinalizerChange::Keep);
    assert_eq!(finalizer_change(true, true, false), FinalizerChange::Remove);
    assert_eq!(
        finalizer_change(true, false, false),
        FinalizerChange::Remove
    );
    assert_eq!(finalizer_change(false, false, false), FinalizerChange::Keep);
}

#[test]
fn pvc_bound_reasons() {
    assert_eq!(pvc_bound("c", None).reason, Reason::ClaimNotFound);
    let claim = |phase: &str| PersistentVolumeClaim {
        status: Some(PersistentVolumeClaimStatus {
            phase: Some(phase.into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        pvc_bound("c", Some(&claim("Pending"))).reason,
        Reason::ClaimPending
    );
    // A review's finding: a Lost claim (its volume gone) was reported as Pending, as if it only had to wait.
    let lost = pvc_bound("c", Some(&claim("Lost")));
    assert_eq!(lost.reason, Reason::ClaimLost);
    assert!(
        lost.message.contains("register a new Dataset"),
        "{}",
        lost.message
    );
    assert_eq!(ready(Some(&lost), false, &[]).reason, Reason::ClaimLost);
    let bound = pvc_bound("c", Some(&claim("Bound")));
    assert_eq!(
        (bound.status, bound.reason),
        (ConditionStatus::True, Reason::Bound)
    );
    assert_eq!(
        ready(Some(&bound), false, &[]).status,
        ConditionStatus::True
    );
    let pending = pvc_bound("c", Some(&claim("Pending")));
    assert_eq!(
        ready(Some(&pending), false, &[]).reason,
        Reason::ClaimPending
    );
    assert_eq!(ready(None, true, &["ml/a".into()]).reason, Reason::InUse);
    assert_eq!(ready(None, false, &[]).status, ConditionStatus::True);
}
