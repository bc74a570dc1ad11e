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
use model_fleet_api::schedule::{ScheduleState, Scheduled, idle};
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
        stalled: None,
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
    let (yes, refused) = (
        accepted("True", "Accepted"),
        accepted("False", "NotAllowedByListeners"),
    );
    // A hostname held by another service (the claims), not a Gateway's word.
    let held = model_fleet_api::routing::Conflict {
        holder: "team-a/a".into(),
        claim: model_fleet_api::routing::RouteClaim {
            gateway: ("gw".into(), "shared".into()),
            section: None,
            hostname: Some("chat.example.test".into()),
            path: "/".into(),
        },
    };
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
            status: Some(&refused),
            generation: Some(1),
            parent,
        },
        inference::RouteState::Conflict(&held),
    ] {
        out.push(inference::route_ready(&route));
    }
    let keda_failed = json!({"conditions": [{"type": "Ready", "status": "False", "reason": "X"}]});
    let keda_paused = json!({"conditions": [{"type": "Paused", "status": "True", "reason": "P"}]});
    let applied = |status, unreachable: bool| inference::ScalingState::Applied {
        status,
        unreachable_from_zero: unreachable.then(|| "no trigger can wake it".to_string()),
        paused_by_intent: false,
        pause_annotated: true,
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
        let children = rendered.children.as_ref().err();
        let findings = training::PodFindings::default();
        out.extend(training::desired(r, &rendered.facts, children, j, findings).conditions);
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
    // A Dataset whose own status says its claim is missing or lost refuses a run that has no Job yet.
    for claim in ["ClaimNotFound", "ClaimLost"] {
        let mut unusable = dataset_object(&["default"]);
        unusable.spec.pvc = serde_json::from_value(json!({"claimName": "data"})).unwrap();
        unusable.status = serde_json::from_value(json!({"conditions": [{"type": "PVCBound",
            "status": "False", "reason": claim, "message": "", "lastTransitionTime": "2026-12-07T00:00:00Z"}]}))
        .unwrap();
        let r = run(
            json!({"container": {"image": "i"}, "datasets": [{"name": "corpus", "version": "3",
            "mountPath": "/d"}]}),
        );
        desired(&r, &[unusable], None);
    }
    // As the controller does it: render and status see the effective intent, annotate the spec's own.
    let expired = run(json!({"container": {"image": "i"}, "intent": "automatic",
        "schedule": {"expiresAt": "2026-01-01T00:00:00Z"}}));
    let schedule = ScheduleState::of(
        expired.expires_at(),
        "2026-06-01T00:00:00Z".parse().unwrap(),
    );
    let effective = schedule.effective(&expired);
    let rendered = render::render_training(&effective, &[], &config);
    let mut conditions = training::desired(
        &effective,
        &rendered.facts,
        None,
        Some(&job(true, None)),
        training::PodFindings::default(),
    )
    .conditions;
    schedule.annotate(expired.spec.intent, &mut conditions);
    out.extend(conditions);
    // A run whose pod the scheduler cannot place.
    let plain = run(json!({"container": {"image": "i"}}));
    let rendered = render::render_training(&plain, &[], &config);
    let findings = training::PodFindings {
        unschedulable: Some("0/3 nodes are available: 3 Insufficient nvidia.com/gpu."),
        ..Default::default()
    };
    let job = job(false, None);
    out.extend(training::desired(&plain, &rendered.facts, None, Some(&job), findings).conditions);
    // A run whose Job cannot create its pod (a quota).
    let findings = training::PodFindings {
        refused: Some("exceeded quota: gpus"),
        ..Default::default()
    };
    out.extend(training::desired(&plain, &rendered.facts, None, Some(&job), findings).conditions);
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
    let mut out = vec![dataset::ready(None, true, &["ml/r".into()])];
    for claim in [
        None,
        Some(claim("Pending")),
        Some(claim("Lost")),
        Some(claim("Bound")),
    ] {
        let pvc = dataset::pvc_bound("c", claim.as_ref());
        out.push(dataset::ready(Some(&pvc), false, &[]));
        out.push(pvc);
    }
    out
}

/// What the refused, expired and fit-warning paths of an InferenceService write (render refused the spec; the
/// schedule expired; the fit has no headroom), as the controller composes them.
fn inference_paths() -> Vec<DesiredCondition> {
    let config = RenderConfig {
        default_gateway: None,
        ..RenderConfig::default()
    };
    let mut out = Vec::new();
    let mut refused = |spec: serde_json::Value| {
        let object = isvc(spec);
        let rendered = render::render_inference(&object, &config);
        let refusal = rendered.children.as_ref().expect_err("refused");
        out.extend(inference::refused(&object, &rendered.facts, refusal, None).conditions);
    };
    refused(
        json!({"model": {"name": "m"}, "container": {"image": "i"}, "gpu": {"count": 1,
        "fit": {"modules": [{"name": "w", "weightsGiB": 900, "placement": "replicated"}]}}}),
    );
    refused(
        json!({"model": {"name": "m"}, "container": {"image": "i"}, "gpu": {"count": 3,
        "fit": {"modules": [{"name": "w", "weightsGiB": 90, "placement": "sharded", "kvCache": {"fromShape":
        {"layers": 80, "kvHeads": 8, "headDim": 128, "dtype": "bf16", "contextTokens": 8192}}}]}}}),
    );
    refused(json!({"model": {"name": "m"}, "container": {"image": "i"},
        "volumes": [{"name": "dshm", "mountPath": "/x", "emptyDir": {}}]}));
    refused(json!({"model": {"name": "m"}, "container": {"image": "i"}, "gateway": {}}));
    let observed = |scaling| inference::Observed {
        deployment: None,
        unschedulable: None,
        stalled: None,
        missing: vec![],
        route: inference::RouteState::NotRequested,
        scaling,
        may_scale_to_zero: false,
    };
    let expiring = isvc(json!({"model": {"name": "m"}, "container": {"image": "i"},
        "schedule": {"expiresAt": "2026-01-01T00:00:00Z"}}));
    let schedule = ScheduleState::of(
        expiring.expires_at(),
        "2026-06-01T00:00:00Z".parse().unwrap(),
    );
    let effective = schedule.effective(&expiring);
    let rendered = render::render_inference(&effective, &config);
    let mut expired = inference::desired(
        &effective,
        &rendered.facts,
        &observed(inference::ScalingState::Fixed(0)),
    )
    .conditions;
    schedule.annotate(expiring.spec.intent, &mut expired);
    out.extend(expired);
    let tight = isvc(
        json!({"model": {"name": "m"}, "container": {"image": "i"}, "gpu": {"count": 1,
        "fit": {"modules": [{"name": "w", "weightsGiB": 9, "placement": "sharded"}], "runtimeGiB": 0,
        "marginPercent": 0}}}),
    );
    let rendered = render::render_inference(&tight, &config);
    out.extend(
        inference::desired(
            &tight,
            &rendered.facts,
            &observed(inference::ScalingState::Fixed(1)),
        )
        .conditions,
    );
    out
}

/// A harness that runs one kind's pure status code and returns the conditions it wrote.
type ConditionsOf = fn() -> Vec<DesiredCondition>;

/// Every condition the pure status code writes, with the kind of object it is written on. A failed step's
/// `Ready` (`after_error`) is written on every kind.
fn emitted() -> Vec<(&'static str, DesiredCondition)> {
    let mut out = Vec::new();
    let kinds: [(&str, ConditionsOf); 4] = [
        ("InferenceService", inference_reasons),
        ("InferenceService", inference_paths),
        ("TrainingRun", training_reasons),
        ("Dataset", dataset_reasons),
    ];
    for (kind, conditions) in kinds {
        out.extend(conditions().into_iter().map(|c| (kind, c)));
    }
    let desired = json!({"metadata": {"ownerReferences": [{"uid": "u"}]}});
    let foreign =
        model_fleet_api::ownership::ForeignChild::detect("Deployment/m", &desired, &[], false)
            .expect("a child without our owner is foreign");
    let mut failed = conditions::after_error(&[], Reason::ReconcileError, &"boom");
    failed.extend(conditions::after_error(
        &[],
        model_fleet_api::ownership::ForeignChild::REASON,
        &foreign,
    ));
    for kind in ["InferenceService", "TrainingRun", "Dataset"] {
        out.extend(failed.iter().cloned().map(|c| (kind, c)));
    }
    out
}

/// A docs table's rows as (first column, the names listed in the second); `all` stands for the names of `all` when
/// given, else stays `["all"]` (any name).
fn doc_table(section: &str, all: &[&str]) -> Vec<(String, BTreeSet<String>)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/CONDITIONS.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let table = text
        .split(section)
        .nth(1)
        .unwrap_or_else(|| panic!("docs/CONDITIONS.md has no {section}"))
        .split("\n## ")
        .next()
        .unwrap();
    table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let names = cells[2]
                .split(',')
                .map(|n| n.trim().trim_matches('`'))
                .flat_map(|n| match n {
                    "all" if !all.is_empty() => all.to_vec(),
                    _ => vec![n],
                })
                .map(str::to_owned)
                .collect();
            (cells[1].trim_matches('`').to_owned(), names)
        })
        .collect()
}

/// Both directions of a documented relation: every pair the code emits is documented (`all` covers every name),
/// and every documented pair is emitted.
fn same_pairs(
    what: &str,
    documented: &[(String, BTreeSet<String>)],
    emitted: &BTreeSet<(String, String)>,
) {
    let claims = |key: &str, name: &str| {
        documented
            .iter()
            .any(|(k, names)| k == key && (names.contains(name) || names.contains("all")))
    };
    let undocumented: Vec<_> = emitted.iter().filter(|(k, n)| !claims(k, n)).collect();
    assert!(
        undocumented.is_empty(),
        "{what}: emitted but not in docs/CONDITIONS.md: {undocumented:?}"
    );
    let never: Vec<_> = documented
        .iter()
        .flat_map(|(k, names)| names.iter().map(move |n| (k.clone(), n.clone())))
        .filter(|(_, n)| n != "all")
        .filter(|pair| !emitted.contains(pair))
        .collect();
    assert!(
        never.is_empty(),
        "{what}: in docs/CONDITIONS.md but never emitted: {never:?}"
    );
}

#[test]
fn every_reason_is_emitted_on_the_conditions_the_docs_name() {
    let all = emitted();
    let reasons: BTreeSet<Reason> = all.iter().map(|(_, c)| c.reason).collect();
    let missing: Vec<&str> = Reason::ALL
        .iter()
        .filter(|r| !reasons.contains(r))
        .map(|r| r.as_str())
        .collect();
    assert!(missing.is_empty(), "reasons never emitted: {missing:?}");
    let pairs = all
        .iter()
        .map(|(_, c)| (c.reason.as_str().to_owned(), c.type_.to_string()))
        .collect();
    same_pairs("(reason, condition)", &doc_table("## Reasons", &[]), &pairs);
}

#[test]
fn every_condition_type_is_written_on_the_kinds_the_docs_name() {
    let all = emitted();
    let types: BTreeSet<ConditionType> = all.iter().map(|(_, c)| c.type_).collect();
    assert_eq!(types.len(), ConditionType::ALL.len(), "{types:?}");
    let pairs = all
        .iter()
        .map(|(kind, c)| (c.type_.to_string(), (*kind).to_owned()))
        .collect();
    same_pairs(
        "(condition, kind)",
        &doc_table(
            "## Condition types",
            &["InferenceService", "TrainingRun", "Dataset"],
        ),
        &pairs,
    );
}
