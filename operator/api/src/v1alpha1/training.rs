//! `TrainingRun` (`trun`): one batch/v1 Job per run (DESIGN.md section 3). Everything in the spec
//! except `intent` and `cancel` is immutable, because a Job template cannot change.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{EnvVar, Gpu, InitContainer, Intent, Resources, Volume};
use super::rules::immutable;
use super::security::PodSecurity;

/// Fix text for every immutable TrainingRun field.
const NEW_RUN: &str = "a Job template cannot change, create a new TrainingRun";

/// JSON names of the spec fields that may change after creation.
pub const TRAINING_MUTABLE_FIELDS: &[&str] = &["intent", "cancel", "schedule"];

/// JSON names of the spec fields guarded by an immutability rule: every spec property except
/// [`TRAINING_MUTABLE_FIELDS`] (a unit test checks the list against the generated schema).
pub const TRAINING_IMMUTABLE_FIELDS: &[&str] = &[
    "container",
    "initContainers",
    "volumes",
    "gpu",
    "parallelism",
    "completions",
    "completionMode",
    "retries",
    "deadlineSeconds",
    "ttlSecondsAfterFinished",
    "serviceAccountName",
    "automountServiceAccountToken",
    "podSecurity",
    "datasets",
];

/// The training container.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = super::rules::unique("env", "name", "container.env"))]
pub struct TrainingContainer {
    /// Image reference, e.g. `pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime`.
    #[schemars(
        length(min = 1, max = 512),
        regex(pattern = crate::names::IMAGE_PATTERN)
    )]
    pub image: String,
    /// Entrypoint override.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(max = 4096)))]
    pub command: Option<Vec<String>>,
    /// Arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 128), inner(length(max = 4096)))]
    pub args: Option<Vec<String>>,
    /// Environment variables (`value`, `secretKeyRef` or `configMapKeyRef`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub env: Option<Vec<EnvVar>>,
    /// CPU and memory requests and limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
}

/// Job completion mode.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum CompletionMode {
    /// Pods are interchangeable (Kubernetes' default).
    NonIndexed,
    /// Each pod gets an index; a headless Service gives stable host names for rendezvous.
    Indexed,
}

/// A Dataset the run reads, mounted read-only.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.readOnly) || self.readOnly").message(Message::Message("datasets[].readOnly: dataset mounts are always read-only: remove readOnly or set it to true".into())).field_path(".readOnly"))]
pub struct DatasetRef {
    /// `metadata.name` of the Dataset (an object name: a DNS subdomain).
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub name: String,
    /// Must equal the Dataset's `spec.version`.
    #[schemars(length(min = 1, max = 63))]
    pub version: String,
    /// Where the Dataset's PVC (if any) is mounted, read-only.
    #[schemars(length(min = 1, max = 1024), regex(pattern = crate::names::ABSOLUTE_PATH_PATTERN))]
    pub mount_path: String,
    /// Namespace of the Dataset (a DNS label); accepted only when equal to the run's own namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = crate::names::DNS_LABEL_PATTERN)
    )]
    pub namespace: Option<String>,
    /// Must be true when given: a writable dataset mount is refused (case O-07).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
}

/// Desired state of a TrainingRun.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "modelfleet.io",
    version = "v1alpha1",
    kind = "TrainingRun",
    plural = "trainingruns",
    shortname = "trun",
    namespaced,
    derive = "PartialEq",
    status = "TrainingRunStatus",
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Job","type":"string","jsonPath":".status.jobName"}"#,
    printcolumn = r#"{"name":"Class","type":"string","jsonPath":".status.capacityClass"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(oldSelf.cancel) || !oldSelf.cancel || (has(self.cancel) && self.cancel)").message(Message::Message("spec.cancel cannot be undone: create a new TrainingRun to run again".into())).field_path(".cancel"))]
#[x_kube(validation = Rule::new("!has(oldSelf.cancel) || !oldSelf.cancel || (has(self.intent) == has(oldSelf.intent) && (!has(self.intent) || self.intent == oldSelf.intent))").message(Message::Message("spec.intent is immutable after spec.cancel: a cancelled run is final, create a new TrainingRun".into())).field_path(".intent"))]
#[x_kube(validation = Rule::new("!has(self.completions) || !has(self.parallelism) || self.parallelism <= self.completions").message(Message::Message("spec.parallelism must not exceed spec.completions: lower parallelism".into())).field_path(".parallelism"))]
#[x_kube(validation = Rule::new("!has(self.completionMode) || self.completionMode != 'Indexed' || has(self.completions)").message(Message::Message("spec.completions is required when completionMode is Indexed: set completions".into())).field_path(".completions"))]
#[x_kube(validation = immutable("container", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("initContainers", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("volumes", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("gpu", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("parallelism", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("completions", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("completionMode", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("retries", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("deadlineSeconds", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("ttlSecondsAfterFinished", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("serviceAccountName", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("automountServiceAccountToken", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("podSecurity", "TrainingRun", NEW_RUN))]
#[x_kube(validation = immutable("datasets", "TrainingRun", NEW_RUN))]
#[x_kube(validation = super::rules::shared_memory_volumes())]
#[x_kube(validation = super::rules::shared_memory_datasets())]
#[x_kube(validation = super::rules::unique("volumes", "name", "volumes"))]
#[x_kube(validation = super::rules::unique("volumes", "mountPath", "volumes"))]
#[x_kube(validation = super::rules::unique("initContainers", "name", "initContainers"))]
#[x_kube(validation = super::rules::unique("datasets", "mountPath", "datasets"))]
#[x_kube(validation = Rule::new("!has(self.datasets) || !has(self.volumes) || self.datasets.all(d, !self.volumes.exists(v, v.mountPath == d.mountPath))").message(Message::Message("datasets: a dataset's mountPath is also a volume's mountPath, which the pod cannot have: give each a distinct mountPath".into())).field_path(".datasets"))]
pub struct TrainingRunSpec {
    /// `automatic` (absent) or `active` run; `suspended` suspends the Job (resumable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<Intent>,
    /// Scheduled suspend (`expiresAt`): the effective intent becomes `suspended` at that time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<crate::Schedule>,
    /// Terminal stop: the Job is suspended and kept, phase `Cancelled`; cannot be undone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel: Option<bool>,
    /// The training container.
    pub container: TrainingContainer,
    /// Init containers.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 8))]
    pub init_containers: Option<Vec<InitContainer>>,
    /// Volumes mounted into every container.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 16))]
    pub volumes: Option<Vec<Volume>>,
    /// GPUs per pod and the fit budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Gpu>,
    /// Pods running at once (Job `parallelism`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1024))]
    pub parallelism: Option<i32>,
    /// Successful pods needed (Job `completions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1024))]
    pub completions: Option<i32>,
    /// `NonIndexed` (absent) or `Indexed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_mode: Option<CompletionMode>,
    /// Pod failures tolerated (Job `backoffLimit`); node disruptions do not count. Absent means
    /// Kubernetes' default of 6.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100))]
    pub retries: Option<i32>,
    /// Wall-clock limit in seconds (Job `activeDeadlineSeconds`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 31536000))]
    pub deadline_seconds: Option<i64>,
    /// Seconds after finishing before the Job is deleted (the run and its status stay).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 31536000))]
    pub ttl_seconds_after_finished: Option<i32>,
    /// ServiceAccount of the pods; absent means `default`. Dataset allowlists are checked against it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub service_account_name: Option<String>,
    /// Mount the ServiceAccount token; absent means false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub automount_service_account_token: Option<bool>,
    /// Pod Security Standards level of the pods and the user they run as; absent means `baseline`, the image's user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_security: Option<PodSecurity>,
    /// Datasets the run reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 16))]
    pub datasets: Option<Vec<DatasetRef>>,
}

/// Phase of a run, derived from its Job's status every time.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum TrainingPhase {
    /// The Job exists, no pod is ready yet (or no Job yet).
    Pending,
    /// The Job has a ready pod.
    Running,
    /// The Job completed.
    Succeeded,
    /// The Job failed; `reason` carries the Job's reason.
    Failed,
    /// `intent: suspended`.
    Suspended,
    /// `cancel: true`.
    Cancelled,
}

/// Observed state of a TrainingRun.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct TrainingRunStatus {
    /// `Ready`, `Suspended`, `DatasetsReady`, `Degraded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the status describes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Phase derived from the Job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<TrainingPhase>,
    /// The Job's reason when `Failed`, e.g. `DeadlineExceeded`, `BackoffLimitExceeded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Name of the Job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_name: Option<String>,
    /// When the Job started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the Job completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// Active pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<i32>,
    /// Ready pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<i32>,
    /// Succeeded pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub succeeded: Option<i32>,
    /// Failed pods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<i32>,
    /// Smallest capacity class that fits the budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_class: Option<String>,
    /// Per-GPU budget in GiB (2^30 bytes), rounded up.
    #[serde(rename = "perGpuMemoryGiB", skip_serializing_if = "Option::is_none")]
    pub per_gpu_memory_gib: Option<i64>,
    /// KV caches sized from the model's shape (`gpu.fit.modules[].kvCache.fromShape`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    pub kv_cache: Option<Vec<crate::KvCacheStatus>>,
    /// What `spec.schedule` will do next, while it has not happened yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_transition: Option<crate::NextTransition>,
}

impl TrainingRunStatus {
    /// Whether the status records a Job created for the run (`jobName`, written from the reconcile that created it):
    /// its mounts are fixed from then on.
    pub fn job_recorded(status: Option<&Self>) -> bool {
        status.is_some_and(|s| s.job_name.is_some())
    }
}
