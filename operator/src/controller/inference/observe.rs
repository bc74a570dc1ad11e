//! Pure status derivation for an InferenceService: live children in, desired conditions out (DESIGN.md section 3,
//! condition table and scaling rules; case O-02: never Ready on stale data).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use crate::api::{InferenceServiceSpec, Intent};
use crate::controller::conditions::{ConditionStatus, DesiredCondition, reasons, types};

/// What is known about the HTTPRoute.
#[derive(Clone, Debug, PartialEq)]
pub enum RouteState<'a> {
    /// No `gateway` in the spec.
    NotRequested,
    /// `gateway` is set but the Gateway API CRDs are not installed.
    CrdMissing,
    /// `gateway` is set without `parentRef` and the operator has no `--default-gateway`.
    NoGateway,
    /// The parent Gateway `namespace/name` does not exist.
    GatewayNotFound(String),
    /// The route exists; `status` is its `.status` (absent until a Gateway controller writes it) and `parent` its
    /// Gateway's `(namespace, name)`.
    Applied {
        /// The route's `.status`, if any.
        status: Option<&'a Value>,
        /// `(namespace, name)` of the parent Gateway.
        parent: (&'a str, &'a str),
    },
}

/// What is known about autoscaling.
#[derive(Clone, Debug, PartialEq)]
pub enum ScalingState<'a> {
    /// No triggers: replicas fixed at this count.
    Fixed(i32),
    /// Triggers given but KEDA's CRDs are not installed.
    KedaMissing,
    /// The ScaledObject exists; `status` is its `.status` (absent until KEDA writes it).
    Applied {
        /// The ScaledObject's `.status`, if any.
        status: Option<&'a Value>,
        /// Whether it can reach zero with no trigger able to wake it ([`scale_from_zero_unreachable`]).
        unreachable_from_zero: bool,
    },
}

/// Whether the Deployment has finished rolling out the current template: its controller observed the current
/// generation and `updated == available == desired` with no old replicas left (case O-02).
pub fn rolled_out(deployment: &Deployment) -> bool {
    let desired = deployment
        .spec
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(1);
    let Some(status) = deployment.status.as_ref() else {
        return false;
    };
    let observed =
        status.observed_generation.unwrap_or(-1) >= deployment.metadata.generation.unwrap_or(0);
    observed
        && status.updated_replicas.unwrap_or(0) == desired
        && status.available_replicas.unwrap_or(0) == desired
        && status.replicas.unwrap_or(0) == desired
}

/// `spec.replicas` of the Deployment (Kubernetes defaults an absent value to 1).
pub fn desired_replicas(deployment: &Deployment) -> i32 {
    deployment
        .spec
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(1)
}

/// The scheduler's message of the first pod it could not place (`PodScheduled=False`, reason `Unschedulable`).
pub fn unschedulable_message(pods: &[Pod]) -> Option<String> {
    pods.iter().find_map(|pod| {
        pod.status
            .as_ref()?
            .conditions
            .as_ref()?
            .iter()
            .find(|c| {
                c.type_ == "PodScheduled"
                    && c.status == "False"
                    && c.reason.as_deref() == Some("Unschedulable")
            })
            .map(|c| {
                c.message
                    .clone()
                    .unwrap_or_else(|| "pods cannot be scheduled".to_owned())
            })
    })
}

/// DESIGN.md section 3: the ScaledObject can reach 0 replicas but every trigger's metric disappears with the pods
/// (cpu/memory, or a Prometheus query on the model's own `vllm:` metrics), so nothing would ever scale it back up.
pub fn scale_from_zero_unreachable(spec: &InferenceServiceSpec) -> bool {
    let intent = spec.intent.unwrap_or_default();
    let replicas = spec.replicas.clone().unwrap_or_default();
    let can_reach_zero = intent == Intent::Automatic
        && (replicas.min == Some(0) || replicas.idle_replica_count == Some(0));
    let triggers = spec
        .scaling
        .as_ref()
        .and_then(|s| s.triggers.as_deref())
        .unwrap_or_default();
    can_reach_zero
        && !triggers.is_empty()
        && triggers.iter().all(|t| match t.type_.as_str() {
            "cpu" | "memory" => true,
            "prometheus" => t.metadata.get("query").is_some_and(|q| q.contains("vllm:")),
            _ => false,
        })
}

/// `Ready`: True only when the Deployment rolled out the current generation with at least one replica.
/// Precedence when not ready: Suspended, DependencyMissing, ScaledToZero, Unschedulable, Progressing.
pub fn ready(
    intent: Intent,
    deployment: Option<&Deployment>,
    unschedulable: Option<&str>,
    missing: &[&str],
) -> DesiredCondition {
    let not_ready =
        |reason: &str, message: String| DesiredCondition::new(types::READY, false, reason, message);
    if intent == Intent::Suspended {
        return not_ready(reasons::SUSPENDED, "intent is suspended: 0 replicas".into());
    }
    if !missing.is_empty() {
        return not_ready(
            reasons::DEPENDENCY_MISSING,
            format!("not installed in the cluster: {}", missing.join(", ")),
        );
    }
    let Some(deployment) = deployment else {
        return not_ready(
            reasons::PROGRESSING,
            "the Deployment does not exist yet".into(),
        );
    };
    let desired = desired_replicas(deployment);
    if desired == 0 {
        return not_ready(
            reasons::SCALED_TO_ZERO,
            "the autoscaler scaled the Deployment to 0 replicas".into(),
        );
    }
    if rolled_out(deployment) {
        return DesiredCondition::new(
            types::READY,
            true,
            reasons::AS_EXPECTED,
            format!("{desired} of {desired} replicas updated and available"),
        );
    }
    if let Some(message) = unschedulable {
        return not_ready(reasons::UNSCHEDULABLE, message.to_owned());
    }
    let status = deployment.status.clone().unwrap_or_default();
    not_ready(
        reasons::PROGRESSING,
        format!(
            "rollout in progress: {} updated, {} available of {desired} desired",
            status.updated_replicas.unwrap_or(0),
            status.available_replicas.unwrap_or(0)
        ),
    )
}

/// `Progressing`: True while a rollout is under way, else False with reason `RolloutComplete`.
pub fn progressing(deployment: Option<&Deployment>) -> DesiredCondition {
    match deployment {
        Some(d) if rolled_out(d) || desired_replicas(d) == 0 => DesiredCondition::new(
            types::PROGRESSING,
            false,
            reasons::ROLLOUT_COMPLETE,
            "the Deployment is rolled out",
        ),
        _ => DesiredCondition::new(
            types::PROGRESSING,
            true,
            "RollingOut",
            "the Deployment is rolling out",
        ),
    }
}

/// `Suspended`: True exactly when intent is suspended.
pub fn suspended(intent: Intent) -> DesiredCondition {
    if intent == Intent::Suspended {
        DesiredCondition::new(
            types::SUSPENDED,
            true,
            reasons::SUSPENDED,
            "intent is suspended",
        )
    } else {
        DesiredCondition::new(
            types::SUSPENDED,
            false,
            "Running",
            format!("intent is {}", intent.as_str()),
        )
    }
}

/// `RouteReady` from what is known about the HTTPRoute; with a live route, from the `Accepted` condition its
/// Gateway controller wrote for our parent in `status.parents[]`.
pub fn route_ready(route: &RouteState<'_>) -> DesiredCondition {
    let not = |reason: &str, message: String| {
        DesiredCondition::new(types::ROUTE_READY, false, reason, message)
    };
    match route {
        RouteState::NotRequested => not(reasons::NOT_REQUESTED, "no gateway in the spec".into()),
        RouteState::CrdMissing => not(
            reasons::DEPENDENCY_MISSING,
            "the Gateway API CRDs are not installed: no HTTPRoute created".into(),
        ),
        RouteState::NoGateway => not(
            reasons::GATEWAY_NOT_FOUND,
            "no gateway.parentRef and the operator has no --default-gateway".into(),
        ),
        RouteState::GatewayNotFound(gateway) => not(
            reasons::GATEWAY_NOT_FOUND,
            format!("Gateway {gateway} does not exist"),
        ),
        RouteState::Applied { status, parent } => {
            let accepted = status.and_then(|s| parent_condition(s, *parent, "Accepted"));
            match accepted {
                None => not(
                    reasons::NOT_ACCEPTED,
                    format!(
                        "waiting for Gateway {}/{} to accept the route",
                        parent.0, parent.1
                    ),
                ),
                Some(c) if c.status == "True" => DesiredCondition::new(
                    types::ROUTE_READY,
                    true,
                    "Accepted",
                    format!("accepted by Gateway {}/{}", parent.0, parent.1),
                ),
                Some(c) => {
                    let reason = if c.reason.contains("Hostname") || c.reason.contains("Conflict") {
                        reasons::HOSTNAME_CONFLICT
                    } else {
                        reasons::NOT_ACCEPTED
                    };
                    not(
                        reason,
                        format!(
                            "Gateway {}/{}: {}: {}",
                            parent.0, parent.1, c.reason, c.message
                        ),
                    )
                }
            }
        }
    }
}

/// `ScalingReady` from what is known about the ScaledObject; with a live one, from the `Ready` condition KEDA
/// writes. `ScaleFromZeroUnreachable` is reported as False (a warning: the object still scales above zero).
pub fn scaling_ready(scaling: &ScalingState<'_>) -> DesiredCondition {
    match scaling {
        ScalingState::Fixed(replicas) => DesiredCondition::new(
            types::SCALING_READY,
            true,
            "FixedReplicas",
            format!("no triggers: replicas fixed at {replicas}"),
        ),
        ScalingState::KedaMissing => DesiredCondition::new(
            types::SCALING_READY,
            false,
            reasons::KEDA_MISSING,
            "the KEDA CRDs are not installed: no ScaledObject created",
        ),
        ScalingState::Applied {
            status,
            unreachable_from_zero,
        } => {
            let keda =
                status.and_then(|s| conditions_of(s).into_iter().find(|c| c.type_ == "Ready"));
            if let Some(c) = keda.as_ref().filter(|c| c.status == "False") {
                return DesiredCondition::new(
                    types::SCALING_READY,
                    false,
                    if c.reason.is_empty() {
                        "ScaledObjectNotReady"
                    } else {
                        &c.reason
                    },
                    c.message.clone(),
                );
            }
            if *unreachable_from_zero {
                return DesiredCondition::new(
                    types::SCALING_READY,
                    false,
                    reasons::SCALE_FROM_ZERO_UNREACHABLE,
                    "the ScaledObject can scale to 0 but every trigger's metric needs a running pod \
                     (cpu/memory or the model's own vllm: metrics): add a queue-style trigger or set replicas.min >= 1",
                );
            }
            let message = match keda {
                Some(_) => "the ScaledObject is ready",
                None => "the ScaledObject is applied",
            };
            DesiredCondition::new(types::SCALING_READY, true, reasons::AS_EXPECTED, message)
        }
    }
}

/// A condition read from JSON (`type`, `status`, `reason`, `message`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct JsonCondition {
    type_: String,
    status: String,
    reason: String,
    message: String,
}

fn conditions_of(value: &Value) -> Vec<JsonCondition> {
    let text = |c: &Value, key: &str| {
        c.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    value
        .get("conditions")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|c| JsonCondition {
                    type_: text(c, "type"),
                    status: text(c, "status"),
                    reason: text(c, "reason"),
                    message: text(c, "message"),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn parent_condition(status: &Value, parent: (&str, &str), type_: &str) -> Option<JsonCondition> {
    status.get("parents")?.as_array()?.iter().find_map(|entry| {
        let reference = entry.get("parentRef")?;
        let name = reference.get("name").and_then(Value::as_str)?;
        let namespace = reference
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or(parent.0);
        if (namespace, name) != parent {
            return None;
        }
        conditions_of(entry).into_iter().find(|c| c.type_ == type_)
    })
}

/// Whether the desired condition is bad news a user should see as a Warning Event.
pub fn is_warning(condition: &DesiredCondition) -> bool {
    condition.status == ConditionStatus::False
        && matches!(
            condition.reason.as_str(),
            reasons::UNSCHEDULABLE
                | reasons::RECONCILE_ERROR
                | reasons::DEPENDENCY_MISSING
                | reasons::GATEWAY_NOT_FOUND
                | reasons::HOSTNAME_CONFLICT
                | reasons::KEDA_MISSING
                | reasons::SCALE_FROM_ZERO_UNREACHABLE
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Replicas, Scaling, Trigger};
    use k8s_openapi::api::apps::v1::{DeploymentSpec, DeploymentStatus};
    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};
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

    #[test]
    fn ready_only_on_current_generation_with_all_replicas_updated_and_available() {
        let ok = deployment(2, 2, 2, 2, 2, 2);
        assert!(rolled_out(&ok));
        let c = ready(Intent::Automatic, Some(&ok), None, &[]);
        assert_eq!(
            (c.status, c.reason.as_str()),
            (ConditionStatus::True, "AsExpected")
        );
        // Stale: the Deployment controller has not seen generation 3 yet (case O-02).
        let stale = deployment(3, 2, 2, 2, 2, 2);
        assert!(!rolled_out(&stale));
        assert_eq!(
            ready(Intent::Automatic, Some(&stale), None, &[]).reason,
            "Progressing"
        );
        // Old replicas still running.
        assert!(!rolled_out(&deployment(2, 2, 2, 2, 2, 3)));
        assert!(!rolled_out(&deployment(2, 2, 2, 1, 2, 2)));
        assert!(!rolled_out(&deployment(2, 2, 2, 2, 1, 2)));
        assert_eq!(
            ready(Intent::Automatic, None, None, &[]).reason,
            "Progressing"
        );
    }

    #[test]
    fn not_ready_reasons_follow_precedence() {
        let rolling = deployment(2, 1, 2, 0, 0, 1);
        assert_eq!(
            ready(Intent::Automatic, Some(&rolling), Some("0/3 nodes"), &[]).reason,
            "Unschedulable"
        );
        assert_eq!(
            ready(Intent::Automatic, Some(&rolling), None, &["KEDA"]).reason,
            "DependencyMissing"
        );
        assert_eq!(
            ready(Intent::Suspended, Some(&rolling), None, &["KEDA"]).reason,
            "Suspended"
        );
        let zero = deployment(2, 0, 2, 0, 0, 0);
        assert_eq!(
            ready(Intent::Automatic, Some(&zero), None, &[]).reason,
            "ScaledToZero"
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
        assert_eq!(
            progressing(Some(&deployment(1, 1, 1, 1, 1, 1))).reason,
            "RolloutComplete"
        );
        assert_eq!(suspended(Intent::Suspended).status, ConditionStatus::True);
        assert_eq!(suspended(Intent::Active).status, ConditionStatus::False);
    }

    #[test]
    fn finds_unschedulable_pods() {
        let pod = |reason: &str| Pod {
            status: Some(PodStatus {
                conditions: Some(vec![PodCondition {
                    type_: "PodScheduled".into(),
                    status: "False".into(),
                    reason: Some(reason.into()),
                    message: Some("0/4 nodes are available".into()),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            unschedulable_message(&[Pod::default(), pod("Unschedulable")]).as_deref(),
            Some("0/4 nodes are available")
        );
        assert_eq!(unschedulable_message(&[pod("SchedulingGated")]), None);
    }

    #[test]
    fn route_ready_reads_the_gateway_status_for_our_parent() {
        let parent = ("gateway-system", "shared");
        let status = json!({"parents": [
            {"parentRef": {"name": "other", "namespace": "gateway-system"},
             "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted"}]},
            {"parentRef": {"name": "shared", "namespace": "gateway-system"},
             "conditions": [{"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners", "message": "no"}]}
        ]});
        let c = route_ready(&RouteState::Applied {
            status: Some(&status),
            parent,
        });
        assert_eq!(
            (c.status, c.reason.as_str()),
            (ConditionStatus::False, "NotAccepted")
        );
        let conflict = json!({"parents": [{"parentRef": {"name": "shared", "namespace": "gateway-system"},
            "conditions": [{"type": "Accepted", "status": "False", "reason": "NoMatchingListenerHostname"}]}]});
        assert_eq!(
            route_ready(&RouteState::Applied {
                status: Some(&conflict),
                parent
            })
            .reason,
            "HostnameConflict"
        );
        let accepted = json!({"parents": [{"parentRef": {"name": "shared", "namespace": "gateway-system"},
            "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted"}]}]});
        assert_eq!(
            route_ready(&RouteState::Applied {
                status: Some(&accepted),
                parent
            })
            .status,
            ConditionStatus::True
        );
        assert_eq!(
            route_ready(&RouteState::Applied {
                status: None,
                parent
            })
            .reason,
            "NotAccepted"
        );
        assert_eq!(
            route_ready(&RouteState::NotRequested).reason,
            "NotRequested"
        );
        assert_eq!(
            route_ready(&RouteState::GatewayNotFound("a/b".into())).reason,
            "GatewayNotFound"
        );
        assert_eq!(
            route_ready(&RouteState::CrdMissing).reason,
            "DependencyMissing"
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
        assert_eq!(
            scaling_ready(&ScalingState::Fixed(2)).status,
            ConditionStatus::True
        );
        assert_eq!(
            scaling_ready(&ScalingState::KedaMissing).reason,
            "KedaMissing"
        );
        let failed = json!({"conditions": [{"type": "Ready", "status": "False", "reason": "ScaledObjectCheckFailed", "message": "bad"}]});
        let c = scaling_ready(&ScalingState::Applied {
            status: Some(&failed),
            unreachable_from_zero: false,
        });
        assert_eq!(
            (c.status, c.reason.as_str()),
            (ConditionStatus::False, "ScaledObjectCheckFailed")
        );
        let c = scaling_ready(&ScalingState::Applied {
            status: None,
            unreachable_from_zero: true,
        });
        assert_eq!(c.reason, "ScaleFromZeroUnreachable");
        assert!(is_warning(&c));
        let c = scaling_ready(&ScalingState::Applied {
            status: None,
            unreachable_from_zero: false,
        });
        assert_eq!(c.status, ConditionStatus::True);
    }
}
