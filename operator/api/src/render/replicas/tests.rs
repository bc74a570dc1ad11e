//! Every transition between the scaling modes, and creation in each (issue 24 case 2): the replica count the
//! Deployment ends with when no autoscaler acts (KEDA slow or absent), applying the plans as the controller does.

use super::*;
use crate::InferenceService;
use crate::render::{RenderConfig, render_inference};
use serde_json::json;

/// The scaling modes a service can be in.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// No triggers, `replicas: {min: 2}`.
    Fixed,
    /// No triggers, `intent: suspended`.
    SuspendedFixed,
    /// A trigger, `intent: suspended`.
    SuspendedAutoscaled,
    /// A trigger, `replicas: {min: 0}`, `intent: automatic`.
    AutoscaledFromZero,
    /// A trigger, `replicas: {min: 1}`.
    AutoscaledFromOne,
    /// A trigger, `replicas: {min: 0}`, `intent: active` (floor 1).
    ActiveFromZero,
}

const MODES: [Mode; 6] = [
    Mode::Fixed,
    Mode::SuspendedFixed,
    Mode::SuspendedAutoscaled,
    Mode::AutoscaledFromZero,
    Mode::AutoscaledFromOne,
    Mode::ActiveFromZero,
];

fn facts(mode: Mode) -> InferenceFacts {
    let trigger = json!([{"type": "redis", "metadata": {"listName": "q", "listLength": "5"}}]);
    let spec = match mode {
        Mode::Fixed => json!({"replicas": {"min": 2, "max": 2}}),
        Mode::SuspendedFixed => json!({"intent": "suspended"}),
        Mode::SuspendedAutoscaled => {
            json!({"intent": "suspended", "scaling": {"triggers": trigger}})
        }
        Mode::AutoscaledFromZero => {
            json!({"replicas": {"min": 0, "max": 4}, "scaling": {"triggers": trigger}})
        }
        Mode::AutoscaledFromOne => {
            json!({"replicas": {"min": 1, "max": 4}, "scaling": {"triggers": trigger}})
        }
        Mode::ActiveFromZero => {
            json!({"intent": "active", "replicas": {"min": 0, "max": 3}, "scaling": {"triggers": trigger}})
        }
    };
    let mut spec = spec;
    spec["model"] = json!({"name": "m"});
    spec["container"] = json!({"image": "i"});
    let isvc: InferenceService =
        serde_json::from_value(json!({"apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceService", "metadata": {"name": "svc4", "namespace": "ml"}, "spec": spec}))
        .unwrap();
    render_inference(&isvc, &RenderConfig::default()).facts
}

/// The live Deployment after the controller carried out `plan` (no autoscaler acts).
fn carry_out(live: Option<LiveReplicas>, plan: ReplicaPlan) -> LiveReplicas {
    match plan {
        ReplicaPlan::Own(n) => LiveReplicas {
            replicas: n,
            owned_by_operator: true,
        },
        ReplicaPlan::HandOver(n) => LiveReplicas {
            replicas: n,
            owned_by_operator: false,
        },
        ReplicaPlan::Leave => LiveReplicas {
            owned_by_operator: false,
            ..live.expect("Leave needs a live Deployment")
        },
    }
}

/// Reconciles until the plan is `Own` of the same count or `Leave` (what the operator reaches in two reconciles).
fn converge(mode: Mode, mut live: Option<LiveReplicas>) -> LiveReplicas {
    for _ in 0..3 {
        let plan = replica_plan(&facts(mode), live);
        let next = carry_out(live, plan);
        if Some(next) == live {
            return next;
        }
        live = Some(next);
    }
    live.unwrap()
}

/// The count a mode settles at, coming from `previous` (`None`: created in this mode).
fn expected(mode: Mode, previous: Option<i32>) -> i32 {
    match mode {
        Mode::Fixed => 2,
        Mode::SuspendedFixed | Mode::SuspendedAutoscaled => 0,
        // The autoscaler's floor is 0: whatever ran before keeps running until KEDA scales it.
        Mode::AutoscaledFromZero => previous.unwrap_or(0),
        Mode::AutoscaledFromOne | Mode::ActiveFromZero => previous.unwrap_or(1).max(1),
    }
}

#[test]
fn creation_in_each_mode() {
    for mode in MODES {
        let live = converge(mode, None);
        assert_eq!(live.replicas, expected(mode, None), "created {mode:?}");
        // A suspended service is written with 0 from its first write: no pod ever starts.
        let first = replica_plan(&facts(mode), None);
        if matches!(mode, Mode::SuspendedFixed | Mode::SuspendedAutoscaled) {
            assert_eq!(first, ReplicaPlan::Own(0), "{mode:?}");
        }
    }
}

#[test]
fn every_transition_between_modes() {
    for from in MODES {
        for to in MODES {
            let before = converge(from, None);
            let after = converge(to, Some(before));
            assert_eq!(
                after.replicas,
                expected(to, Some(before.replicas)),
                "{from:?} ({} replicas) -> {to:?}",
                before.replicas
            );
            // Once settled, a resync changes nothing (zero writes).
            let again = replica_plan(&facts(to), Some(after));
            assert!(
                again == ReplicaPlan::Leave || again == ReplicaPlan::Own(after.replicas),
                "{from:?} -> {to:?}: {again:?}"
            );
        }
    }
}

#[test]
fn an_active_service_scaled_to_zero_by_someone_gets_its_floor_back() {
    let live = LiveReplicas {
        replicas: 0,
        owned_by_operator: false,
    };
    assert_eq!(
        replica_plan(&facts(Mode::ActiveFromZero), Some(live)),
        ReplicaPlan::HandOver(1)
    );
    assert_eq!(
        replica_plan(&facts(Mode::AutoscaledFromZero), Some(live)),
        ReplicaPlan::Leave
    );
    // O-04: the autoscaler's (or a user's) count above the floor is left alone.
    let scaled = LiveReplicas {
        replicas: 4,
        owned_by_operator: false,
    };
    assert_eq!(
        replica_plan(&facts(Mode::AutoscaledFromOne), Some(scaled)),
        ReplicaPlan::Leave
    );
}

/// A service with `replicas: {min: 1, max: 3, idleReplicaCount: 0}`, a trigger and `intent`.
fn idle_service(intent: &str) -> InferenceService {
    serde_json::from_value(json!({"apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceService", "metadata": {"name": "idle", "namespace": "ml"}, "spec": {
        "intent": intent, "model": {"name": "m"}, "container": {"image": "i"},
        "replicas": {"min": 1, "max": 3, "idleReplicaCount": 0},
        "scaling": {"triggers": [{"type": "redis", "metadata": {"listName": "q", "listLength": "5"}}]}}}))
    .unwrap()
}

/// A breaker's finding: with `replicas.idleReplicaCount: 0` KEDA takes an idle service to 0, and the operator, seeing
/// the count below `min`, handed `min` over again at every reconcile: a fight with the autoscaler (a pod started and
/// stopped at each polling interval, `Ready` flapping, a `ReplicasHandedOver` Event each time). KEDA's idle 0 is left
/// alone and is `ScaledToZero`; `active` keeps a replica, its ScaledObject without the idle count.
#[test]
fn keda_s_idle_count_of_zero_is_left_alone_while_automatic() {
    let render = |intent: &str| render_inference(&idle_service(intent), &RenderConfig::default());
    let idle = LiveReplicas {
        replicas: 0,
        owned_by_operator: false,
    };
    let automatic = render("automatic").facts;
    assert_eq!(replica_plan(&automatic, Some(idle)), ReplicaPlan::Leave);
    assert!(automatic.may_scale_to_zero());
    // Between 0 and min is no count KEDA keeps: raised to min.
    let mut min_two = automatic.clone();
    min_two.autoscaler_floor = Some(2);
    let one = LiveReplicas {
        replicas: 1,
        ..idle
    };
    assert_eq!(replica_plan(&min_two, Some(one)), ReplicaPlan::HandOver(2));
    let active = render("active").facts;
    assert_eq!(replica_plan(&active, Some(idle)), ReplicaPlan::HandOver(1));
    assert!(!active.may_scale_to_zero());
    let idle_count = |intent: &str| {
        let children = render(intent).children.unwrap();
        children.scaled_object.unwrap().spec.idle_replica_count
    };
    assert_eq!(idle_count("automatic"), Some(0));
    assert_eq!(idle_count("active"), None);
}
