//! observe: what the children report that apply did not return (pods for scheduling, the route's Gateway when the
//! route is not accepted), and the pure status module's view of it all.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use model_fleet_api::InferenceService;
use model_fleet_api::names::label_value;
use model_fleet_api::render::{InferenceChildren, InferenceFacts, LABEL_INFERENCE};
use model_fleet_api::status::inference::{self as status, Observed, RouteState, ScalingState};
use model_fleet_api::status::pods;

use super::Applied;
use crate::controller::context::Context;
use crate::controller::discovery::Dependencies;
use crate::controller::error::{Error, Result};
use crate::controller::reconcile::Owner;

/// What the observe step read besides the applied children: the scheduler's complaint, missing APIs, the route's
/// Gateway when it is missing.
#[derive(Debug)]
pub(super) struct Observations {
    unschedulable: Option<String>,
    stalled: Option<String>,
    missing: Vec<&'static str>,
    gateway_not_found: Option<String>,
    unreachable_from_zero: Option<String>,
    fixed_replicas: Option<i32>,
    paused: bool,
    may_scale_to_zero: bool,
    route_parent: Option<(String, String)>,
    wants_scaled_object: bool,
}

impl Observations {
    /// The pure status module's view of the live children.
    pub(super) fn view<'a>(&'a self, applied: &'a Applied) -> Observed<'a> {
        let route = match (
            &self.route_parent,
            &self.gateway_not_found,
            &applied.conflict,
        ) {
            (None, _, _) if self.missing.iter().any(|m| m.starts_with("Gateway")) => {
                RouteState::CrdMissing
            }
            (None, _, _) => RouteState::NotRequested,
            (Some(_), _, Some(conflict)) => RouteState::Conflict(conflict),
            (Some(_), Some(gateway), None) => RouteState::GatewayNotFound(gateway.clone()),
            (Some((namespace, name)), None, None) => RouteState::Applied {
                status: applied
                    .http_route
                    .as_ref()
                    .and_then(|r| r.data.get("status")),
                generation: applied
                    .http_route
                    .as_ref()
                    .and_then(|r| r.metadata.generation),
                parent: (namespace, name),
            },
        };
        let scaling = match (self.wants_scaled_object, &applied.scaled_object) {
            (false, _) => ScalingState::Fixed(self.fixed_replicas.unwrap_or(0)),
            (true, None) => ScalingState::KedaMissing,
            (true, Some(live)) => ScalingState::Applied {
                status: live.data.get("status"),
                unreachable_from_zero: self.unreachable_from_zero.clone(),
                paused_by_intent: self.paused,
                pause_annotated: status::pause_annotated(live.metadata.annotations.as_ref()),
            },
        };
        Observed {
            deployment: applied.deployment.as_ref(),
            unschedulable: self.unschedulable.as_deref(),
            stalled: self.stalled.as_deref(),
            missing: self.missing.clone(),
            route,
            scaling,
            may_scale_to_zero: self.may_scale_to_zero,
        }
    }
}

/// observe: read what the children report that apply did not return (pods for scheduling, the Gateway when a route
/// is not accepted).
pub(super) async fn observe_children(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
    children: &InferenceChildren,
    facts: &InferenceFacts,
    applied: &Applied,
    deps: Dependencies,
) -> Result<Observations> {
    let (unschedulable, stalled) = match &applied.deployment {
        Some(d) if status::needs_pod_scan(d, applied.deployment_created) => {
            let pods = pods_of(ctx, owner).await?;
            (
                pods::unschedulable_message(&pods),
                pods::stalled_pod_message(&pods),
            )
        }
        _ => (None, None),
    };
    let mut missing = Vec::new();
    if children.scaled_object.is_some() && !deps.keda {
        missing.push("KEDA (keda.sh/v1alpha1 ScaledObject)");
    }
    if children.http_route.is_some() && !deps.gateway_api {
        missing.push("Gateway API (gateway.networking.k8s.io/v1 HTTPRoute)");
    }
    if children.interceptor_route.is_some() && !deps.http_add_on {
        missing.push(if ctx.config.http_add_on_enabled {
            "the KEDA HTTP add-on (CRD http.keda.sh/v1beta1 InterceptorRoute not installed)"
        } else {
            "the KEDA HTTP add-on (disabled in this operator by --http-add-on=disabled: install the chart \
             with httpAddOn.enabled=true)"
        });
    }
    let route_parent = children
        .http_route
        .as_ref()
        .filter(|_| deps.gateway_api)
        .and_then(|r| r.spec.parent_refs.first())
        .map(|p| (p.namespace.clone(), p.name.clone()));
    let mut observations = Observations {
        unschedulable,
        stalled,
        missing,
        gateway_not_found: None,
        unreachable_from_zero: status::scale_from_zero_warning(&isvc.spec),
        fixed_replicas: facts.fixed_replicas,
        paused: facts.paused,
        may_scale_to_zero: facts.may_scale_to_zero(),
        route_parent,
        wants_scaled_object: children.scaled_object.is_some(),
    };
    observations.gateway_not_found = missing_gateway(ctx, &observations, applied).await?;
    Ok(observations)
}

/// When the route is not accepted: `namespace/name` of its Gateway if that Gateway does not exist (a read, never a
/// write), so the status says `GatewayNotFound` rather than waiting.
async fn missing_gateway(
    ctx: &Context,
    observations: &Observations,
    applied: &Applied,
) -> Result<Option<String>> {
    let Some((namespace, name)) = &observations.route_parent else {
        return Ok(None);
    };
    if applied.conflict.is_some() {
        return Ok(None);
    }
    let accepted = status::route_ready(&observations.view(applied).route).is_true();
    if accepted {
        return Ok(None);
    }
    let gateways: Api<DynamicObject> =
        Api::namespaced_with(ctx.client.clone(), namespace, &gateway_resource());
    let found = gateways
        .get_opt(name)
        .await
        .map_err(|e| Error::fetch(format!("Gateway {namespace}/{name}"), e))?;
    Ok(found.is_none().then(|| format!("{namespace}/{name}")))
}

/// The pods of the InferenceService (by its label), for the scheduler's and the kubelet's complaints.
async fn pods_of(ctx: &Context, owner: &Owner) -> Result<Vec<Pod>> {
    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), &owner.namespace);
    let selector = format!("{LABEL_INFERENCE}={}", label_value(&owner.name));
    let list = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::fetch(format!("pods of {}/{}", owner.namespace, owner.name), e))?;
    Ok(list.items)
}

fn gateway_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "Gateway"),
        "gateways",
    )
}
