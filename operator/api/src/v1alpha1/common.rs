//! Pieces shared by `InferenceService` and `TrainingRun` (DESIGN.md section 3, "Shared pieces"):
//! environment, init containers, volumes, resources, GPU requests, the fit budget and `intent`.
//!
//! Every optional field is an `Option` that is skipped when absent, so a spec round-trips exactly as
//! written: defaults are applied by `render`, never stored in the object (DESIGN.md section 3).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::rules::{
    at_most_one, container_resource_names, exactly_one, huge_pages_beside_cpu_or_memory,
    limits_for_requests_not_overcommitted, qualified_keys, unique,
};

/// What the operator should do with a workload. Absent means `automatic`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub enum Intent {
    /// InferenceService: KEDA scales between `replicas.min` and `replicas.max` when triggers are
    /// given. TrainingRun: the Job runs.
    #[default]
    Automatic,
    /// InferenceService: never below 1 replica. TrainingRun: the Job runs.
    Active,
    /// 0 replicas (KEDA paused) or a suspended Job; nothing is deleted and it can be resumed.
    Suspended,
}

impl Intent {
    /// The wire spelling (`automatic`, `active`, `suspended`).
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::Automatic => "automatic",
            Intent::Active => "active",
            Intent::Suspended => "suspended",
        }
    }
}

/// A reference to one key of a Secret or ConfigMap in the workload's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeySelector {
    /// Name of the Secret or ConfigMap (same namespace as the workload; an object name: a DNS subdomain).
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub name: String,
    /// Key inside the Secret or ConfigMap: `[-._a-zA-Z0-9]`, not `.`, `..` or starting `..` (Kubernetes'
    /// `IsConfigMapKey`).
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = crate::names::CONFIG_MAP_KEY_PATTERN)
    )]
    pub key: String,
    /// When true the container starts even if the object or key is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// One environment variable: a literal `value`, or a `secretKeyRef` / `configMapKeyRef`.
/// Secret values never live in a custom resource: reference them with `secretKeyRef`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = at_most_one(&["value", "secretKeyRef", "configMapKeyRef"], "env[]"))]
// The operator sets MODEL_FLEET_* variables in every container it renders (render::deployment, render::job); a second
// entry of one name would make the Deployment or Job unappliable (server-side apply refuses a duplicate map-list key).
#[x_kube(validation = kube::core::Rule::new("!self.name.startsWith('MODEL_FLEET_')").message(kube::core::Message::Message("env[].name: names starting MODEL_FLEET_ are reserved for the variables the operator sets in every container it renders (MODEL_FLEET_MODEL_NAME of a service, MODEL_FLEET_DATASETS_JSON of a run, ...): rename the variable; command and args can read the operator's as $(MODEL_FLEET_...)".into())).field_path(".name"))]
pub struct EnvVar {
    /// Variable name: letters, digits, `_`, `-` and `.`, not starting with a digit: Kubernetes' strict env name rule,
    /// which every cluster version takes (clusters from 1.32 also take any printable ASCII but `=` by default; a name
    /// only those take would break the same spec on an older cluster).
    /// Names starting `MODEL_FLEET_` are reserved for the variables the operator sets, and are refused.
    #[schemars(
        length(min = 1, max = 128),
        regex(pattern = crate::names::ENV_NAME_PATTERN)
    )]
    pub name: String,
    /// Literal value; may use `$(OTHER_VAR)` expansion like any Kubernetes env var.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 4096))]
    pub value: Option<String>,
    /// Take the value from a key of a Secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<KeySelector>,
    /// Take the value from a key of a ConfigMap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_map_key_ref: Option<KeySelector>,
}

/// Compute resources of a container: quantities exactly as Kubernetes writes them (`500m`, `8Gi`), by resource
/// name (a qualified name, as Kubernetes' `validateResourceName` requires).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = qualified_keys("requests", "resources.requests", "cpu, memory, example.com/device"))]
#[x_kube(validation = qualified_keys("limits", "resources.limits", "cpu, memory, example.com/device"))]
#[x_kube(validation = container_resource_names("requests", "resources.requests"))]
#[x_kube(validation = container_resource_names("limits", "resources.limits"))]
#[x_kube(validation = limits_for_requests_not_overcommitted())]
#[x_kube(validation = huge_pages_beside_cpu_or_memory())]
pub struct Resources {
    /// Minimum resources the scheduler reserves, e.g. `cpu: "2"`, `memory: 16Gi`. The main container's GPUs are
    /// set by `gpu`, not here (`render -f` and the provider refuse `gpu.resourceName` in the main container's
    /// `resources`, and the operator writes its limit from `gpu.count`). An
    /// extended resource or huge pages need a limit of the same amount, and huge pages a `cpu` or `memory` amount
    /// beside them (Kubernetes' rules for the pod).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 16), transform = super::quantities::quantity_values)]
    pub requests: Option<BTreeMap<String, Quantity>>,
    /// Hard limits, e.g. `memory: 32Gi`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 16), transform = super::quantities::quantity_values)]
    pub limits: Option<BTreeMap<String, Quantity>>,
}

/// An init container, e.g. a controlled prefetch of model weights into a shared `emptyDir` volume.
/// All `volumes` are mounted into it too.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("self.name != 'main'").message(kube::core::Message::Message("initContainers[].name: main is the name of the main container: rename the init container".into())).field_path(".name"))]
#[x_kube(validation = unique("env", "name", "initContainers[].env"))]
pub struct InitContainer {
    /// Container name (DNS-1123 label, unique in the pod; `main` is taken).
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = crate::names::DNS_LABEL_PATTERN)
    )]
    pub name: String,
    /// Image reference, e.g. `python:3.12-slim`.
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
    /// Environment variables.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub env: Option<Vec<EnvVar>>,
    /// Resources of the init container.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
}

/// `emptyDir` volume source.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct EmptyDirSource {
    /// Storage medium: absent for node disk, `Memory` for tmpfs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medium: Option<StorageMedium>,
    /// Size limit, e.g. `100Gi`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = super::quantities::quantity)]
    pub size_limit: Option<Quantity>,
}

/// `emptyDir.medium` values.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum StorageMedium {
    /// tmpfs (counts against the container's memory).
    Memory,
}

/// A PersistentVolumeClaim volume source.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimSource {
    /// Name of the PersistentVolumeClaim in the workload's namespace (an object name: a DNS subdomain).
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub claim_name: String,
}

/// A ConfigMap volume source.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMapSource {
    /// Name of the ConfigMap in the workload's namespace (an object name: a DNS subdomain).
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub name: String,
}

/// A Secret volume source.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretSource {
    /// Name of the Secret in the workload's namespace (an object name: a DNS subdomain).
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub secret_name: String,
}

/// A volume mounted into the main container and every init container at `mountPath`.
/// Exactly one source must be set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = exactly_one(&["emptyDir", "persistentVolumeClaim", "configMap", "secret"], "volumes[]"))]
#[x_kube(validation = kube::core::Rule::new("self.name != 'dshm' && !self.name.startsWith('dataset-')").message(kube::core::Message::Message("volumes[].name: dshm and names starting dataset- are reserved for the operator's volumes: rename the volume".into())).field_path(".name"))]
pub struct Volume {
    /// Volume name (DNS-1123 label, unique in the pod; `dshm` and names starting `dataset-` are
    /// reserved for the operator).
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = crate::names::DNS_LABEL_PATTERN)
    )]
    pub name: String,
    /// Absolute path inside the containers.
    #[schemars(length(min = 1, max = 1024), regex(pattern = crate::names::ABSOLUTE_PATH_PATTERN))]
    pub mount_path: String,
    /// Mount read-only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Scratch space that lives as long as the pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_dir: Option<EmptyDirSource>,
    /// An existing PersistentVolumeClaim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim: Option<ClaimSource>,
    /// A ConfigMap's keys as files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_map: Option<ConfigMapSource>,
    /// A Secret's keys as files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretSource>,
}

/// Where a fit module's memory lives.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Placement {
    /// Split evenly across `shards` GPUs (tensor parallel weights, KV cache).
    Sharded,
    /// A full copy on every GPU (e.g. a draft model or embeddings).
    Replicated,
}

/// Element type of the KV cache, by its usual name: `fp32` (4 bytes), `fp16` and `bf16` (2), `fp8` and `int8` (1).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KvDtype {
    /// IEEE float32: 4 bytes.
    Fp32,
    /// IEEE float16: 2 bytes.
    Fp16,
    /// bfloat16: 2 bytes.
    Bf16,
    /// float8 (e4m3 or e5m2, as vLLM's `--kv-cache-dtype fp8`): 1 byte.
    Fp8,
    /// int8: 1 byte.
    Int8,
}

impl KvDtype {
    /// Bytes per element.
    pub fn bytes(self) -> u32 {
        match self {
            KvDtype::Fp32 => 4,
            KvDtype::Fp16 | KvDtype::Bf16 => 2,
            KvDtype::Fp8 | KvDtype::Int8 => 1,
        }
    }
}

/// The model's attention shape, as its `config.json` gives it (Hugging Face names in brackets), and the load it
/// serves. The KV cache is `2 x layers x kvHeads x headDim x dtypeBytes x contextTokens x sequences` bytes (a key
/// and a value vector per layer, KV head and token; the formula of the vLLM and PagedAttention papers' memory model).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = exactly_one(&["dtype", "dtypeBytes"], "kvCache.fromShape"))]
#[x_kube(validation = kube::core::Rule::new("has(self.headDim) || (has(self.hiddenSize) && has(self.attentionHeads))").message(kube::core::Message::Message("kvCache.fromShape: set headDim (head_dim), or hiddenSize and attentionHeads (hidden_size, num_attention_heads) so headDim = hiddenSize / attentionHeads".into())))]
#[x_kube(validation = kube::core::Rule::new("has(self.headDim) || !has(self.hiddenSize) || !has(self.attentionHeads) || self.hiddenSize % self.attentionHeads == 0").message(kube::core::Message::Message("kvCache.fromShape: hiddenSize must be a multiple of attentionHeads to give headDim; set headDim explicitly".into())).field_path(".hiddenSize"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.attentionHeads) || self.attentionHeads % self.kvHeads == 0").message(kube::core::Message::Message("kvCache.fromShape: attentionHeads must be a multiple of kvHeads (grouped-query attention shares each KV head among a whole number of query heads)".into())).field_path(".kvHeads"))]
pub struct ModelShape {
    /// Transformer layers (`num_hidden_layers`).
    #[schemars(range(min = 1, max = 1024))]
    pub layers: i32,
    /// Key/value heads per layer (`num_key_value_heads`; equal to `attentionHeads` without grouped-query attention).
    #[schemars(range(min = 1, max = 1024))]
    pub kv_heads: i32,
    /// Query heads per layer (`num_attention_heads`); with `hiddenSize`, gives `headDim` when it is absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1024))]
    pub attention_heads: Option<i32>,
    /// Model width (`hidden_size`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1048576))]
    pub hidden_size: Option<i32>,
    /// Size of one head (`head_dim`); wins over `hiddenSize / attentionHeads` (models such as Gemma 2 and Qwen3 set
    /// it to something else).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 4096))]
    pub head_dim: Option<i32>,
    /// Element type of the cache (vLLM's `--kv-cache-dtype`, or the model's `torch_dtype`); or `dtypeBytes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtype: Option<KvDtype>,
    /// Bytes per cache element, for a type `dtype` does not name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 8))]
    pub dtype_bytes: Option<i32>,
    /// Tokens of context each sequence may hold (vLLM's `--max-model-len`).
    #[schemars(range(min = 1, max = 16777216))]
    pub context_tokens: i32,
    /// Sequences cached at once (vLLM's `--max-num-seqs` at full context); absent means 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65536))]
    pub sequences: Option<i32>,
}

/// A KV cache sized from the model's shape instead of a number of GiB.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KvCache {
    /// The attention shape and the load; exact bytes, split over shards by KV head: each GPU holds whole KV heads,
    /// so the cache is split `min(shards, kvHeads)` ways.
    pub from_shape: ModelShape,
}

/// One memory consumer of the fit budget, sizes in GiB (2^30 bytes), decimals allowed (`13.5`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = at_most_one(&["kvCacheGiB", "kvCache"], "gpu.fit.modules[]"))]
pub struct FitModule {
    /// A label for messages, e.g. `llama-70b`.
    #[schemars(length(min = 1, max = 63))]
    pub name: String,
    /// Weight memory in GiB (2^30 bytes).
    #[schemars(range(min = 0, max = 65536))]
    #[serde(rename = "weightsGiB")]
    pub weights_gib: serde_json::Number,
    /// KV cache memory in GiB (2^30 bytes); absent means 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 65536))]
    #[serde(rename = "kvCacheGiB")]
    pub kv_cache_gib: Option<serde_json::Number>,
    /// KV cache computed from the model's shape (instead of `kvCacheGiB`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache: Option<KvCache>,
    /// `sharded` (divided over `shards`) or `replicated` (a full copy per GPU).
    pub placement: Placement,
}

/// A KV cache the fit budget sized from the model's shape, as the status reports it (MiB are 2^20 bytes, rounded
/// up).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KvCacheStatus {
    /// The fit module's name.
    #[schemars(length(max = 63))]
    pub module: String,
    /// The whole cache: all sequences, one copy of the model.
    #[serde(rename = "totalMiB")]
    pub total_mib: i64,
    /// What each GPU holds after the tensor-parallel split by KV head.
    #[serde(rename = "perGpuMiB")]
    pub per_gpu_mib: i64,
}

impl KvCacheStatus {
    /// The status entries of a budget's KV caches; `None` when no module sizes its cache from shape.
    pub fn of(budget: Option<&crate::capacity::FitBudget>) -> Option<Vec<KvCacheStatus>> {
        let list: Vec<_> = budget?
            .kv_cache
            .iter()
            .map(|kv| KvCacheStatus {
                module: kv.module.clone(),
                total_mib: kv.mib(),
                per_gpu_mib: kv.per_gpu_mib(),
            })
            .collect();
        (!list.is_empty()).then_some(list)
    }
}

/// The GPU fit budget: per-GPU memory =
/// (sum of sharded modules / shards + sum of replicated modules + runtimeGiB) x (1 + marginPercent/100).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Fit {
    /// Memory consumers.
    #[schemars(length(min = 1, max = 32))]
    pub modules: Vec<FitModule>,
    /// GPUs the sharded modules are split over; absent means `gpu.count`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 64))]
    pub shards: Option<i32>,
    /// Per-device runtime overhead (CUDA context, activations) in GiB, added on every GPU;
    /// absent means 2.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1024))]
    #[serde(rename = "runtimeGiB")]
    pub runtime_gib: Option<serde_json::Number>,
    /// Safety margin in whole percent (0-100) on top of the sum; absent means 10.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100))]
    pub margin_percent: Option<i32>,
}

/// GPUs per pod and how to place them.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = qualified_keys("nodeSelector", "gpu.nodeSelector", "pool, example.com/pool"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.nodeSelector) || self.nodeSelector.all(k, size(self.nodeSelector[k]) <= 63 && self.nodeSelector[k].matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'))").message(kube::core::Message::Message("gpu.nodeSelector: every value must be a label value (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit): fix the value".into())).field_path(".nodeSelector"))]
#[x_kube(validation = kube::core::Rule::new(format!("!has(self.resourceName) || ({})", super::rules::EXTENDED_RESOURCE_NAME.replace("{}", "self.resourceName"))).message(kube::core::Message::Message("gpu.resourceName: an extended resource name's DNS prefix is at most 244 characters (Kubernetes checks it as requests.<name>), and the name does not start with requests. (a quota's name): fix the name, e.g. nvidia.com/gpu".into())).field_path(".resourceName"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.fit) || self.count >= 1").message(kube::core::Message::Message("gpu.count must be at least 1 when gpu.fit is given: set gpu.count to the GPUs per pod".into())).field_path(".count"))]
pub struct Gpu {
    /// GPUs per pod (the `resourceName` limit). 0 is allowed only without `fit`.
    #[schemars(range(min = 0, max = 16))]
    pub count: i32,
    /// The memory budget that picks the capacity class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
    /// Exact `nvidia.com/gpu.product` node label values, any of (no prefix match: MIG and
    /// time-sliced nodes carry suffixed names).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 16),
        inner(length(min = 1, max = 63), regex(pattern = crate::names::LABEL_VALUE_PATTERN))
    )]
    pub products: Option<Vec<String>>,
    /// Extended resource name of the device, a qualified name with a domain (`example.com/device`); absent means
    /// `nvidia.com/gpu`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 253),
        regex(
            pattern = crate::names::EXTENDED_RESOURCE_PATTERN
        )
    )]
    pub resource_name: Option<String>,
    /// PriorityClass of the pods (an object name: a DNS subdomain).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 253),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub priority_class_name: Option<String>,
    /// Extra tolerations (the `nvidia.com/gpu` taint is tolerated already when `count > 0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 16))]
    pub tolerations: Option<Vec<super::Toleration>>,
    /// Extra node selector labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 16), transform = bounded_string_values)]
    pub node_selector: Option<BTreeMap<String, String>>,
}

/// schemars transform for string maps (`nodeSelector`, trigger `metadata`): bounds each value's
/// length so CEL cost estimates stay small.
pub(crate) fn bounded_string_values(schema: &mut schemars::Schema) {
    if let Some(values) = schema
        .get_mut("additionalProperties")
        .and_then(|v| v.as_object_mut())
    {
        values.insert("maxLength".into(), 4096.into());
    }
}
