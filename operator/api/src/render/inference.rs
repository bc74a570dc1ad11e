//! InferenceService -> Deployment, Service, ScaledObject (only with triggers or `scaling.http`), HTTPRoute (only with
//! `gateway`) and, with `scaling.http`, the KEDA HTTP add-on's InterceptorRoute and ReferenceGrant, plus the status
//! facts (DESIGN.md section 3, InferenceService and Scaling). This module decides the facts (intent,
//! replica plan, budget, route parent) and assembles the children; each child is built by its own module.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::gateway::{HTTPRoute, HttpRouteParentRef, ReferenceGrant};
use super::http_add_on::InterceptorRoute;
use super::keda::ScaledObject;
use super::meta::{LABEL_INFERENCE, Owner, child_meta, labels};
use super::pod::DEFAULT_SERVICE_ACCOUNT;
use super::{RenderConfig, RenderError, deployment, route, scaled_object, service, wake};
use crate::capacity::{self, CapacityError, FitBudget};
use crate::names::{NameRule, child_name, label_value};
use crate::{Gateway, InferenceEffective, InferenceService, Intent, Trigger};

/// The children of an InferenceService.
#[derive(Clone, Debug, PartialEq)]
pub struct InferenceChildren {
    /// The model server. `spec.replicas` is `None` when a ScaledObject owns the count.
    pub deployment: Deployment,
    /// ClusterIP Service on port 80.
    pub service: Service,
    /// Present only when `scaling.triggers` is non-empty or `scaling.http` is given.
    pub scaled_object: Option<ScaledObject>,
    /// Present only when `gateway` is set.
    pub http_route: Option<HTTPRoute>,
    /// The KEDA HTTP add-on's route, only with `scaling.http`.
    pub interceptor_route: Option<InterceptorRoute>,
    /// With `scaling.http`, the ReferenceGrant in the add-on's namespace that admits this namespace's routes (shared
    /// by every such service of the namespace, so not owned by any: [`wake::reference_grant`]).
    pub reference_grant: Option<ReferenceGrant>,
}

impl InferenceChildren {
    /// Every child as JSON, in apply order (Service, Deployment, InterceptorRoute, ScaledObject, ReferenceGrant,
    /// HTTPRoute).
    pub fn to_values(&self) -> Vec<serde_json::Value> {
        let mut out = vec![to_value(&self.service), to_value(&self.deployment)];
        out.extend(self.interceptor_route.as_ref().map(to_value));
        out.extend(self.scaled_object.as_ref().map(to_value));
        out.extend(self.reference_grant.as_ref().map(to_value));
        out.extend(self.http_route.as_ref().map(to_value));
        out
    }
}

/// What the status should say, independent of the cluster: known for every spec, even one whose children cannot be
/// rendered.
#[derive(Clone, Debug, PartialEq)]
pub struct InferenceFacts {
    /// Effective intent (`automatic` when absent).
    pub intent: Intent,
    /// `http://<first hostname><pathPrefix>` when routed with a hostname that is not a wildcard ([`gateway_url`]).
    pub url: Option<String>,
    /// The fit budget, when `gpu.fit` is given and fits a class.
    pub budget: Option<FitBudget>,
    /// Effective defaults.
    pub effective: InferenceEffective,
    /// Fixed replica count (no triggers): `max(min, 1)`, or 0 when suspended; `None` when a ScaledObject exists.
    pub fixed_replicas: Option<i32>,
    /// Whether KEDA is paused (`intent: suspended` with a ScaledObject).
    pub paused: bool,
    /// With a ScaledObject, its `minReplicaCount`: the lowest count the autoscaler keeps (at least 1 while `active`);
    /// `None` without one.
    pub autoscaler_floor: Option<i32>,
    /// Whether the autoscaler takes the Deployment to 0 while no trigger is active although its floor is above 0:
    /// `replicas.idleReplicaCount: 0` with a ScaledObject, intent `automatic` (KEDA's idle count; never while
    /// `active`, which keeps a replica, and the ScaledObject then carries no `idleReplicaCount`).
    pub idle_to_zero: bool,
}

impl InferenceFacts {
    /// Smallest fitting capacity class, e.g. `80gi`.
    pub fn capacity_class(&self) -> Option<&'static str> {
        self.budget.as_ref().map(|b| b.class().name)
    }

    /// Per-GPU budget rounded up to whole GiB.
    pub fn per_gpu_memory_gib(&self) -> Option<i64> {
        self.budget.as_ref().map(FitBudget::per_gpu_memory_gib)
    }

    /// The `spec.replicas` the operator owns: the fixed count, or 0 while a ScaledObject is paused (a suspended
    /// service never starts a pod, KEDA or not); `None` when the autoscaler owns the count
    /// ([`super::replica_plan`] decides the hand-over).
    pub fn owned_replicas(&self) -> Option<i32> {
        self.fixed_replicas.or(self.paused.then_some(0))
    }

    /// Whether the autoscaler may legitimately hold the Deployment at 0 (`automatic` with a floor of 0).
    pub fn may_scale_to_zero(&self) -> bool {
        self.intent == Intent::Automatic && (self.autoscaler_floor == Some(0) || self.idle_to_zero)
    }
}

/// The facts, and the children or why they cannot be rendered.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderedInference {
    /// Status facts.
    pub facts: InferenceFacts,
    /// Desired children, or the refusal (a fit too big for every class, a route without any Gateway, reserved
    /// names).
    pub children: Result<InferenceChildren, RenderError>,
}

/// The identity every child shares: owner, labels and the child names (DESIGN.md section 3, "Names").
pub(crate) struct Workload {
    /// The InferenceService.
    pub owner: Owner,
    /// Labels of every child and pod.
    pub labels: BTreeMap<String, String>,
    /// The pod selector (`modelfleet.io/inference-service`).
    pub selector: BTreeMap<String, String>,
    /// Name of the Deployment, ScaledObject and HTTPRoute (DNS-1123 label).
    pub name: String,
    /// Name of the Service (DNS-1035 label: starts with a letter).
    pub service_name: String,
}

impl Workload {
    fn of(isvc: &InferenceService) -> Workload {
        let owner = Owner::of(isvc);
        let selector = BTreeMap::from([(LABEL_INFERENCE.to_string(), label_value(&owner.name))]);
        Workload {
            labels: labels(&owner, "inference", &selector),
            name: child_name(&owner.name, NameRule::Dns1123Label),
            service_name: child_name(&owner.name, NameRule::Dns1035Label),
            selector,
            owner,
        }
    }

    /// Metadata of a child named [`Workload::name`] (the Deployment, ScaledObject, HTTPRoute and InterceptorRoute):
    /// the owner reference and the common labels.
    pub(crate) fn child_meta(&self) -> ObjectMeta {
        child_meta(&self.owner, self.name.clone(), self.labels.clone())
    }
}

pub(crate) fn to_value<T: serde::Serialize>(t: &T) -> serde_json::Value {
    serde_json::to_value(t).expect("rendered objects always serialize")
}

/// `url` fact: [`gateway_url`] of the service's `gateway` (`None` without one).
pub fn route_url(isvc: &InferenceService) -> Option<String> {
    gateway_url(isvc.spec.gateway.as_ref()?)
}

/// `http://<first hostname><pathPrefix>` for a `gateway` block (path prefix default `/`); what the provider shows as
/// `url` at plan time. Wildcard hostnames (`*.example.com`) are skipped, since a client cannot send one: the first
/// exact hostname is used, and `None` when there is none.
pub fn gateway_url(gateway: &Gateway) -> Option<String> {
    let host = gateway
        .hostnames
        .as_ref()?
        .iter()
        .find(|h| !h.starts_with("*."))?;
    Some(format!(
        "http://{host}{}",
        gateway.path_prefix.as_deref().unwrap_or("/")
    ))
}

/// Renders an InferenceService: its facts always, its children unless the spec cannot be rendered.
pub fn render_inference(isvc: &InferenceService, config: &RenderConfig) -> RenderedInference {
    let budget = match &isvc.spec.gpu {
        Some(gpu) => capacity::plan(gpu),
        None => Ok(None),
    };
    let parent = isvc
        .spec
        .gateway
        .as_ref()
        .map(|gw| parent_ref(isvc, gw, config));
    let facts = facts(isvc, budget.clone(), parent.clone());
    let children = children(isvc, &facts, budget, parent, config);
    RenderedInference { facts, children }
}

fn children(
    isvc: &InferenceService,
    facts: &InferenceFacts,
    budget: Result<Option<FitBudget>, CapacityError>,
    parent: Option<Result<HttpRouteParentRef, RenderError>>,
    config: &RenderConfig,
) -> Result<InferenceChildren, RenderError> {
    budget?;
    let workload = Workload::of(isvc);
    let add_on = &config.http_add_on;
    let http_route = parent
        .transpose()?
        .map(|parent| route::http_route(isvc, &workload, parent, add_on));
    let http = wake::http_scaling(isvc);
    Ok(InferenceChildren {
        deployment: deployment::deployment(isvc, facts, &workload)?,
        service: service::service(&workload),
        scaled_object: scaled_object::scaled_object(isvc, facts, &workload, add_on),
        interceptor_route: http.map(|http| wake::interceptor_route(isvc, http, &workload)),
        reference_grant: http.map(|_| {
            wake::reference_grant(
                workload.owner.namespace.as_deref().unwrap_or_default(),
                add_on,
            )
        }),
        http_route,
    })
}

/// The triggers of the spec (empty without `scaling`).
pub(crate) fn triggers(isvc: &InferenceService) -> Vec<Trigger> {
    isvc.spec
        .scaling
        .as_ref()
        .and_then(|s| s.triggers.clone())
        .unwrap_or_default()
}

/// The route's parent Gateway: `gateway.parentRef` (namespace defaulting to the service's), else the operator's
/// `--default-gateway`.
fn parent_ref(
    isvc: &InferenceService,
    gateway: &Gateway,
    config: &RenderConfig,
) -> Result<HttpRouteParentRef, RenderError> {
    let parent = ParentKey::of(isvc, gateway, config).ok_or(RenderError::NoGateway)?;
    Ok(HttpRouteParentRef {
        group: "gateway.networking.k8s.io".to_string(),
        kind: "Gateway".to_string(),
        name: parent.name.to_owned(),
        namespace: parent.namespace.to_owned(),
        section_name: parent.section.map(str::to_owned),
    })
}

/// [`parent_ref`] borrowed from the service and the configuration: what the route-claim checks compare on every
/// reconcile and watch event without allocating ([`crate::routing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ParentKey<'a> {
    /// Gateway namespace.
    pub namespace: &'a str,
    /// Gateway name.
    pub name: &'a str,
    /// Listener (`sectionName`).
    pub section: Option<&'a str>,
}

impl<'a> ParentKey<'a> {
    /// The parent of `isvc`'s route (`gateway` is its `spec.gateway`); `None` without `parentRef` and without
    /// `--default-gateway`.
    pub(crate) fn of(
        isvc: &'a InferenceService,
        gateway: &'a Gateway,
        config: &'a RenderConfig,
    ) -> Option<Self> {
        Some(match &gateway.parent_ref {
            Some(p) => ParentKey {
                namespace: p
                    .namespace
                    .as_deref()
                    .or(isvc.metadata.namespace.as_deref())
                    .unwrap_or_default(),
                name: &p.name,
                section: p.section_name.as_deref(),
            },
            None => {
                let d = config.default_gateway.as_ref()?;
                ParentKey {
                    namespace: &d.namespace,
                    name: &d.name,
                    section: None,
                }
            }
        })
    }
}

/// The facts: effective intent and replica bounds, the fixed count or the autoscaler's ownership, the pause, the
/// budget, the URL and the effective route parent.
fn facts(
    isvc: &InferenceService,
    budget: Result<Option<FitBudget>, CapacityError>,
    parent: Option<Result<HttpRouteParentRef, RenderError>>,
) -> InferenceFacts {
    let spec = &isvc.spec;
    let budget = budget.ok().flatten();
    let intent = spec.intent.unwrap_or_default();
    let min = spec.replicas.as_ref().and_then(|r| r.min).unwrap_or(1);
    let max = spec
        .replicas
        .as_ref()
        .and_then(|r| r.max)
        .unwrap_or(min.max(1));
    let autoscaled = !triggers(isvc).is_empty() || wake::http_scaling(isvc).is_some();
    let fixed_replicas = match (autoscaled, intent) {
        (true, _) => None,
        (false, Intent::Suspended) => Some(0),
        (false, _) => Some(min.max(1)),
    };
    let parent = parent.and_then(Result::ok);
    let effective = InferenceEffective {
        intent: Some(intent),
        min_replicas: Some(min),
        max_replicas: Some(max),
        gateway: parent
            .as_ref()
            .map(|p| format!("{}/{}", p.namespace, p.name)),
        path_prefix: parent.as_ref().map(|_| {
            spec.gateway
                .as_ref()
                .and_then(|g| g.path_prefix.clone())
                .unwrap_or_else(|| "/".to_string())
        }),
        service_account_name: Some(
            spec.service_account_name
                .clone()
                .unwrap_or_else(|| DEFAULT_SERVICE_ACCOUNT.to_string()),
        ),
        shards: budget
            .as_ref()
            .map(|b| i32::try_from(b.input.shards).unwrap_or(i32::MAX)),
    };
    let floor = if intent == Intent::Active {
        min.max(1)
    } else {
        min
    };
    InferenceFacts {
        intent,
        url: route_url(isvc),
        budget,
        effective,
        fixed_replicas,
        paused: autoscaled && intent == Intent::Suspended,
        autoscaler_floor: autoscaled.then_some(floor),
        idle_to_zero: autoscaled
            && intent == Intent::Automatic
            && spec.replicas.as_ref().and_then(|r| r.idle_replica_count) == Some(0),
    }
}
