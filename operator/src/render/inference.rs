//! InferenceService -> Deployment, Service, ScaledObject (only with triggers) and HTTPRoute (only
//! with `gateway`), plus the status facts (DESIGN.md section 3, InferenceService and Scaling).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ContainerPort, HTTPGetAction, PodTemplateSpec, Probe, Service, ServicePort, ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::gateway::{
    HTTPRoute, HttpBackendRef, HttpPathMatch, HttpRouteMatch, HttpRouteParentRef, HttpRouteRule,
    HttpRouteSpec,
};
use super::keda::{PAUSED_REPLICAS_ANNOTATION, ScaleTargetRef, ScaledObject, ScaledObjectSpec};
use super::meta::{LABEL_INFERENCE, Owner, child_meta, labels};
use super::pod::{DEFAULT_SERVICE_ACCOUNT, MainContainer, PodInputs, env_value, pod_spec};
use super::{RenderConfig, RenderError};
use crate::api::{Gateway, InferenceEffective, InferenceService, Intent};
use crate::capacity::{self, FitBudget};
use crate::names::{NameRule, child_name, label_value};

/// Container port when `container.port` is absent.
pub const DEFAULT_PORT: i32 = 8080;
/// Service port the route and clients use.
pub const SERVICE_PORT: i32 = 80;
/// Startup budget when `startupProbe.timeoutSeconds` is absent: 30 minutes to load a model.
pub const DEFAULT_STARTUP_SECONDS: i32 = 1800;
/// Startup probe period in seconds.
const STARTUP_PERIOD_SECONDS: i32 = 10;

/// The children of an InferenceService.
#[derive(Clone, Debug, PartialEq)]
pub struct InferenceChildren {
    /// The model server. `spec.replicas` is `None` when a ScaledObject owns the count.
    pub deployment: Deployment,
    /// ClusterIP Service on port 80.
    pub service: Service,
    /// Present only when `scaling.triggers` is non-empty.
    pub scaled_object: Option<ScaledObject>,
    /// Present only when `gateway` is set.
    pub http_route: Option<HTTPRoute>,
}

/// What the status should say, independent of the cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct InferenceFacts {
    /// `http://<first hostname><pathPrefix>` when routed with a hostname.
    pub url: Option<String>,
    /// The fit budget, when `gpu.fit` is given.
    pub budget: Option<FitBudget>,
    /// Effective defaults.
    pub effective: InferenceEffective,
    /// Fixed replica count applied to the Deployment (`None` when KEDA owns it).
    pub fixed_replicas: Option<i32>,
    /// Whether KEDA is paused (`intent: suspended` with a ScaledObject).
    pub paused: bool,
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
}

/// Children and facts.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderedInference {
    /// Desired children.
    pub children: InferenceChildren,
    /// Status facts.
    pub facts: InferenceFacts,
}

impl InferenceChildren {
    /// Every child as JSON, in apply order (Service, Deployment, ScaledObject, HTTPRoute).
    pub fn to_values(&self) -> Vec<serde_json::Value> {
        let mut out = vec![to_value(&self.service), to_value(&self.deployment)];
        out.extend(self.scaled_object.as_ref().map(to_value));
        out.extend(self.http_route.as_ref().map(to_value));
        out
    }
}

pub(crate) fn to_value<T: serde::Serialize>(t: &T) -> serde_json::Value {
    serde_json::to_value(t).expect("rendered objects always serialize")
}

/// `url` fact: `http://<first hostname><pathPrefix>` (`None` without `gateway` or hostnames).
pub fn route_url(isvc: &InferenceService) -> Option<String> {
    gateway_url(isvc.spec.gateway.as_ref()?)
}

/// `http://<first hostname><pathPrefix>` for a `gateway` block (path prefix default `/`); what
/// the provider shows as `url` at plan time.
pub fn gateway_url(gateway: &Gateway) -> Option<String> {
    let host = gateway.hostnames.as_ref()?.first()?;
    Some(format!(
        "http://{host}{}",
        gateway.path_prefix.as_deref().unwrap_or("/")
    ))
}

/// Renders an InferenceService. Errors: a fit too big for every class, a route without any
/// Gateway, reserved names.
pub fn render_inference(
    isvc: &InferenceService,
    config: &RenderConfig,
) -> Result<RenderedInference, RenderError> {
    let spec = &isvc.spec;
    let owner = Owner::of(isvc);
    let budget = match &spec.gpu {
        Some(g) => capacity::plan(g)?,
        None => None,
    };

    let intent = spec.intent.unwrap_or_default();
    let min = spec.replicas.as_ref().and_then(|r| r.min).unwrap_or(1);
    let max = spec
        .replicas
        .as_ref()
        .and_then(|r| r.max)
        .unwrap_or(min.max(1));
    let triggers = spec
        .scaling
        .as_ref()
        .and_then(|s| s.triggers.clone())
        .unwrap_or_default();
    let autoscaled = !triggers.is_empty();
    let fixed_replicas = match (autoscaled, intent) {
        (true, _) => None,
        (false, Intent::Suspended) => Some(0),
        (false, _) => Some(min.max(1)),
    };

    let selector = BTreeMap::from([(LABEL_INFERENCE.to_string(), label_value(&owner.name))]);
    let labels = labels(&owner, "inference", &selector);
    let workload_name = child_name(&owner.name, NameRule::Dns1123Label);
    let service_name = child_name(&owner.name, NameRule::Dns1035Label);

    let port = spec.container.port.unwrap_or(DEFAULT_PORT);
    let readiness_path = spec
        .container
        .readiness_path
        .clone()
        .unwrap_or_else(|| "/".to_string());
    let http_get = |path: String| HTTPGetAction {
        path: Some(path),
        port: IntOrString::String("http".to_string()),
        ..Default::default()
    };
    let startup = spec.container.startup_probe.as_ref();
    let startup_seconds = startup
        .and_then(|s| s.timeout_seconds)
        .unwrap_or(DEFAULT_STARTUP_SECONDS);
    let startup_path = startup
        .and_then(|s| s.path.clone())
        .unwrap_or_else(|| readiness_path.clone());

    let mut extra_env = vec![env_value("MODEL_FLEET_MODEL_NAME", spec.model.name.clone())];
    if let Some(rev) = &spec.model.revision {
        extra_env.push(env_value("MODEL_FLEET_MODEL_REVISION", rev.clone()));
    }
    if let Some(served) = &spec.model.served_name {
        extra_env.push(env_value("MODEL_FLEET_SERVED_MODEL_NAME", served.clone()));
    }
    extra_env.push(env_value("MODEL_FLEET_PORT", port.to_string()));

    let pod = pod_spec(PodInputs {
        main: MainContainer {
            image: &spec.container.image,
            command: spec.container.command.as_ref(),
            args: spec.container.args.as_ref(),
            env: spec.container.env.as_ref(),
            resources: spec.container.resources.as_ref(),
            ports: Some(vec![ContainerPort {
                name: Some("http".to_string()),
                container_port: port,
                protocol: Some("TCP".to_string()),
                ..Default::default()
            }]),
            readiness_probe: Some(Probe {
                http_get: Some(http_get(readiness_path.clone())),
                period_seconds: Some(10),
                failure_threshold: Some(3),
                ..Default::default()
            }),
            startup_probe: Some(Probe {
                http_get: Some(http_get(startup_path)),
                period_seconds: Some(STARTUP_PERIOD_SECONDS),
                failure_threshold: Some(
                    (startup_seconds + STARTUP_PERIOD_SECONDS - 1) / STARTUP_PERIOD_SECONDS,
                ),
                ..Default::default()
            }),
        },
        extra_env,
        init_containers: spec.init_containers.as_ref(),
        volumes: spec.volumes.as_ref(),
        extra_volumes: Vec::new(),
        gpu: spec.gpu.as_ref(),
        budget: budget.as_ref(),
        service_account_name: spec.service_account_name.as_ref(),
        automount_service_account_token: spec.automount_service_account_token,
        restart_policy: None,
        subdomain: None,
    })?;

    let deployment = Deployment {
        metadata: child_meta(&owner, workload_name.clone(), labels.clone()),
        spec: Some(DeploymentSpec {
            replicas: fixed_replicas,
            selector: LabelSelector {
                match_labels: Some(selector.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels.clone()),
                    ..Default::default()
                }),
                spec: Some(pod),
            },
            ..Default::default()
        }),
        status: None,
    };

    let service = Service {
        metadata: child_meta(&owner, service_name.clone(), labels.clone()),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_string()),
            selector: Some(selector.clone()),
            ports: Some(vec![ServicePort {
                name: Some("http".to_string()),
                port: SERVICE_PORT,
                target_port: Some(IntOrString::String("http".to_string())),
                protocol: Some("TCP".to_string()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    };

    let paused = autoscaled && intent == Intent::Suspended;
    let scaled_object = autoscaled.then(|| {
        let scaling = spec.scaling.clone().unwrap_or_default();
        let mut meta = child_meta(&owner, workload_name.clone(), labels.clone());
        if paused {
            meta.annotations = Some(BTreeMap::from([(
                PAUSED_REPLICAS_ANNOTATION.to_string(),
                "0".to_string(),
            )]));
        }
        let min_count = if intent == Intent::Active {
            min.max(1)
        } else {
            min
        };
        ScaledObject {
            metadata: meta,
            spec: ScaledObjectSpec {
                scale_target_ref: ScaleTargetRef {
                    api_version: "apps/v1".to_string(),
                    kind: "Deployment".to_string(),
                    name: workload_name.clone(),
                },
                polling_interval: scaling.polling_interval,
                cooldown_period: scaling.cooldown_period,
                initial_cooldown_period: scaling.initial_cooldown_period,
                idle_replica_count: spec.replicas.as_ref().and_then(|r| r.idle_replica_count),
                min_replica_count: min_count,
                max_replica_count: max.max(min_count),
                triggers: triggers.clone(),
            },
        }
    });

    let mut effective = InferenceEffective {
        intent: Some(intent),
        min_replicas: Some(min),
        max_replicas: Some(max),
        service_account_name: Some(
            spec.service_account_name
                .clone()
                .unwrap_or_else(|| DEFAULT_SERVICE_ACCOUNT.to_string()),
        ),
        shards: budget
            .as_ref()
            .map(|b| i32::try_from(b.input.shards).unwrap_or(i32::MAX)),
        ..Default::default()
    };

    let http_route = match &spec.gateway {
        None => None,
        Some(gw) => {
            let parent = match &gw.parent_ref {
                Some(p) => HttpRouteParentRef {
                    group: "gateway.networking.k8s.io".to_string(),
                    kind: "Gateway".to_string(),
                    name: p.name.clone(),
                    namespace: p
                        .namespace
                        .clone()
                        .or_else(|| owner.namespace.clone())
                        .unwrap_or_default(),
                    section_name: p.section_name.clone(),
                },
                None => {
                    let d = config
                        .default_gateway
                        .as_ref()
                        .ok_or(RenderError::NoGateway)?;
                    HttpRouteParentRef {
                        group: "gateway.networking.k8s.io".to_string(),
                        kind: "Gateway".to_string(),
                        name: d.name.clone(),
                        namespace: d.namespace.clone(),
                        section_name: None,
                    }
                }
            };
            let prefix = gw.path_prefix.clone().unwrap_or_else(|| "/".to_string());
            effective.gateway = Some(format!("{}/{}", parent.namespace, parent.name));
            effective.path_prefix = Some(prefix.clone());
            Some(HTTPRoute {
                metadata: child_meta(&owner, workload_name.clone(), labels.clone()),
                spec: HttpRouteSpec {
                    parent_refs: vec![parent],
                    hostnames: gw.hostnames.clone().unwrap_or_default(),
                    rules: vec![HttpRouteRule {
                        matches: vec![HttpRouteMatch {
                            path: HttpPathMatch {
                                type_: "PathPrefix".to_string(),
                                value: prefix,
                            },
                        }],
                        backend_refs: vec![HttpBackendRef {
                            name: service_name.clone(),
                            port: SERVICE_PORT,
                        }],
                    }],
                },
                status: None,
            })
        }
    };

    Ok(RenderedInference {
        children: InferenceChildren {
            deployment,
            service,
            scaled_object,
            http_route,
        },
        facts: InferenceFacts {
            url: route_url(isvc),
            budget,
            effective,
            fixed_replicas,
            paused,
        },
    })
}
