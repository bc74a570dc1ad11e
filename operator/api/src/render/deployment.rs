//! The model server's Deployment: the serving container with its port, probes and model environment, on the shared
//! pod template (DESIGN.md section 3, InferenceService; `spec.replicas` only when no ScaledObject owns it).

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{ContainerPort, EnvVar, HTTPGetAction, PodTemplateSpec, Probe};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::RenderError;
use super::inference::{InferenceFacts, Workload};
use super::pod::{MainContainer, PodInputs, env_value, pod_spec};
use crate::InferenceService;

/// Container port when `container.port` is absent.
pub const DEFAULT_PORT: i32 = 8080;
/// Startup budget in seconds when `startupProbe.timeoutSeconds` is absent: 30 minutes to load a model.
pub const DEFAULT_STARTUP_SECONDS: i32 = 1800;
/// Startup probe period in seconds.
const STARTUP_PERIOD_SECONDS: i32 = 10;
/// Name of the serving container's port (probes, the Service's target port).
pub(crate) const PORT_NAME: &str = "http";

/// The Deployment of `isvc`. Errors: reserved volume or container names.
pub(crate) fn deployment(
    isvc: &InferenceService,
    facts: &InferenceFacts,
    workload: &Workload,
) -> Result<Deployment, RenderError> {
    Ok(Deployment {
        metadata: workload.child_meta(),
        spec: Some(DeploymentSpec {
            replicas: facts.owned_replicas(),
            selector: LabelSelector {
                match_labels: Some(workload.selector.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(workload.labels.clone()),
                    ..Default::default()
                }),
                spec: Some(pod(isvc, facts)?),
            },
            ..Default::default()
        }),
        status: None,
    })
}

fn pod(
    isvc: &InferenceService,
    facts: &InferenceFacts,
) -> Result<k8s_openapi::api::core::v1::PodSpec, RenderError> {
    let spec = &isvc.spec;
    let port = spec.container.port.unwrap_or(DEFAULT_PORT);
    let (readiness_probe, startup_probe) = probes(isvc);
    pod_spec(PodInputs {
        main: MainContainer {
            image: &spec.container.image,
            command: spec.container.command.as_ref(),
            args: spec.container.args.as_ref(),
            env: spec.container.env.as_ref(),
            resources: spec.container.resources.as_ref(),
            ports: Some(vec![ContainerPort {
                name: Some(PORT_NAME.to_string()),
                container_port: port,
                protocol: Some("TCP".to_string()),
                ..Default::default()
            }]),
            readiness_probe: Some(readiness_probe),
            startup_probe: Some(startup_probe),
        },
        extra_env: model_env(isvc, port),
        init_containers: spec.init_containers.as_ref(),
        volumes: spec.volumes.as_ref(),
        extra_volumes: Vec::new(),
        gpu: spec.gpu.as_ref(),
        budget: facts.budget.as_ref(),
        service_account_name: spec.service_account_name.as_ref(),
        automount_service_account_token: spec.automount_service_account_token,
        pod_security: spec.pod_security.as_ref(),
        restart_policy: None,
        subdomain: None,
    })
}

/// `MODEL_FLEET_MODEL_NAME`, `_REVISION`, `_SERVED_MODEL_NAME` (when set) and `MODEL_FLEET_PORT`.
fn model_env(isvc: &InferenceService, port: i32) -> Vec<EnvVar> {
    let model = &isvc.spec.model;
    let mut env = vec![env_value("MODEL_FLEET_MODEL_NAME", model.name.clone())];
    if let Some(rev) = &model.revision {
        env.push(env_value("MODEL_FLEET_MODEL_REVISION", rev.clone()));
    }
    if let Some(served) = &model.served_name {
        env.push(env_value("MODEL_FLEET_SERVED_MODEL_NAME", served.clone()));
    }
    env.push(env_value("MODEL_FLEET_PORT", port.to_string()));
    env
}

/// The readiness probe on `readinessPath` (default `/`) and the startup probe that gives the model
/// `startupProbe.timeoutSeconds` (default [`DEFAULT_STARTUP_SECONDS`]) to load, both over HTTP on the named port.
fn probes(isvc: &InferenceService) -> (Probe, Probe) {
    let container = &isvc.spec.container;
    let readiness_path = container
        .readiness_path
        .clone()
        .unwrap_or_else(|| "/".to_string());
    let startup = container.startup_probe.as_ref();
    let startup_seconds = startup
        .and_then(|s| s.timeout_seconds)
        .unwrap_or(DEFAULT_STARTUP_SECONDS);
    let startup_path = startup
        .and_then(|s| s.path.clone())
        .unwrap_or_else(|| readiness_path.clone());
    let http_get = |path: String| HTTPGetAction {
        path: Some(path),
        port: IntOrString::String(PORT_NAME.to_string()),
        ..Default::default()
    };
    let readiness = Probe {
        http_get: Some(http_get(readiness_path)),
        period_seconds: Some(10),
        failure_threshold: Some(3),
        ..Default::default()
    };
    let startup = Probe {
        http_get: Some(http_get(startup_path)),
        period_seconds: Some(STARTUP_PERIOD_SECONDS),
        failure_threshold: Some(
            (startup_seconds + STARTUP_PERIOD_SECONDS - 1) / STARTUP_PERIOD_SECONDS,
        ),
        ..Default::default()
    };
    (readiness, startup)
}
