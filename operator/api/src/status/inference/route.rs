//! `RouteReady`: what the Gateway said about the HTTPRoute, for the route's current generation only.

use serde_json::Value;

use crate::conditions::{ConditionType, DesiredCondition, Reason};
use crate::status::json::{JsonCondition, parent_condition};

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
    /// Another InferenceService holds the hostname and path ([`crate::routing::conflict`]); no HTTPRoute exists.
    Conflict(&'a crate::routing::Conflict),
    /// The route exists; `status` is its `.status` (absent until a Gateway controller writes it), `generation` its
    /// `metadata.generation` and `parent` its Gateway's `(namespace, name)`.
    Applied {
        /// The route's `.status`, if any.
        status: Option<&'a Value>,
        /// The route's `metadata.generation`: only a Gateway condition for this generation describes the current
        /// spec (gateway-api#5115).
        generation: Option<i64>,
        /// `(namespace, name)` of the parent Gateway.
        parent: (&'a str, &'a str),
    },
}

/// `RouteReady` from what is known about the HTTPRoute; with a live route, from the `Accepted` condition its Gateway
/// controller wrote for our parent in `status.parents[]`.
pub fn route_ready(route: &RouteState<'_>) -> DesiredCondition {
    let not = |reason: Reason, message: String| {
        DesiredCondition::new(ConditionType::RouteReady, false, reason, message)
    };
    match route {
        RouteState::NotRequested => not(Reason::NotRequested, "no gateway in the spec".into()),
        RouteState::CrdMissing => not(
            Reason::DependencyMissing,
            "the Gateway API CRDs are not installed: no HTTPRoute created".into(),
        ),
        RouteState::NoGateway => not(
            Reason::GatewayNotFound,
            "no gateway.parentRef and the operator has no --default-gateway".into(),
        ),
        RouteState::GatewayNotFound(gateway) => not(
            Reason::GatewayNotFound,
            format!("Gateway {gateway} does not exist"),
        ),
        RouteState::Conflict(conflict) => not(Reason::HostnameConflict, conflict.to_string()),
        RouteState::Applied {
            status,
            generation,
            parent,
        } => {
            // A condition written for an older generation says nothing about the current spec: wait for one that
            // describes it (a Gateway controller sets observedGeneration on every condition it writes).
            let accepted = status
                .and_then(|s| parent_condition(s, *parent, "Accepted"))
                .filter(|c| generation.is_none() || c.observed_generation == *generation);
            accepted_route(accepted.as_ref(), *parent)
        }
    }
}

fn accepted_route(accepted: Option<&JsonCondition>, parent: (&str, &str)) -> DesiredCondition {
    let (namespace, name) = parent;
    let not = |reason: Reason, message: String| {
        DesiredCondition::new(ConditionType::RouteReady, false, reason, message)
    };
    match accepted {
        None => not(
            Reason::NotAccepted,
            format!("waiting for Gateway {namespace}/{name} to accept the route"),
        ),
        Some(c) if c.status == "True" => DesiredCondition::new(
            ConditionType::RouteReady,
            true,
            Reason::Accepted,
            format!("accepted by Gateway {namespace}/{name}"),
        ),
        // Gateway API's initial condition (`Unknown`, reason `Pending`) is no refusal yet.
        Some(c) if c.status != "False" || c.reason == "Pending" => not(
            Reason::NotAccepted,
            format!("waiting for Gateway {namespace}/{name} to accept the route"),
        ),
        // A Gateway's refusal (`NotAllowedByListeners`, `NoMatchingListenerHostname`, ...) is about its listeners,
        // not about another service holding the hostname (`HostnameConflict` is that, and comes from the claims): a
        // hunt saw `NoMatchingListenerHostname` reported as a conflict.
        Some(c) => not(
            Reason::GatewayRefused,
            format!("Gateway {namespace}/{name}: {}: {}", c.reason, c.message),
        ),
    }
}
