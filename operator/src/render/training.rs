//! TrainingRun -> one batch/v1 Job (plus a headless Service for Indexed multi-pod runs), with
//! datasets injected read-only (DESIGN.md section 3, TrainingRun; cases O-05, O-07).

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{
    Job, JobSpec, PodFailurePolicy, PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{
    PersistentVolumeClaimVolumeSource, PodTemplateSpec, Service, ServiceSpec, Volume as KVolume,
    VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;

use super::datasets::check_datasets;
use super::inference::to_value;
use super::meta::{LABEL_TRAINING, Owner, child_meta, labels};
use super::pod::{
    DATASET_VOLUME_PREFIX, DEFAULT_SERVICE_ACCOUNT, MainContainer, PodInputs, env_value, pod_spec,
};
use super::{RenderConfig, RenderError};
use crate::api::{CompletionMode, Dataset, Intent, TrainingRun, TrainingRunSpec};
use crate::capacity::{self, FitBudget};
use crate::names::{MAX_LEN, NameRule, child_name, child_name_within, label_value};

/// Env var carrying the datasets as JSON: `[{name, version, uri, splits, mountPath}]`.
pub const DATASETS_ENV: &str = "MODEL_FLEET_DATASETS_JSON";

/// The children of a TrainingRun.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingChildren {
    /// The Job. `spec.suspend` is the desired value at creation; afterwards the controller toggles
    /// it with its own field manager (DESIGN.md section 5).
    pub job: Job,
    /// Headless Service for `Indexed` runs with more than one pod (rendezvous host names
    /// `<job>-<index>.<service>`).
    pub headless_service: Option<Service>,
}

impl TrainingChildren {
    /// Every child as JSON, in apply order.
    pub fn to_values(&self) -> Vec<serde_json::Value> {
        let mut out: Vec<_> = self.headless_service.iter().map(to_value).collect();
        out.push(to_value(&self.job));
        out
    }
}

/// What the status should say, independent of the cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingFacts {
    /// Name of the Job.
    pub job_name: String,
    /// Whether the Job should be suspended (`intent: suspended` or `cancel`).
    pub suspend: bool,
    /// Whether the run is cancelled (terminal).
    pub cancelled: bool,
    /// The fit budget, when `gpu.fit` is given.
    pub budget: Option<FitBudget>,
    /// Effective ServiceAccount.
    pub service_account_name: String,
}

/// Children and facts.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderedTraining {
    /// Desired children.
    pub children: TrainingChildren,
    /// Status facts.
    pub facts: TrainingFacts,
}

/// The Job name of a run named `run_name` (the provider computes `job_name` at plan time with
/// it). A DNS-1123 label of at most 63 characters; for an Indexed run shorter still, so that pod
/// host names `<job>-<index>` stay within 63.
pub fn job_name(run_name: &str, spec: &TrainingRunSpec) -> String {
    let indexed = spec.completion_mode == Some(CompletionMode::Indexed);
    let max_index = spec
        .completions
        .unwrap_or(1)
        .max(spec.parallelism.unwrap_or(1))
        - 1;
    let reserve = if indexed {
        1 + max_index.max(0).to_string().len()
    } else {
        0
    };
    child_name_within(run_name, NameRule::Dns1123Label, MAX_LEN - reserve)
}

/// Renders a TrainingRun. `datasets` are the Datasets fetched from the run's namespace. Errors:
/// a dataset refusal (no Job is created), a writable dataset mount, a fit too big, reserved names.
pub fn render_training(
    run: &TrainingRun,
    datasets: &[Dataset],
    _config: &RenderConfig,
) -> Result<RenderedTraining, RenderError> {
    let spec = &run.spec;
    let owner = Owner::of(run);
    let resolved = check_datasets(run, datasets).map_err(RenderError::Datasets)?;
    let budget = match &spec.gpu {
        Some(g) => capacity::plan(g)?,
        None => None,
    };

    // Case O-07: a dataset is never writable, whether asked on the reference or by mounting its
    // claim again as a writable volume.
    for (i, r) in resolved.iter().enumerate() {
        if r.reference.read_only == Some(false) {
            return Err(RenderError::WritableDatasetMount(format!(
                "spec.datasets[{i}].readOnly: Invalid value: false: dataset mounts are always read-only"
            )));
        }
        if let Some(pvc) = &r.dataset.spec.pvc {
            for v in spec.volumes.iter().flatten() {
                let same_claim = v
                    .persistent_volume_claim
                    .as_ref()
                    .is_some_and(|c| c.claim_name == pvc.claim_name);
                if same_claim && v.read_only != Some(true) {
                    return Err(RenderError::WritableDatasetMount(format!(
                        "spec.volumes[].readOnly: Invalid value: volume {:?} mounts claim {:?} of Dataset {} writable: set readOnly: true or use spec.datasets",
                        v.name, pvc.claim_name, r.reference.name
                    )));
                }
            }
        }
    }

    let name = job_name(&owner.name, spec);
    let selector = BTreeMap::from([(LABEL_TRAINING.to_string(), label_value(&owner.name))]);
    let labels = labels(&owner, "training", &selector);
    let intent = spec.intent.unwrap_or_default();
    let cancelled = spec.cancel == Some(true);
    let suspend = cancelled || intent == Intent::Suspended;
    let pods = spec
        .parallelism
        .unwrap_or(1)
        .max(spec.completions.unwrap_or(1));
    let indexed = spec.completion_mode == Some(CompletionMode::Indexed);
    let headless_name =
        (indexed && pods > 1).then(|| child_name(&owner.name, NameRule::Dns1035Label));

    let mut extra_env = Vec::new();
    let mut extra_volumes = Vec::new();
    if !resolved.is_empty() {
        let described: Vec<_> = resolved
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
        extra_env.push(env_value(
            DATASETS_ENV,
            serde_json::to_string(&described).expect("JSON"),
        ));
        for (i, r) in resolved.iter().enumerate() {
            if let Some(pvc) = &r.dataset.spec.pvc {
                let volume_name = format!("{DATASET_VOLUME_PREFIX}{i}");
                extra_volumes.push((
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
                ));
            }
        }
    }
    if let Some(svc) = &headless_name {
        extra_env.push(env_value("MODEL_FLEET_HEADLESS_SERVICE", svc.clone()));
        extra_env.push(env_value(
            "MODEL_FLEET_LEADER_HOST",
            format!("{name}-0.{svc}"),
        ));
        extra_env.push(env_value("MODEL_FLEET_WORLD_PODS", pods.to_string()));
    }

    let pod = pod_spec(PodInputs {
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
        extra_volumes,
        gpu: spec.gpu.as_ref(),
        budget: budget.as_ref(),
        service_account_name: spec.service_account_name.as_ref(),
        automount_service_account_token: spec.automount_service_account_token,
        restart_policy: Some("Never"),
        subdomain: headless_name.clone(),
    })?;

    let job = Job {
        metadata: child_meta(&owner, name.clone(), labels.clone()),
        spec: Some(JobSpec {
            backoff_limit: spec.retries,
            active_deadline_seconds: spec.deadline_seconds,
            ttl_seconds_after_finished: spec.ttl_seconds_after_finished,
            parallelism: spec.parallelism,
            completions: spec.completions,
            completion_mode: spec.completion_mode.map(|m| format!("{m:?}")),
            suspend: Some(suspend),
            // Node drains and preemption (DisruptionTarget) do not count against `retries`.
            pod_failure_policy: Some(PodFailurePolicy {
                rules: vec![PodFailurePolicyRule {
                    action: "Ignore".to_string(),
                    on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                        type_: "DisruptionTarget".to_string(),
                        status: Some("True".to_string()),
                    }]),
                    on_exit_codes: None,
                }],
            }),
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

    let headless_service = headless_name.map(|svc| Service {
        metadata: child_meta(&owner, svc, labels.clone()),
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".to_string()),
            selector: Some(selector.clone()),
            publish_not_ready_addresses: Some(true),
            ..Default::default()
        }),
        status: None,
    });

    Ok(RenderedTraining {
        children: TrainingChildren {
            job,
            headless_service,
        },
        facts: TrainingFacts {
            job_name: name,
            suspend,
            cancelled,
            budget,
            service_account_name: spec
                .service_account_name
                .clone()
                .unwrap_or_else(|| DEFAULT_SERVICE_ACCOUNT.to_string()),
        },
    })
}
