use super::*;
use crate::{InferenceServiceSpec, Replicas, Scaling, Trigger};
use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentSpec, DeploymentStatus};
use serde_json::json;

fn deployment(
    generation: i64,
    desired: i32,
    observed: i64,
    updated: i32,
    available: i32,
    total: i32,
) -> Deployment {
    let mut d = Deployment {
        spec: Some(DeploymentSpec {
            replicas: Some(desired),
            ..Default::default()
        }),
        status: Some(DeploymentStatus {
            observed_generation: Some(observed),
            updated_replicas: Some(updated),
            available_replicas: Some(available),
            replicas: Some(total),
            ..Default::default()
        }),
        ..Default::default()
    };
    d.metadata.generation = Some(generation);
    d
}

/// `ready` for a deployment as the controller observed it (no route, fixed replicas).
fn ready(
    intent: Intent,
    deployment: Option<&Deployment>,
    unschedulable: Option<&str>,
    missing: &[&'static str],
) -> DesiredCondition {
    super::ready(
        intent,
        &Observed {
            deployment,
            unschedulable,
            stalled: None,
            missing: missing.to_vec(),
            route: RouteState::NotRequested,
            scaling: ScalingState::Fixed(1),
            may_scale_to_zero: true,
        },
    )
}

#[test]
fn ready_only_on_current_generation_with_all_replicas_updated_and_available() {
    let ok = deployment(2, 2, 2, 2, 2, 2);
    assert!(rolled_out(&ok));
    let c = ready(Intent::Automatic, Some(&ok), None, &[]);
    assert_eq!(
        (c.status, c.reason),
        (ConditionStatus::True, Reason::AsExpected)
    );
    // Stale: the Deployment controller has not seen generation 3 yet (case O-02).
    let stale = deployment(3, 2, 2, 2, 2, 2);
    assert!(!rolled_out(&stale));
    let waiting = ready(Intent::Automatic, Some(&stale), None, &[]);
    assert_eq!(
        (waiting.reason, waiting.message.as_str()),
        (
            Reason::Progressing,
            "rollout in progress: the Deployment controller has not observed generation 3 yet"
        ),
        "its counts describe generation 2: not quoted as the rollout's"
    );
    // Old replicas still running.
    assert!(!rolled_out(&deployment(2, 2, 2, 2, 2, 3)));
    assert!(!rolled_out(&deployment(2, 2, 2, 1, 2, 2)));
    assert!(!rolled_out(&deployment(2, 2, 2, 2, 1, 2)));
    assert_eq!(
        ready(Intent::Automatic, None, None, &[]).reason,
        Reason::Progressing
    );
}

#[test]
fn not_ready_reasons_follow_precedence() {
    let rolling = deployment(2, 1, 2, 0, 0, 1);
    assert_eq!(
        ready(Intent::Automatic, Some(&rolling), Some("0/3 nodes"), &[]).reason,
        Reason::Unschedulable
    );
    assert_eq!(
        ready(Intent::Automatic, Some(&rolling), None, &["KEDA"]).reason,
        Reason::DependencyMissing
    );
    assert_eq!(
        ready(Intent::Suspended, Some(&rolling), None, &["KEDA"]).reason,
        Reason::Suspended
    );
    let zero = deployment(2, 0, 2, 0, 0, 0);
    assert_eq!(
        ready(Intent::Automatic, Some(&zero), None, &[]).reason,
        Reason::ScaledToZero
    );
    let ok = deployment(1, 1, 1, 1, 1, 1);
    assert_eq!(
        ready(Intent::Active, Some(&ok), Some("stale pod"), &[]).status,
        ConditionStatus::True
    );
}

#[test]
fn progressing_and_suspended() {
    assert_eq!(progressing(None).status, ConditionStatus::True);
    assert_eq!(progressing(None).reason, Reason::RollingOut);
    assert_eq!(
        progressing(Some(&deployment(1, 1, 1, 1, 1, 1))).reason,
        Reason::RolloutComplete
    );
    assert_eq!(suspended(Intent::Suspended).status, ConditionStatus::True);
    assert_eq!(suspended(Intent::Active).status, ConditionStatus::False);
}

#[test]
fn pods_are_read_only_where_ready_can_use_them() {
    let rolling = deployment(1, 2, 1, 1, 0, 2);
    assert!(needs_pod_scan(&rolling, false));
    assert!(
        !needs_pod_scan(&rolling, true),
        "created by this reconcile: no pods yet"
    );
    assert!(
        !needs_pod_scan(&deployment(1, 2, 1, 2, 2, 2), false),
        "rolled out"
    );
    let zero = deployment(2, 0, 1, 1, 1, 1);
    assert!(!needs_pod_scan(&zero, false), "0 desired replicas");
    // The reason it may skip: `ready` decides 0 replicas without the pods.
    let observed = |unschedulable| Observed {
        deployment: Some(&zero),
        unschedulable,
        stalled: None,
        missing: Vec::new(),
        route: RouteState::NotRequested,
        scaling: ScalingState::Fixed(0),
        may_scale_to_zero: false,
    };
    assert_eq!(
        super::ready(Intent::Active, &observed(Some("0/4 nodes are available"))),
        super::ready(Intent::Active, &observed(None))
    );
}

/// A rollout whose pods cannot start says why in `Ready` (reason Progressing): the ReplicaSet's refusal (e.g. Pod
/// Security admission) first, then the first container the kubelet will not start (found by
/// `pods::stalled_pod_message`, tested there).
#[test]
fn a_stalled_rollout_says_why() {
    let rolling = deployment(2, 1, 2, 1, 0, 1);
    let mut refusing = rolling.clone();
    let observed = |deployment, stalled| Observed {
        deployment: Some(deployment),
        unschedulable: None,
        stalled,
        missing: vec![],
        route: RouteState::NotRequested,
        scaling: ScalingState::Fixed(1),
        may_scale_to_zero: false,
    };
    let message =
        "pod echo-1: container main: CreateContainerConfigError: container has runAsNonRoot"
            .to_owned();
    let ready = super::ready(Intent::Automatic, &observed(&rolling, Some(&message)));
    assert_eq!(ready.reason, Reason::Progressing);
    assert_eq!(ready.message, format!("rollout stalled: {message}"));
    // A stall needs a human: Degraded quotes it; a rollout that is only under way is not degraded.
    let stall = degraded(std::slice::from_ref(&ready));
    assert_eq!(
        (stall.status, stall.reason),
        (ConditionStatus::True, Reason::NeedsAttention)
    );
    assert_eq!(stall.message, format!("Ready: rollout stalled: {message}"));
    let under_way = super::ready(Intent::Automatic, &observed(&rolling, None));
    assert_eq!(degraded(&[under_way]).status, ConditionStatus::False);
    refusing.status.as_mut().unwrap().conditions = Some(vec![DeploymentCondition {
        type_: "ReplicaFailure".into(),
        status: "True".into(),
        reason: Some("FailedCreate".into()),
        message: Some(
            "pods \"echo-1\" is forbidden: violates PodSecurity \"restricted:latest\"".into(),
        ),
        ..Default::default()
    }]);
    let ready = super::ready(Intent::Automatic, &observed(&refusing, Some(&message)));
    assert_eq!(
        ready.message,
        "rollout stalled: the ReplicaSet cannot create pods: violates PodSecurity \"restricted:latest\""
    );
    // A failed delete says so, and a condition without a message does not repeat itself.
    let mut deleting = refusing.clone();
    let failure = &mut deleting
        .status
        .as_mut()
        .unwrap()
        .conditions
        .as_mut()
        .unwrap()[0];
    failure.reason = Some("FailedDelete".into());
    failure.message = None;
    assert_eq!(
        super::ready(Intent::Automatic, &observed(&deleting, Some(&message))).message,
        "rollout stalled: the ReplicaSet cannot delete pods"
    );
    assert_eq!(
        super::ready(
            Intent::Automatic,
            &observed(&deployment(2, 1, 2, 1, 1, 1), Some(&message))
        )
        .status,
        ConditionStatus::True,
        "rolled out: a stuck extra pod does not matter"
    );
}

#[test]
fn route_ready_reads_the_gateway_status_for_our_parent() {
    let parent = ("gateway-system", "shared");
    let status = json!({"parents": [
        {"parentRef": {"name": "other", "namespace": "gateway-system"},
         "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted"}]},
        {"parentRef": {"name": "shared", "namespace": "gateway-system"},
         "conditions": [{"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners", "message": "no", "observedGeneration": 1}]}
    ]});
    let c = route_ready(&RouteState::Applied {
        status: Some(&status),
        generation: Some(1),
        parent,
    });
    assert_eq!(
        (c.status, c.reason),
        (ConditionStatus::False, Reason::GatewayRefused)
    );
    // Gateway API's initial condition is no refusal: still waiting.
    let pending = json!({"parents": [{"parentRef": {"name": "shared", "namespace": "gateway-system"},
        "conditions": [{"type": "Accepted", "status": "Unknown", "reason": "Pending", "observedGeneration": 1}]}]});
    let c = route_ready(&RouteState::Applied {
        status: Some(&pending),
        generation: Some(1),
        parent,
    });
    assert_eq!(
        (c.reason, c.message.starts_with("waiting for")),
        (Reason::NotAccepted, true)
    );
    // A listener refusal is the Gateway's word, not a hostname held by another service (a hunt's finding).
    let refused = json!({"parents": [{"parentRef": {"name": "shared", "namespace": "gateway-system"},
        "conditions": [{"type": "Accepted", "status": "False", "reason": "NoMatchingListenerHostname",
            "message": "no listener hostname matches a.example", "observedGeneration": 1}]}]});
    let c = route_ready(&RouteState::Applied {
        status: Some(&refused),
        generation: Some(1),
        parent,
    });
    assert_eq!(c.reason, Reason::GatewayRefused);
    assert!(is_warning(&c), "a refusal needs a human");
    assert_eq!(
        c.message,
        "Gateway gateway-system/shared: NoMatchingListenerHostname: no listener hostname matches a.example"
    );
    let accepted = json!({"parents": [{"parentRef": {"name": "shared", "namespace": "gateway-system"},
        "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted", "observedGeneration": 1}]}]});
    assert_eq!(
        route_ready(&RouteState::Applied {
            status: Some(&accepted),
            generation: Some(1),
            parent,
        })
        .status,
        ConditionStatus::True
    );
    assert_eq!(
        route_ready(&RouteState::Applied {
            status: None,
            generation: Some(1),
            parent,
        })
        .reason,
        Reason::NotAccepted
    );
    assert_eq!(
        route_ready(&RouteState::NotRequested).reason,
        Reason::NotRequested
    );
    assert_eq!(
        route_ready(&RouteState::GatewayNotFound("a/b".into())).reason,
        Reason::GatewayNotFound
    );
    assert_eq!(
        route_ready(&RouteState::CrdMissing).reason,
        Reason::DependencyMissing
    );
}

fn spec(min: Option<i32>, triggers: Vec<(&str, Option<&str>)>) -> InferenceServiceSpec {
    let mut spec: InferenceServiceSpec = serde_json::from_value(json!({
        "model": {"name": "m"}, "container": {"image": "i"}
    }))
    .unwrap();
    spec.replicas = Some(Replicas {
        min,
        ..Default::default()
    });
    spec.scaling = Some(Scaling {
        triggers: Some(
            triggers
                .into_iter()
                .map(|(type_, query)| Trigger {
                    type_: type_.into(),
                    name: None,
                    metadata: query
                        .map(|q| [("query".to_owned(), q.to_owned())].into())
                        .unwrap_or_default(),
                    authentication_ref: None,
                    metric_type: None,
                })
                .collect(),
        ),
        ..Default::default()
    });
    spec
}

#[test]
fn scale_from_zero_needs_a_trigger_that_exists_without_pods() {
    assert!(scale_from_zero_unreachable(&spec(
        Some(0),
        vec![("cpu", None)]
    )));
    assert!(scale_from_zero_unreachable(&spec(
        Some(0),
        vec![("prometheus", Some("sum(vllm:num_requests_waiting)"))]
    )));
    assert!(!scale_from_zero_unreachable(&spec(
        Some(0),
        vec![("cpu", None), ("rabbitmq", None)]
    )));
    assert!(!scale_from_zero_unreachable(&spec(
        Some(1),
        vec![("cpu", None)]
    )));
    assert!(!scale_from_zero_unreachable(&spec(
        Some(0),
        vec![("prometheus", Some("sum(gateway_backlog)"))]
    )));
    let mut active = spec(Some(0), vec![("cpu", None)]);
    active.intent = Some(Intent::Active);
    assert!(!scale_from_zero_unreachable(&active));
}

#[test]
fn scaling_ready_states() {
    let fixed = scaling_ready(&ScalingState::Fixed(2));
    assert_eq!(
        (fixed.status, fixed.reason),
        (ConditionStatus::True, Reason::FixedReplicas)
    );
    assert_eq!(
        scaling_ready(&ScalingState::KedaMissing).reason,
        Reason::KedaMissing
    );
    let failed = json!({"conditions": [{"type": "Ready", "status": "False", "reason": "ScaledObjectCheckFailed", "message": "bad"}]});
    let c = scaling_ready(&ScalingState::Applied {
        status: Some(&failed),
        unreachable_from_zero: None,
        paused_by_intent: false,
        pause_annotated: true,
    });
    assert_eq!(
        (c.status, c.reason, c.message.as_str()),
        (
            ConditionStatus::False,
            Reason::ScaledObjectNotReady,
            "KEDA: ScaledObjectCheckFailed: bad"
        )
    );
    assert!(is_warning(&c));
    let c = scaling_ready(&ScalingState::Applied {
        status: None,
        unreachable_from_zero: scale_from_zero_warning(&spec(Some(0), vec![("cpu", None)])),
        paused_by_intent: false,
        pause_annotated: true,
    });
    assert_eq!(c.reason, Reason::ScaleToZeroUnwakeable);
    assert!(
        c.message.starts_with(
            "the service can scale to 0 but no trigger can wake it: scaling.triggers[0] (cpu)"
        ),
        "{}",
        c.message
    );
    assert!(is_warning(&c));
    let c = scaling_ready(&ScalingState::Applied {
        status: None,
        unreachable_from_zero: None,
        paused_by_intent: false,
        pause_annotated: true,
    });
    assert_eq!(c.status, ConditionStatus::True);
}

#[test]
fn degraded_lists_the_warnings() {
    let list = [
        DesiredCondition::new(
            ConditionType::Ready,
            false,
            Reason::Unschedulable,
            "no node",
        ),
        DesiredCondition::new(
            ConditionType::RouteReady,
            false,
            Reason::NotAccepted,
            "wait",
        ),
    ];
    let d = degraded(&list);
    assert_eq!(
        (d.status, d.reason),
        (ConditionStatus::True, Reason::NeedsAttention)
    );
    assert_eq!(d.message, "Ready: Unschedulable");
    assert_eq!(degraded(&list[1..]).status, ConditionStatus::False);
}

// Issue 18 ("a fit that leaves no room is accepted in silence"): runtimeGiB 0 with marginPercent 0 is a warning on
// Degraded, alone or next to another warning; written-out defaults are not.
#[test]
fn a_fit_without_headroom_is_a_degraded_warning() {
    let gpu = |fit: &str| -> crate::Gpu {
        serde_yaml::from_str(&format!(
            "count: 1\nfit: {{modules: [{{name: w, weightsGiB: 20, placement: sharded}}], {fit}}}"
        ))
        .unwrap()
    };
    let budget = crate::capacity::plan(&gpu("runtimeGiB: 0, marginPercent: 0")).unwrap();
    let quiet = DesiredCondition::new(ConditionType::Degraded, false, Reason::AsExpected, "");
    let mut list = vec![quiet.clone()];
    crate::status::with_fit_warning(&mut list, budget.as_ref());
    assert_eq!(
        (list[0].status, list[0].reason),
        (ConditionStatus::True, Reason::FitWithoutHeadroom)
    );
    assert!(
        list[0]
            .message
            .starts_with("gpu.fit: runtimeGiB 0 and marginPercent 0 leave no room"),
        "{}",
        list[0].message
    );
    assert!(
        list[0].message.contains("the 20 GiB per GPU"),
        "{}",
        list[0].message
    );
    let mut busy = vec![DesiredCondition::new(
        ConditionType::Degraded,
        true,
        Reason::NeedsAttention,
        "Ready: Unschedulable",
    )];
    crate::status::with_fit_warning(&mut busy, budget.as_ref());
    assert_eq!(busy[0].reason, Reason::NeedsAttention);
    assert!(
        busy[0]
            .message
            .starts_with("Ready: Unschedulable; FitWithoutHeadroom: gpu.fit:"),
        "{}",
        busy[0].message
    );
    for fit in [
        "runtimeGiB: 0",
        "marginPercent: 0",
        "runtimeGiB: 2, marginPercent: 10",
        "runtimeGiB: 0.5, marginPercent: 0",
    ] {
        let budget = crate::capacity::plan(&gpu(fit)).unwrap();
        let mut list = vec![quiet.clone()];
        crate::status::with_fit_warning(&mut list, budget.as_ref());
        assert_eq!(list[0], quiet, "{fit}");
    }
}

// Issue 24 case 3 (gateway-api#5115): a condition for an older generation says nothing about the current spec.
#[test]
fn a_route_accepted_for_an_older_generation_is_waiting() {
    let parent = ("model-fleet-system", "shared");
    let status = |accepted: &str, generation: i64| {
        json!({"parents": [{"parentRef": {"name": "shared", "namespace": "model-fleet-system"},
            "conditions": [{"type": "Accepted", "status": accepted, "reason": "R", "observedGeneration": generation}]}]})
    };
    let (old_accept, old_reject, current) =
        (status("True", 1), status("False", 1), status("True", 2));
    for stale in [&old_accept, &old_reject] {
        let c = route_ready(&RouteState::Applied {
            status: Some(stale),
            generation: Some(2),
            parent,
        });
        assert_eq!(
            (c.status, c.reason),
            (ConditionStatus::False, Reason::NotAccepted)
        );
        assert_eq!(
            c.message,
            "waiting for Gateway model-fleet-system/shared to accept the route"
        );
    }
    let c = route_ready(&RouteState::Applied {
        status: Some(&current),
        generation: Some(2),
        parent,
    });
    assert_eq!(
        (c.status, c.reason),
        (ConditionStatus::True, Reason::Accepted)
    );
}

// Issue 24 case 1: a pause KEDA reports while the intent is not suspended (a stale annotation) is a warning.
#[test]
fn a_keda_pause_the_intent_did_not_ask_for_is_degraded() {
    let paused = json!({"conditions": [{"type": "Ready", "status": "True"},
        {"type": "Paused", "status": "True", "reason": "ScaledObjectPaused", "message": "paused replicas 0"}]});
    let scaling = |paused_by_intent| ScalingState::Applied {
        status: Some(&paused),
        unreachable_from_zero: None,
        paused_by_intent,
        pause_annotated: true,
    };
    let c = scaling_ready(&scaling(false));
    assert_eq!(
        (c.status, c.reason),
        (ConditionStatus::False, Reason::AutoscalerPaused)
    );
    assert!(
        c.message.contains("ScaledObjectPaused: paused replicas 0"),
        "{}",
        c.message
    );
    assert_eq!(degraded(&[c]).status, ConditionStatus::True);
    assert_eq!(scaling_ready(&scaling(true)).status, ConditionStatus::True);
    // A hunt's finding: KEDA's pause condition with an empty message printed "(ScaledObjectPaused: )".
    let bare = json!({"conditions": [{"type": "Paused", "status": "True", "reason": "ScaledObjectPaused"}]});
    let c = scaling_ready(&ScalingState::Applied {
        status: Some(&bare),
        unreachable_from_zero: None,
        paused_by_intent: false,
        pause_annotated: true,
    });
    assert!(c.message.contains("(ScaledObjectPaused)"), "{}", c.message);
}

// A breaker's finding: at every resume (intent suspended -> active or automatic, an expiry moved, idleness ended) the
// operator's apply removes its own pause annotation and reads back the ScaledObject with KEDA's status still saying
// Paused=True, so it warned `AutoscalerPaused` ("remove the ... annotation someone left on it", a Warning Event,
// Degraded=True) although no annotation was left. Without a pause annotation, KEDA's pause is its stale status.
#[test]
fn a_keda_pause_without_a_pause_annotation_is_stale_not_news() {
    let paused = json!({"conditions": [{"type": "Ready", "status": "True"},
        {"type": "Paused", "status": "True", "reason": "ScaledObjectPaused", "message": "paused replicas 0"}]});
    let c = scaling_ready(&ScalingState::Applied {
        status: Some(&paused),
        unreachable_from_zero: None,
        paused_by_intent: false,
        pause_annotated: false,
    });
    assert_eq!(
        (c.status, c.reason),
        (ConditionStatus::True, Reason::AsExpected)
    );
    let annotations =
        |key: &str| std::collections::BTreeMap::from([(key.to_string(), "0".to_string())]);
    assert!(pause_annotated(Some(&annotations(
        "autoscaling.keda.sh/paused-replicas"
    ))));
    assert!(pause_annotated(Some(&annotations(
        "autoscaling.keda.sh/paused"
    ))));
    assert!(!pause_annotated(Some(&annotations(
        "modelfleet.io/applied-hash"
    ))));
    assert!(!pause_annotated(None));
}

// Issue 24 case 2: ScaledToZero is never reported while the autoscaler may not hold 0 (intent active, min >= 1).
#[test]
fn zero_replicas_is_scaled_to_zero_only_where_the_autoscaler_may_hold_zero() {
    let zero = deployment(2, 0, 2, 0, 0, 0);
    let observed = |may_scale_to_zero| Observed {
        deployment: Some(&zero),
        unschedulable: None,
        stalled: None,
        missing: vec![],
        route: RouteState::NotRequested,
        scaling: ScalingState::Fixed(0),
        may_scale_to_zero,
    };
    assert_eq!(
        super::ready(Intent::Automatic, &observed(true)).reason,
        Reason::ScaledToZero
    );
    assert_eq!(
        super::ready(Intent::Active, &observed(false)).reason,
        Reason::Progressing
    );
}

#[test]
fn a_route_held_by_another_service_is_a_hostname_conflict_naming_it_and_degrades() {
    let conflict = crate::routing::Conflict {
        holder: "team-a/a".into(),
        claim: crate::routing::RouteClaim {
            gateway: ("model-fleet-system".into(), "shared".into()),
            section: None,
            hostname: Some("chat.example.test".into()),
            path: "/".into(),
        },
    };
    let route = route_ready(&RouteState::Conflict(&conflict));
    assert_eq!(route.status, ConditionStatus::False);
    assert_eq!(route.reason, Reason::HostnameConflict);
    assert!(
        route.message.contains("InferenceService team-a/a"),
        "{}",
        route.message
    );
    assert!(is_warning(&route));
    let degraded = degraded(&[route]);
    assert_eq!(degraded.reason, Reason::NeedsAttention);
    assert!(
        degraded.message.contains("HostnameConflict"),
        "{}",
        degraded.message
    );
}

// A refused spec: nothing is applied, so the running replicas are kept; Ready and Degraded carry the refusal's own
// reason (as a TrainingRun's do), and the Ready change is a Warning Event.
#[test]
fn a_refused_spec_says_why_on_ready_and_degraded_and_keeps_the_running_counts() {
    let mut isvc: InferenceService = serde_json::from_value(json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
        "metadata": {"name": "m", "namespace": "ml", "uid": "u", "generation": 2},
        "spec": {"model": {"name": "m"}, "container": {"image": "i"}, "gpu": {"count": 1,
            "fit": {"modules": [{"name": "w", "weightsGiB": 900, "placement": "replicated"}]}}},
        "status": {"replicas": 2, "readyReplicas": 2, "conditions": [
            {"type": "Ready", "status": "True", "reason": "AsExpected", "message": "", "observedGeneration": 1,
                "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "Progressing", "status": "False", "reason": "RolloutComplete", "message": "", "observedGeneration": 1,
                "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "ScalingReady", "status": "True", "reason": "FixedReplicas", "message": "", "observedGeneration": 1,
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    }))
    .unwrap();
    let rendered = crate::render::render_inference(&isvc, &crate::render::test_config());
    let refusal = rendered
        .children
        .as_ref()
        .expect_err("900 GiB fits no class");
    // The Deployment of the last accepted spec still runs: its counts, not the recorded ones (one of its pods went).
    let running: Deployment =
        serde_json::from_value(json!({"status": {"replicas": 2, "readyReplicas": 1}})).unwrap();
    let draft = refused(&isvc, &rendered.facts, refusal, Some(&running));
    assert_eq!(
        (draft.status.replicas, draft.status.ready_replicas),
        (Some(2), Some(1))
    );
    let gone = refused(&isvc, &rendered.facts, refusal, None);
    assert_eq!(
        (gone.status.replicas, gone.status.ready_replicas),
        (Some(0), Some(0)),
        "no Deployment runs: no replicas, whatever was recorded"
    );
    let find = |type_| {
        draft
            .conditions
            .iter()
            .find(|c| c.type_ == type_)
            .unwrap_or_else(|| panic!("{type_} is written"))
    };
    let (ready, degraded) = (find(ConditionType::Ready), find(ConditionType::Degraded));
    assert_eq!(
        (ready.status, ready.reason),
        (ConditionStatus::False, Reason::FitTooLarge)
    );
    assert_eq!(
        (degraded.status, degraded.reason),
        (ConditionStatus::True, Reason::FitTooLarge)
    );
    assert_eq!(ready.message, refusal.to_string());
    assert!(is_warning(ready), "the refusal is announced as a Warning");
    assert!(
        !is_warning(degraded),
        "Degraded repeats Ready's refusal: one Event, not two"
    );
    // The running children's conditions stand, describing the generation they were written for (a hunt's finding:
    // they vanished).
    let (progressing, scaling) = (
        find(ConditionType::Progressing),
        find(ConditionType::ScalingReady),
    );
    assert_eq!(progressing.reason, Reason::RolloutComplete);
    assert!(progressing.carried && scaling.carried);
    assert_eq!(
        draft
            .conditions
            .iter()
            .filter(|c| c.type_ == ConditionType::Ready)
            .count(),
        1,
        "Ready is the refusal, not carried"
    );

    // No gateway to attach to: the route says so as well.
    isvc.spec.gpu = None;
    isvc.spec.gateway = Some(serde_json::from_value(json!({"hostnames": ["b.example"]})).unwrap());
    let rendered = crate::render::render_inference(&isvc, &crate::render::RenderConfig::default());
    let refusal = rendered.children.as_ref().expect_err("no Gateway");
    let draft = refused(&isvc, &rendered.facts, refusal, None);
    // Nothing routes it, so no URL (a hunt's finding: the spec's URL was announced); one routed before is kept.
    assert_eq!(rendered.facts.url.as_deref(), Some("http://b.example/"));
    assert_eq!(draft.status.url, None);
    isvc.status.as_mut().unwrap().url = Some("http://a.example/".into());
    assert_eq!(
        refused(&isvc, &rendered.facts, refusal, None)
            .status
            .url
            .as_deref(),
        Some("http://a.example/")
    );
    let reasons: Vec<_> = draft
        .conditions
        .iter()
        .map(|c| (c.type_, c.reason))
        .collect();
    assert!(
        reasons.contains(&(ConditionType::Ready, Reason::GatewayNotFound))
            && reasons.contains(&(ConditionType::RouteReady, Reason::GatewayNotFound)),
        "{reasons:?}"
    );
}

#[test]
fn a_fit_without_headroom_is_a_warning_but_the_summary_of_warnings_is_not() {
    let headroom = DesiredCondition::new(
        ConditionType::Degraded,
        true,
        Reason::FitWithoutHeadroom,
        "no headroom",
    );
    assert!(is_warning(&headroom));
    let summary = DesiredCondition::new(
        ConditionType::Degraded,
        true,
        Reason::NeedsAttention,
        "Ready: Unschedulable",
    );
    assert!(!is_warning(&summary));
    let cleared = DesiredCondition::new(ConditionType::Degraded, false, Reason::AsExpected, "");
    assert!(!is_warning(&cleared));
}
