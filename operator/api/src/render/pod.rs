//! The pod template shared by Deployments and Jobs: containers, env, volumes, GPU placement,
//! `/dev/shm`, ServiceAccount, security context (DESIGN.md section 3, "Shared pieces").

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMapKeySelector, ConfigMapVolumeSource, Container, ContainerPort,
    EmptyDirVolumeSource, EnvVar as KEnvVar, EnvVarSource, PersistentVolumeClaimVolumeSource,
    PodSecurityContext, PodSpec, Probe, ResourceRequirements, SeccompProfile, SecretKeySelector,
    SecretVolumeSource, SecurityContext, Volume as KVolume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::RenderError;
use crate::capacity::{FitBudget, placement};
use crate::{EnvVar, Gpu, InitContainer, PodSecurity, PodSecurityLevel, Resources, Volume};

/// Name of the main container.
pub(crate) const MAIN_CONTAINER: &str = "main";
/// Name of the shared-memory volume added for multi-GPU pods.
pub(crate) const SHM_VOLUME: &str = "dshm";

/// Where [`SHM_VOLUME`] is mounted in the main container of a multi-GPU pod.
const SHM_PATH: &str = "/dev/shm";
/// Prefix of the operator's dataset volumes.
pub(crate) const DATASET_VOLUME_PREFIX: &str = "dataset-";
/// Default ServiceAccount.
pub(crate) const DEFAULT_SERVICE_ACCOUNT: &str = "default";

/// The main container as the two kinds describe it.
pub(crate) struct MainContainer<'a> {
    pub image: &'a str,
    pub command: Option<&'a Vec<String>>,
    pub args: Option<&'a Vec<String>>,
    pub env: Option<&'a Vec<EnvVar>>,
    pub resources: Option<&'a Resources>,
    pub ports: Option<Vec<ContainerPort>>,
    pub readiness_probe: Option<Probe>,
    pub startup_probe: Option<Probe>,
}

/// Everything a pod template is made of.
pub(crate) struct PodInputs<'a> {
    pub main: MainContainer<'a>,
    /// Operator-injected env (model, datasets, rendezvous), appended after the user's.
    pub extra_env: Vec<KEnvVar>,
    pub init_containers: Option<&'a Vec<InitContainer>>,
    pub volumes: Option<&'a Vec<Volume>>,
    /// Operator-owned volumes with their mount (datasets), mounted into every container.
    pub extra_volumes: Vec<(KVolume, VolumeMount)>,
    pub gpu: Option<&'a Gpu>,
    pub budget: Option<&'a FitBudget>,
    pub service_account_name: Option<&'a String>,
    pub automount_service_account_token: Option<bool>,
    pub pod_security: Option<&'a PodSecurity>,
    pub restart_policy: Option<&'static str>,
    pub subdomain: Option<String>,
}

/// Converts API env vars (value / secretKeyRef / configMapKeyRef only).
pub(crate) fn env_vars(env: Option<&Vec<EnvVar>>) -> Vec<KEnvVar> {
    env.into_iter()
        .flatten()
        .map(|e| KEnvVar {
            name: e.name.clone(),
            value: e.value.clone(),
            value_from: if let Some(s) = &e.secret_key_ref {
                Some(EnvVarSource {
                    secret_key_ref: Some(SecretKeySelector {
                        name: s.name.clone(),
                        key: s.key.clone(),
                        optional: s.optional,
                    }),
                    ..Default::default()
                })
            } else {
                e.config_map_key_ref.as_ref().map(|c| EnvVarSource {
                    config_map_key_ref: Some(ConfigMapKeySelector {
                        name: c.name.clone(),
                        key: c.key.clone(),
                        optional: c.optional,
                    }),
                    ..Default::default()
                })
            },
        })
        .collect()
}

/// A plain `name=value` env var.
pub(crate) fn env_value(name: &str, value: impl Into<String>) -> KEnvVar {
    KEnvVar {
        name: name.to_string(),
        value: Some(value.into()),
        value_from: None,
    }
}

/// A container's `resources`: the spec's requests and limits, with `gpu_limits` (the GPU's resource at
/// `gpu.count`, empty for init containers and without GPUs) replacing the spec's own limit and request of it.
fn resources(
    r: Option<&Resources>,
    gpu_limits: &BTreeMap<String, Quantity>,
) -> Option<ResourceRequirements> {
    // `gpu` is the authority on the GPU's resource: its limit replaces any given here, and a request beside it (which
    // `render -f` and the provider refuse, and the API server takes) is dropped, as the limit implies it.
    let requests = r
        .and_then(|r| r.requests.clone())
        .map(|mut requests| {
            requests.retain(|name, _| !gpu_limits.contains_key(name));
            requests
        })
        .filter(|m| !m.is_empty());
    let mut limits = r.and_then(|r| r.limits.clone()).unwrap_or_default();
    limits.extend(gpu_limits.clone());
    let limits = (!limits.is_empty()).then_some(limits);
    (requests.is_some() || limits.is_some()).then(|| ResourceRequirements {
        requests,
        limits,
        ..Default::default()
    })
}

fn user_volume(v: &Volume) -> KVolume {
    KVolume {
        name: v.name.clone(),
        empty_dir: v.empty_dir.as_ref().map(|e| EmptyDirVolumeSource {
            medium: e.medium.map(|m| format!("{m:?}")),
            size_limit: e.size_limit.clone(),
        }),
        persistent_volume_claim: v.persistent_volume_claim.as_ref().map(|c| {
            PersistentVolumeClaimVolumeSource {
                claim_name: c.claim_name.clone(),
                read_only: v.read_only.filter(|r| *r),
            }
        }),
        config_map: v.config_map.as_ref().map(|c| ConfigMapVolumeSource {
            name: c.name.clone(),
            ..Default::default()
        }),
        secret: v.secret.as_ref().map(|s| SecretVolumeSource {
            secret_name: Some(s.secret_name.clone()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Whether `path` is `/dev/shm`, with or without a trailing slash (the kubelet mounts both at the same place).
fn at_shared_memory(path: &str) -> bool {
    path.trim_end_matches('/') == SHM_PATH
}

/// The spec's own writable shared memory for a multi-GPU pod: an `emptyDir` volume at `/dev/shm` (to give it a
/// `sizeLimit`, say), which takes the place of the operator's.
fn own_shared_memory(inputs: &PodInputs<'_>) -> bool {
    inputs.volumes.into_iter().flatten().any(|v| {
        at_shared_memory(&v.mount_path) && v.empty_dir.is_some() && v.read_only != Some(true)
    })
}

/// Refuses anything else mounted at `/dev/shm` of a multi-GPU pod (a PVC, ConfigMap or Secret volume, a read-only
/// `emptyDir`, a dataset): the pod needs writable shared memory there (NCCL), and a second mount at the path is one
/// the API server refuses.
fn check_shared_memory(inputs: &PodInputs<'_>) -> Result<(), RenderError> {
    if inputs.gpu.is_none_or(|g| g.count <= 1) || own_shared_memory(inputs) {
        return Ok(());
    }
    let volumes = inputs.volumes.into_iter().flatten();
    let taken = volumes
        .filter(|v| at_shared_memory(&v.mount_path))
        .map(|v| ("volumes", v.mount_path.as_str()))
        .chain(
            (inputs.extra_volumes.iter())
                .filter(|(_, m)| at_shared_memory(&m.mount_path))
                .map(|(_, m)| ("datasets", m.mount_path.as_str())),
        )
        .next();
    match taken {
        Some((field, path)) => Err(RenderError::Reserved(format!(
            "spec.{field}[].mountPath: Invalid value: {path:?}: a pod with more than one GPU gets writable shared \
             memory at /dev/shm (NCCL needs it): mount another path, or mount a writable emptyDir (medium: Memory) \
             there to size it yourself"
        ))),
        None => Ok(()),
    }
}

/// Refuses user names that collide with what the operator adds.
fn check_reserved(inputs: &PodInputs<'_>) -> Result<(), RenderError> {
    for v in inputs.volumes.into_iter().flatten() {
        if v.name == SHM_VOLUME || v.name.starts_with(DATASET_VOLUME_PREFIX) {
            return Err(RenderError::Reserved(format!(
                "spec.volumes[].name: Invalid value: {:?}: `{SHM_VOLUME}` and names starting `{DATASET_VOLUME_PREFIX}` are reserved for the operator, rename the volume",
                v.name
            )));
        }
    }
    // Objects admitted before the CRD reserved the `MODEL_FLEET_` prefix: a name the operator also sets would be a
    // duplicate key of the container's env, which server-side apply refuses.
    let init_env = inputs.init_containers.into_iter().flatten();
    let env = (inputs
        .main
        .env
        .into_iter()
        .flatten()
        .map(|e| ("container", e)))
    .chain(init_env.flat_map(|c| c.env.iter().flatten().map(|e| ("initContainers[]", e))));
    for (container, e) in env {
        if inputs.extra_env.iter().any(|x| x.name == e.name) {
            return Err(RenderError::Reserved(format!(
                "spec.{container}.env[].name: Invalid value: {:?}: the operator sets this variable, rename yours",
                e.name
            )));
        }
    }
    for c in inputs.init_containers.into_iter().flatten() {
        if c.name == MAIN_CONTAINER {
            return Err(RenderError::Reserved(format!(
                "spec.initContainers[].name: Invalid value: {MAIN_CONTAINER:?}: the main container is named `{MAIN_CONTAINER}`, rename the init container"
            )));
        }
    }
    Ok(())
}

/// The pod's volumes, the mounts every container gets, and the main container's extra `/dev/shm` mount for
/// multi-GPU pods (NCCL needs more shared memory than the container default). A writable `emptyDir` the spec mounts
/// at `/dev/shm` itself (with its own `sizeLimit`, say) is kept and the operator adds none; anything else there was
/// refused by [`check_shared_memory`].
struct Mounts {
    volumes: Vec<KVolume>,
    shared: Vec<VolumeMount>,
    main: Vec<VolumeMount>,
}

fn mounts(inputs: &PodInputs<'_>) -> Mounts {
    let user = inputs.volumes.into_iter().flatten();
    let mut volumes: Vec<KVolume> = user.clone().map(user_volume).collect();
    let mut shared: Vec<VolumeMount> = user
        .map(|v| VolumeMount {
            name: v.name.clone(),
            mount_path: v.mount_path.clone(),
            read_only: v.read_only,
            ..Default::default()
        })
        .collect();
    for (volume, mount) in &inputs.extra_volumes {
        volumes.push(volume.clone());
        shared.push(mount.clone());
    }
    let mut main = shared.clone();
    if inputs.gpu.is_some_and(|g| g.count > 1) && !own_shared_memory(inputs) {
        volumes.push(KVolume {
            name: SHM_VOLUME.to_string(),
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".to_string()),
                size_limit: None,
            }),
            ..Default::default()
        });
        main.push(VolumeMount {
            name: SHM_VOLUME.to_string(),
            mount_path: SHM_PATH.to_string(),
            ..Default::default()
        });
    }
    Mounts {
        volumes,
        shared,
        main,
    }
}

/// The pod's `securityContext` from `podSecurity`: the user and groups given (with `fsGroupChangePolicy:
/// OnRootMismatch` when `fsGroup` is), and under `restricted` the two
/// pod-level settings of the restricted Pod Security Standard (`runAsNonRoot: true`, `seccompProfile:
/// RuntimeDefault`). `None` when nothing is set (the `baseline` default: the image decides).
fn pod_security_context(security: Option<&PodSecurity>) -> Option<PodSecurityContext> {
    let security = security?;
    let restricted = security.level() == PodSecurityLevel::Restricted;
    let context = PodSecurityContext {
        run_as_user: security.run_as_user,
        run_as_group: security.run_as_group,
        fs_group: security.fs_group,
        // Without it the kubelet re-owns every file of every writable volume at each start (a model cache too).
        fs_group_change_policy: security.fs_group.map(|_| "OnRootMismatch".to_string()),
        run_as_non_root: restricted.then_some(true),
        seccomp_profile: restricted.then(|| SeccompProfile {
            type_: "RuntimeDefault".to_string(),
            ..Default::default()
        }),
        ..Default::default()
    };
    (context != PodSecurityContext::default()).then_some(context)
}

/// Every container's `securityContext` under `restricted`: the two container-level settings of the restricted Pod
/// Security Standard (`allowPrivilegeEscalation: false`, `capabilities.drop: [ALL]`); `None` otherwise.
fn container_security_context(security: Option<&PodSecurity>) -> Option<SecurityContext> {
    (security?.level() == PodSecurityLevel::Restricted).then(|| SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_string()]),
            ..Default::default()
        }),
        ..Default::default()
    })
}

fn main_container(
    inputs: &PodInputs<'_>,
    mounts: Vec<VolumeMount>,
    gpu_limits: &BTreeMap<String, Quantity>,
) -> Container {
    let main = &inputs.main;
    let mut env = env_vars(main.env);
    env.extend(inputs.extra_env.iter().cloned());
    Container {
        name: MAIN_CONTAINER.to_string(),
        image: Some(main.image.to_string()),
        command: main.command.cloned(),
        args: main.args.cloned(),
        env: (!env.is_empty()).then_some(env),
        ports: main.ports.clone(),
        resources: resources(main.resources, gpu_limits),
        readiness_probe: main.readiness_probe.clone(),
        startup_probe: main.startup_probe.clone(),
        volume_mounts: (!mounts.is_empty()).then_some(mounts),
        security_context: container_security_context(inputs.pod_security),
        ..Default::default()
    }
}

fn init_containers(inputs: &PodInputs<'_>, mounts: &[VolumeMount]) -> Vec<Container> {
    inputs
        .init_containers
        .into_iter()
        .flatten()
        .map(|c| {
            let mut env = env_vars(c.env.as_ref());
            env.extend(inputs.extra_env.iter().cloned());
            Container {
                name: c.name.clone(),
                image: Some(c.image.clone()),
                command: c.command.clone(),
                args: c.args.clone(),
                env: (!env.is_empty()).then_some(env),
                resources: resources(c.resources.as_ref(), &BTreeMap::new()),
                volume_mounts: (!mounts.is_empty()).then(|| mounts.to_vec()),
                security_context: container_security_context(inputs.pod_security),
                ..Default::default()
            }
        })
        .collect()
}

/// Builds the pod spec. Errors: user names that collide with what the operator adds.
pub(crate) fn pod_spec(inputs: PodInputs<'_>) -> Result<PodSpec, RenderError> {
    check_reserved(&inputs)?;
    check_shared_memory(&inputs)?;
    let gpu_placement = inputs
        .gpu
        .map(|g| placement(g, inputs.budget))
        .unwrap_or_default();
    let Mounts {
        volumes,
        shared,
        main,
    } = mounts(&inputs);
    let init_containers = init_containers(&inputs, &shared);
    let main = main_container(&inputs, main, &gpu_placement.limits);
    Ok(PodSpec {
        containers: vec![main],
        init_containers: (!init_containers.is_empty()).then_some(init_containers),
        volumes: (!volumes.is_empty()).then_some(volumes),
        service_account_name: Some(
            inputs
                .service_account_name
                .cloned()
                .unwrap_or_else(|| DEFAULT_SERVICE_ACCOUNT.to_string()),
        ),
        automount_service_account_token: Some(
            inputs.automount_service_account_token.unwrap_or(false),
        ),
        // Service links would inject `<SERVICE>_PORT` variables that some servers misread as config.
        enable_service_links: Some(false),
        security_context: pod_security_context(inputs.pod_security),
        restart_policy: inputs.restart_policy.map(str::to_string),
        subdomain: inputs.subdomain,
        affinity: gpu_placement.affinity,
        tolerations: (!gpu_placement.tolerations.is_empty()).then_some(gpu_placement.tolerations),
        node_selector: (!gpu_placement.node_selector.is_empty())
            .then_some(gpu_placement.node_selector),
        priority_class_name: inputs.gpu.and_then(|g| g.priority_class_name.clone()),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::render::{RenderConfig, RenderError, render_inference, render_training};

    /// The message of a `Reserved` refusal; panics on anything else.
    fn refusal<T>(children: Result<T, RenderError>) -> String {
        match children {
            Err(RenderError::Reserved(message)) => message,
            Err(other) => panic!("another refusal: {other}"),
            Ok(_) => panic!("rendered"),
        }
    }

    /// An object admitted before the CRD reserved `MODEL_FLEET_` names: a variable the operator also sets, in the
    /// main or an init container, is refused at render (`InvalidSpec`, naming it) rather than sent to an apply that
    /// fails at every retry; a name the operator does not set still renders.
    #[test]
    fn a_variable_the_operator_sets_is_refused_in_any_container() {
        let object = |kind: &str, spec: serde_json::Value| {
            json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": kind,
                "metadata": {"name": "m", "namespace": "ml", "uid": "u", "generation": 1}, "spec": spec})
        };
        let env = |name: &str| json!([{"name": name, "value": "1"}]);
        let service = |main: &str, init: &str| {
            let spec = json!({"model": {"name": "m"}, "container": {"image": "i", "env": env(main)},
                "initContainers": [{"name": "fetch", "image": "i", "env": env(init)}]});
            let isvc = serde_json::from_value(object("InferenceService", spec)).unwrap();
            render_inference(&isvc, &RenderConfig::default()).children
        };
        assert_eq!(
            refusal(service("MODEL_FLEET_PORT", "A")),
            "spec.container.env[].name: Invalid value: \"MODEL_FLEET_PORT\": the operator sets this variable, \
             rename yours"
        );
        assert!(
            refusal(service("A", "MODEL_FLEET_MODEL_NAME"))
                .starts_with("spec.initContainers[].env[]")
        );
        assert!(service("MODEL_FLEET_OTHER", "A").is_ok());
        let run = serde_json::from_value(object(
            "TrainingRun",
            json!({"container": {"image": "i", "env": env("MODEL_FLEET_DATASETS_JSON")},
                "datasets": [{"name": "d", "version": "1", "mountPath": "/d"}]}),
        ))
        .unwrap();
        let dataset = serde_json::from_value(json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "Dataset",
            "metadata": {"name": "d", "namespace": "ml"},
            "spec": {"version": "1", "source": {"uri": "s3://b/d"}, "allowedServiceAccounts": ["default"]}}))
        .unwrap();
        let rendered = render_training(&run, &[dataset], &RenderConfig::default());
        assert!(refusal(rendered.children).contains("\"MODEL_FLEET_DATASETS_JSON\""));
    }
}
