//! The condition vocabulary is closed and complete: `docs/CONDITIONS.md` lists exactly the reasons of
//! `model_fleet_api::conditions::Reason`, and the pure status and render code really emits every one of them (a
//! reason declared in the table but never emitted is how a case goes unhandled).

use std::collections::BTreeSet;
use std::path::PathBuf;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus};
use k8s_openapi::api::batch::v1::{Job, JobCondition, JobSpec, JobStatus};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PersistentVolumeClaimStatus};
use model_fleet_api::conditions::{self, ConditionType, DesiredCondition, Reason};
use model_fleet_api::render::{self, RenderConfig, check_datasets};
use model_fleet_api::schedule::{Scheduled, idle};
use model_fleet_api::status::{dataset, inference, training};
use model_fleet_api::{Dataset, InferenceService, Intent, TrainingRun};
use serde_json::json;

fn doc_reasons() -> BTreeSet<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/CONDITIONS.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let table = text.split("## Reasons").nth(1).expect("a Reasons section");
    table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_docs_table_lists_exactly_the_reasons_of_the_code() {
    let code: BTreeSet<String> = Reason::ALL.iter().map(|r| r.as_str().to_owned()).collect();
    assert_eq!(
        doc_reasons(),
        code,
        "docs/CONDITIONS.md and conditions::Reason differ"
    );
}

fn isvc(spec: serde_json::Value) -> InferenceService {
    serde_json::from_value(
        json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
        "metadata": {"name": "m", "namespace": "ml", "uid": "u", "generation": 1}, "spec": spec}),
    )
    .unwrap()
}

fn run(spec: serde_json::Value) -> TrainingRun {
    serde_json::from_value(
        json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun",
        "metadata": {"name": "r", "namespace": "ml", "uid": "u", "generation": 1}, "spec": spec}),
    )
    .unwrap()
}

fn dataset_object(allowed: &[&str]) -> Dataset {
    serde_json::from_value(json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "Dataset",
        "metadata": {"name": "corpus", "namespace": "ml"},
        "spec": {"version": "3", "source": {"uri": "s3://b/c"}, "allowedServiceAccounts": allowed}}))
    .unwrap()
}

fn deployment(desired: i32, ready: bool) -> Deployment {
    let n = if ready { desired } else { 0 };
    let mut d = Deployment {
        spec: Some(DeploymentSpec {
            replicas: Some(desired),
            ..Default::default()
        }),
        status: Some(DeploymentStatus {
            observed_generation: Some(1),
            updated_replicas: Some(n),
            available_replicas: Some(n),
            replicas: Some(desired),
            ..Default::default()
        }),
        ..Default::default()
    };
    d.metadata.generation = Some(1);
    d
}

fn inference_reasons() -> Vec<DesiredCondition> {
    let rolled = deployment(1, true);
    let rolling = deployment(1, false);
    let zero = deployment(0, true);
    let observed = |deployment, unschedulable, missing: Vec<&'static str>| inference::Observed {
        deployment,
        unschedulable,
        missing,
        route: inference::RouteState::NotRequested,
        scaling: inference::ScalingState::Fixed(1),
        may_scale_to_zero: true,
    };
    let mut out = vec![
        inference::ready(Intent::Automatic, &observed(Some(&rolled), None, vec![])),
        inference::ready(Intent::Automatic, &observed(None, None, vec![])),
        inference::ready(Intent::Suspended, &observed(None, None, vec![])),
        inference::ready(Intent::Automatic, &observed(Some(&zero), None, vec![])),
        inference::ready(
            Intent::Automatic,
            &observed(Some(&rolling), Some("0/4 nodes"), vec![]),
        ),
        inference::ready(Intent::Automatic, &observed(None, None, vec!["KEDA"])),
        inference::progressing(None),
        inference::progressing(Some(&rolled)),
        inference::suspended(Intent::Suspended),
    ];
    let parent = ("gw", "shared");
    let accepted = |status: &str, reason: &str| {
        json!({"parents": [{"parentRef": {"namespace": "gw", "name": "shared"},
            "conditions": [{"type": "Accepted", "status": status, "reason": reason, "observedGeneration": 1}]}]})
    };
    let (yes, hostname) = (
        accepted("True", "Accepted"),
        accepted("False", "HostnameConflict"),
    );
    for route in [
        inference::RouteState::NotRequested,
        inference::RouteState::CrdMissing,
        inference::RouteState::NoGateway,
        inference::RouteState::Applied {
            status: None,
            generation: Some(1),
            parent,
        },
        inference::RouteState::Applied {
            status: Some(&yes),
            generation: Some(1),
            parent,
        },
        inference::RouteState::Applied {
            status: Some(&hostname),
            generation: Some(1),
            parent,
        },
    ] {
        out.push(inference::route_ready(&route));
    }
    let keda_failed = json!({"conditions": [{"type": "Ready", "status": "False", "reason": "X"}]});
    let keda_paused = json!({"conditions": [{"type": "Paused", "status": "True", "reason": "P"}]});
    let applied = |status, unreachable: bool| inference::ScalingState::Applied {
        status,
        unreachable_from_zero: unreachable.then(|| "no trigger can wake it".to_string()),
        paused_by_intent: false,
    };
    for scaling in [
        inference::ScalingState::Fixed(1),
        inference::ScalingState::KedaMissing,
        applied(None, true),
        applied(Some(&keda_failed), false),
        applied(Some(&keda_paused), false),
    ] {
        out.push(inference::scaling_ready(&scaling));
    }
    out.push(inference::degraded(&out.clone()));
    out.extend(idle_reasons());
    out
}

/// `Idle`: a service idle past `suspendAfterIdleSeconds` (schedule::idle decides and annotates).
fn idle_reasons() -> Vec<DesiredCondition> {
    let mut idle = isvc(json!({"model": {"name": "m"}, "container": {"image": "i"},
        "scaling": {"triggers": [{"type": "kafka", "metadata": {"topic": "t"}}]},
        "schedule": {"suspendAfterIdleSeconds": 60}}));
    let now: k8s_openapi::jiff::Timestamp = "2026-06-01T00:10:00Z".parse().unwrap();
    let quiet = idle::Activity {
        active: false,
        last_active: Some("2026-06-01T00:00:00Z".parse().unwrap()),
        created: None,
    };
    idle.status = Some(Default::default());
    let mut decided = idle::evaluate(&idle, Some(quiet), now);
    assert_eq!(decided.change, None, "the first look only starts the count");
    idle.status.as_mut().unwrap().idle = decided.status.clone();
    decided = idle::evaluate(&idle, Some(quiet), "2026-06-01T00:11:00Z".parse().unwrap());
    assert_eq!(decided.change, Some(idle::IdleChange::Suspended));
    let mut conditions = vec![inference::suspended(Intent::Suspended)];
    idle::annotate(&idle, &decided, None, &mut conditions);
    conditions
}

fn job(suspend: bool, condition: Option<&str>) -> Job {
    Job {
        spec: Some(JobSpec {
            suspend: Some(suspend),
            ..Default::default()
        }),
        status: Some(JobStatus {
            conditions: condition.map(|type_| {
                vec![JobCondition {
                    type_: type_.into(),
                    status: "True".into(),
                    reason: Some("BackoffLimitExceeded".into()),
                    ..Default::default()
                }]
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn training_reasons() -> Vec<DesiredCondition> {
    let config = RenderConfig::default();
    let mut out = Vec::new();
    let mut desired = |r: &TrainingRun, datasets: &[Dataset], j: Option<&Job>| {
        let rendered = render::render_training(r, datasets, &config);
        out.extend(
            training::desired(r, &rendered.facts, rendered.children.as_ref().err(), j).conditions,
        );
    };
    let plain = run(json!({"container": {"image": "i"}}));
    desired(&plain, &[], Some(&job(false, Some("Failed"))));
    desired(
        &run(json!({"container": {"image": "i"}, "cancel": true})),
        &[],
        Some(&job(true, None)),
    );
    let huge = run(json!({"container": {"image": "i"}, "gpu": {"count": 1,
        "fit": {"modules": [{"name": "w", "weightsGiB": 900, "placement": "replicated"}]}}}));
    desired(&huge, &[], None);
    let shape =
        json!({"layers": 80, "kvHeads": 8, "headDim": 128, "dtype": "bf16", "contextTokens": 8192});
    let unsplittable = run(json!({"container": {"image": "i"}, "gpu": {"count": 3,
        "fit": {"modules": [{"name": "w", "weightsGiB": 90, "placement": "sharded", "kvCache": {"fromShape": shape}}]}}}));
    desired(&unsplittable, &[], None);
    let no_headroom = run(json!({"container": {"image": "i"}, "gpu": {"count": 1,
        "fit": {"modules": [{"name": "w", "weightsGiB": 9, "placement": "sharded"}], "runtimeGiB": 0, "marginPercent": 0}}}));
    desired(&no_headroom, &[], Some(&job(false, None)));
    let reserved = run(
        json!({"container": {"image": "i"}, "volumes": [{"name": "dshm", "mountPath": "/x",
        "emptyDir": {}}]}),
    );
    desired(&reserved, &[], None);
    let writable = run(
        json!({"container": {"image": "i"}, "datasets": [{"name": "corpus", "version": "3",
        "mountPath": "/d", "readOnly": false}]}),
    );
    desired(&writable, &[dataset_object(&["default"])], None);
    for (reference, allowed) in [
        (
            json!({"name": "other", "version": "3", "mountPath": "/d"}),
            vec!["default"],
        ),
        (
            json!({"name": "corpus", "version": "4", "mountPath": "/d"}),
            vec!["default"],
        ),
        (
            json!({"name": "corpus", "version": "3", "mountPath": "/d"}),
            vec!["trainer"],
        ),
        (
            json!({"name": "corpus", "version": "3", "mountPath": "/d", "namespace": "b"}),
            vec!["default"],
        ),
    ] {
        let r = run(json!({"container": {"image": "i"}, "datasets": [reference]}));
        assert!(check_datasets(&r, &[dataset_object(&allowed)]).is_err());
        desired(&r, &[dataset_object(&allowed)], None);
    }
    let expired = run(json!({"container": {"image": "i"}, "intent": "suspended",
        "schedule": {"expiresAt": "2026-01-01T00:00:00Z"}}));
    let schedule = model_fleet_api::schedule::ScheduleState::of(
        expired.expires_at(),
        "2026-06-01T00:00:00Z".parse().unwrap(),
    );
    let rendered = render::render_training(&expired, &[], &config);
    let mut conditions =
        training::desired(&expired, &rendered.facts, None, Some(&job(true, None))).conditions;
    schedule.annotate(None, &mut conditions);
    out.extend(conditions);
    out
}

fn dataset_reasons() -> Vec<DesiredCondition> {
    let claim = |phase: &str| PersistentVolumeClaim {
        status: Some(PersistentVolumeClaimStatus {
            phase: Some(phase.into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    vec![
        dataset::pvc_bound("c", None),
        dataset::pvc_bound("c", Some(&claim("Pending"))),
        dataset::pvc_bound("c", Some(&claim("Bound"))),
        dataset::ready(None, true, &["ml/r".into()]),
    ]
}

#[test]
fn every_reason_is_emitted_by_the_status_code() {
    let mut emitted: BTreeSet<Reason> = BTreeSet::new();
    emitted.extend(inference_reasons().iter().map(|c| c.reason));
    emitted.extend(training_reasons().iter().map(|c| c.reason));
    emitted.extend(dataset_reasons().iter().map(|c| c.reason));
    emitted.extend(
        conditions::after_error(&[], Reason::ReconcileError, &"boom")
            .iter()
            .map(|c| c.reason),
    );
    let desired = json!({"metadata": {"ownerReferences": [{"uid": "u"}]}});
    let foreign =
        model_fleet_api::ownership::ForeignChild::detect("Deployment/m", &desired, &[], false)
            .expect("a child without our owner is foreign");
    emitted.extend(
        conditions::after_error(
            &[],
            model_fleet_api::ownership::ForeignChild::REASON,
            &foreign,
        )
        .iter()
        .map(|c| c.reason),
    );
    let suspended =
        isvc(json!({"model": {"name": "m"}, "container": {"image": "i"}, "intent": "suspended"}));
    let rendered = render::render_inference(&suspended, &RenderConfig::default());
    emitted.extend(
        inference::desired(
            &suspended,
            &rendered.facts,
            &inference::Observed {
                deployment: None,
                unschedulable: None,
                missing: vec![],
                route: inference::RouteState::NotRequested,
                scaling: inference::ScalingState::Fixed(0),
                may_scale_to_zero: false,
            },
        )
        .conditions
        .iter()
        .map(|c| c.reason),
    );
    let missing: Vec<&str> = Reason::ALL
        .iter()
        .filter(|r| !emitted.contains(r))
        .map(|r| r.as_str())
        .collect();
    assert!(missing.is_empty(), "reasons never emitted: {missing:?}");
    // Every condition type is written too.
    let types: BTreeSet<ConditionType> = inference_reasons()
        .iter()
        .chain(training_reasons().iter())
        .chain(dataset_reasons().iter())
        .map(|c| c.type_)
        .collect();
    assert_eq!(types.len(), ConditionType::ALL.len(), "{types:?}");
}
