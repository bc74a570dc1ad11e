//! A TrainingRun's batch/v1 Job and, for Indexed runs of more than one pod, its headless Service (DESIGN.md
//! section 3, TrainingRun): datasets mounted read-only and described in [`DATASETS_ENV`], node disruptions not
//! counted against `retries`, and the operator's built-in default environment.

use k8s_openapi::api::batch::v1::{
    Job, JobSpec, PodFailurePolicy, PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{
    EnvVar, PersistentVolumeClaimVolumeSource, PodSpec, PodTemplateSpec, Service, ServiceSpec,
    Volume as KVolume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;

use super::RenderError;
use super::datasets::ResolvedDataset;
use super::meta::child_meta;
use super::pod::{DATASET_VOLUME_PREFIX, MainContainer, PodInputs, env_value, pod_spec};
use super::training::{Run, TrainingFacts};

/// Env var carrying the datasets as JSON: `[{name, version, uri, splits, mountPath}]`.
pub const DATASETS_ENV: &str = "MODEL_FLEET_DATASETS_JSON";

/// The most bytes one environment entry (`NAME=value` and its terminating NUL) may hold: Linux's `MAX_ARG_STRLEN`
/// (32 pages of 4 KiB, `include/uapi/linux/binfmts.h`), beyond which `execve` fails with `E2BIG` and the container
/// never starts.
pub const MAX_ENV_ENTRY_BYTES: usize = 32 * 4096;

/// The Job. `default_env` is added to every container that does not set the name itself.
pub(crate) fn job(
    run: &Run<'_>,
    facts: &TrainingFacts,
    datasets: &[ResolvedDataset<'_>],
    default_env: &[(String, String)],
) -> Result<Job, RenderError> {
    let spec = &run.run.spec;
    let mut pod = pod(run, facts, datasets)?;
    inject_default_env(&mut pod, default_env);
    let job = Job {
        metadata: child_meta(&run.owner, facts.job_name.clone(), run.labels.clone()),
        spec: Some(JobSpec {
            backoff_limit: spec.retries,
            active_deadline_seconds: spec.deadline_seconds,
            ttl_seconds_after_finished: spec.ttl_seconds_after_finished,
            parallelism: spec.parallelism,
            completions: spec.completions,
            completion_mode: spec.completion_mode.map(|m| format!("{m:?}")),
            suspend: Some(facts.suspend),
            pod_failure_policy: Some(disruptions_do_not_count()),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(run.labels.clone()),
                    ..Default::default()
                }),
                spec: Some(pod),
            },
            ..Default::default()
        }),
        status: None,
    };
    check_stored_size(&job, datasets)?;
    Ok(job)
}

/// The most bytes of one object the API server stores: etcd's default request limit (`--max-request-bytes`,
/// 1.5 MiB), measured here on the object's JSON, which is no smaller than the protobuf the API server writes.
pub const MAX_STORED_OBJECT_BYTES: usize = 1536 * 1024;

/// Refuses a Job the API server could not store ([`MAX_STORED_OBJECT_BYTES`]). The run itself was stored, so only the
/// copies of [`DATASETS_ENV`] (one per container, each up to [`MAX_ENV_ENTRY_BYTES`]) can make its Job larger.
fn check_stored_size(job: &Job, datasets: &[ResolvedDataset<'_>]) -> Result<(), RenderError> {
    if datasets.is_empty() {
        return Ok(());
    }
    let size = serde_json::to_vec(job).map_or(0, |json| json.len());
    if size <= MAX_STORED_OBJECT_BYTES {
        return Ok(());
    }
    let containers = job
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .map_or(1, |pod| {
            pod.containers.len() + pod.init_containers.as_ref().map_or(0, Vec::len)
        });
    Err(RenderError::DatasetsTooLarge(format!(
        "spec.datasets: the Job would be {size} bytes, over the {MAX_STORED_OBJECT_BYTES} bytes the API server stores \
         in one object (etcd's default request limit), as the datasets' description ({DATASETS_ENV}) is copied into \
         each of its {containers} containers: read fewer Datasets (or Datasets with fewer splits or shorter URIs), or \
         use fewer init containers"
    )))
}

/// Node drains and preemption (`DisruptionTarget`) do not count against `retries`.
fn disruptions_do_not_count() -> PodFailurePolicy {
    PodFailurePolicy {
        rules: vec![PodFailurePolicyRule {
            action: "Ignore".to_string(),
            on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                type_: "DisruptionTarget".to_string(),
                status: Some("True".to_string()),
            }]),
            on_exit_codes: None,
        }],
    }
}

fn pod(
    run: &Run<'_>,
    facts: &TrainingFacts,
    datasets: &[ResolvedDataset<'_>],
) -> Result<PodSpec, RenderError> {
    let spec = &run.run.spec;
    let mut extra_env = dataset_env(datasets)?;
    if let Some(svc) = &run.headless_name {
        extra_env.push(env_value("MODEL_FLEET_HEADLESS_SERVICE", svc.clone()));
        extra_env.push(env_value(
            "MODEL_FLEET_LEADER_HOST",
            format!("{}-0.{svc}", facts.job_name),
        ));
        extra_env.push(env_value("MODEL_FLEET_WORLD_PODS", run.pods.to_string()));
    }
    pod_spec(PodInputs {
        main: MainContainer {
            image: &spec.container.image,
            command: spec.container.command.as_ref(),
            args: spec.container.args.as_ref(),
            env: spec.container.env.as_ref(),
            resources: spec.container.resources.as_ref(),
            ports: None,
            readiness_probe: None,
            startup_probe: None,
        },
        extra_env,
        init_containers: spec.init_containers.as_ref(),
        volumes: spec.volumes.as_ref(),
        extra_volumes: dataset_volumes(datasets),
        gpu: spec.gpu.as_ref(),
        budget: facts.budget.as_ref(),
        service_account_name: spec.service_account_name.as_ref(),
        automount_service_account_token: spec.automount_service_account_token,
        pod_security: spec.pod_security.as_ref(),
        restart_policy: Some("Never"),
        subdomain: run.headless_name.clone(),
    })
}

/// [`DATASETS_ENV`] describing every dataset (none without datasets).
///
/// # Errors
/// [`RenderError::DatasetsTooLarge`] when the entry would exceed [`MAX_ENV_ENTRY_BYTES`] (possible only with many
/// splits of long URIs: each Dataset may have 16 splits of 2048-character URIs and digests of 256).
fn dataset_env(datasets: &[ResolvedDataset<'_>]) -> Result<Vec<EnvVar>, RenderError> {
    if datasets.is_empty() {
        return Ok(Vec::new());
    }
    let described: Vec<_> = datasets
        .iter()
        .map(|r| {
            json!({
                "name": r.reference.name,
                "version": r.dataset.spec.version,
                "uri": r.dataset.spec.source.uri,
                "splits": r.dataset.spec.splits.clone().unwrap_or_default(),
                "mountPath": r.reference.mount_path,
            })
        })
        .collect();
    let json = serde_json::to_string(&described).expect("JSON");
    let entry = DATASETS_ENV.len() + "=".len() + json.len() + "\0".len();
    if entry > MAX_ENV_ENTRY_BYTES {
        return Err(RenderError::DatasetsTooLarge(format!(
            "spec.datasets: the {} datasets describe themselves in {entry} bytes of {DATASETS_ENV}, over the \
             {MAX_ENV_ENTRY_BYTES} bytes Linux lets one environment variable hold (no container could start): read \
             fewer datasets, or register Datasets with fewer splits or shorter URIs and digests",
            datasets.len()
        )));
    }
    Ok(vec![env_value(DATASETS_ENV, json)])
}

/// The read-only claim volume and mount of every dataset with a PVC (case O-07: `persistentVolumeClaim.readOnly`
/// and every mount's `readOnly`).
fn dataset_volumes(datasets: &[ResolvedDataset<'_>]) -> Vec<(KVolume, VolumeMount)> {
    datasets
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let pvc = r.dataset.spec.pvc.as_ref()?;
            let volume_name = format!("{DATASET_VOLUME_PREFIX}{i}");
            Some((
                KVolume {
                    name: volume_name.clone(),
                    persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                        claim_name: pvc.claim_name.clone(),
                        read_only: Some(true),
                    }),
                    ..Default::default()
                },
                VolumeMount {
                    name: volume_name,
                    mount_path: r.reference.mount_path.clone(),
                    read_only: Some(true),
                    ..Default::default()
                },
            ))
        })
        .collect()
}

/// Adds `env` to every container and init container of `pod`, unless the container already sets a variable of that
/// name.
fn inject_default_env(pod: &mut PodSpec, env: &[(String, String)]) {
    let init = pod.init_containers.iter_mut().flatten();
    for container in pod.containers.iter_mut().chain(init) {
        for (name, value) in env {
            let vars = container.env.get_or_insert_with(Vec::new);
            if !vars.iter().any(|v| &v.name == name) {
                vars.push(env_value(name, value.clone()));
            }
        }
    }
}

/// The headless Service of an Indexed run of more than one pod (rendezvous host names `<job>-<index>.<service>`).
pub(crate) fn headless_service(run: &Run<'_>) -> Option<Service> {
    let name = run.headless_name.clone()?;
    Some(Service {
        metadata: child_meta(&run.owner, name, run.labels.clone()),
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".to_string()),
            selector: Some(run.selector.clone()),
            publish_not_ready_addresses: Some(true),
            ..Default::default()
        }),
        status: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Container;

    #[test]
    fn default_env_reaches_every_container_without_overriding() {
        let container = |name: &str, env: Option<Vec<EnvVar>>| Container {
            name: name.into(),
            env,
            ..Default::default()
        };
        let mut pod = PodSpec {
            containers: vec![container("main", Some(vec![env_value("A", "mine")]))],
            init_containers: Some(vec![container("fetch", None)]),
            ..Default::default()
        };
        let env = [
            ("A".to_string(), "1".to_string()),
            ("B".to_string(), "2".to_string()),
        ];
        inject_default_env(&mut pod, &env);
        let names = |c: &Container| {
            c.env
                .iter()
                .flatten()
                .map(|v| format!("{}={}", v.name, v.value.clone().unwrap_or_default()))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&pod.containers[0]), vec!["A=mine", "B=2"]);
        assert_eq!(names(&pod.init_containers.unwrap()[0]), vec!["A=1", "B=2"]);
    }
}
