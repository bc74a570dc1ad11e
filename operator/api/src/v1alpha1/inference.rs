//! `InferenceService` (`isvc`): a model server behind a Service, optionally autoscaled by KEDA and
//! routed by a Gateway API HTTPRoute (DESIGN.md section 3).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{EnvVar, Gpu, InitContainer, Intent, Resources, Volume};
use super::security::PodSecurity;

/// The model a server loads (informational for Model Fleet; injected as environment variables
/// `MODEL_FLEET_MODEL_NAME`, `MODEL_FLEET_MODEL_REVISION`, `MODEL_FLEET_SERVED_MODEL_NAME`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// Model identifier, e.g. the Hugging Face repo id `meta-llama/Llama-3.1-8B-Instruct`.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Revision (branch, tag or commit) to load.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 128))]
    pub revision: Option<String>,
    /// Name clients use in API requests (e.g. vLLM `--served-model-name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253))]
    pub served_name: Option<String>,
}

/// A startup probe that gives a model time to load before readiness counts.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartupProbe {
    /// HTTP path probed; absent means `readinessPath`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024), regex(pattern = crate::names::ABSOLUTE_PATH_PATTERN))]
    pub path: Option<String>,
    /// Longest time in seconds a model may take to load before the container is restarted;
    /// absent means 1800 (30 minutes).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 10, max = 86400))]
    pub timeout_seconds: Option<i32>,
}

/// The serving container.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = super::rules::unique("env", "name", "container.env"))]
pub struct ServingContainer {
    /// Image reference, e.g. `vllm/vllm-openai:v0.8.5`.
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
    /// HTTP port the server listens on; absent means 8080.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
    /// CPU and memory requests and limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// HTTP path of the readiness probe; absent means `/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024), regex(pattern = crate::names::ABSOLUTE_PATH_PATTERN))]
    pub readiness_path: Option<String>,
    /// Startup probe for model loading; absent means the readiness path with a 30 minute budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_probe: Option<StartupProbe>,
}

/// Replica bounds. KEDA scales between `min` and `max` when triggers are given.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.min) || !has(self.max) || self.min <= self.max").message(Message::Message("replicas.min must not exceed replicas.max: lower min or raise max".into())).field_path(".min"))]
#[x_kube(validation = Rule::new("!has(self.idleReplicaCount) || self.idleReplicaCount < (has(self.min) ? self.min : 1)").message(Message::Message("replicas.idleReplicaCount must be below replicas.min (KEDA rule): remove idleReplicaCount or raise min".into())).field_path(".idleReplicaCount"))]
pub struct Replicas {
    /// Lowest replica count (0 allows scale to zero with a suitable trigger); absent means 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1000))]
    pub min: Option<i32>,
    /// Highest replica count; absent means `max(min, 1)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub max: Option<i32>,
    /// Replicas while no trigger is active; KEDA accepts only 0, and it must be below `min`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 0))]
    pub idle_replica_count: Option<i32>,
}

/// KEDA `metricType` of a trigger.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum MetricType {
    /// Target per replica.
    AverageValue,
    /// Target for the total.
    Value,
    /// Percent of the request (cpu/memory only).
    Utilization,
}

/// A KEDA TriggerAuthentication reference.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationRef {
    /// Name of the TriggerAuthentication (or ClusterTriggerAuthentication): an object name, a DNS subdomain.
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub name: String,
    /// `TriggerAuthentication` (absent) or `ClusterTriggerAuthentication`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<AuthenticationKind>,
}

/// Kinds of KEDA authentication objects.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum AuthenticationKind {
    /// Namespaced.
    TriggerAuthentication,
    /// Cluster scoped.
    ClusterTriggerAuthentication,
}

/// One KEDA trigger, passed to the ScaledObject unchanged.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!(self.type in ['cpu', 'memory']) || !has(self.metricType) || self.metricType != 'Value'").message(Message::Message("scaling.triggers[].metricType: cpu and memory triggers accept only Utilization or AverageValue (KEDA rule)".into())).field_path(".metricType"))]
#[x_kube(validation = Rule::new("self.type in ['cpu', 'memory'] || !has(self.metricType) || self.metricType != 'Utilization'").message(Message::Message("scaling.triggers[].metricType: Utilization is only for cpu and memory triggers; KEDA's other scalers take Value or AverageValue and drop every scaler of a ScaledObject that asks otherwise: use AverageValue or Value".into())).field_path(".metricType"))]
pub struct Trigger {
    /// KEDA scaler type, e.g. `rabbitmq`, `redis`, `kafka`, `prometheus`, `cpu`.
    #[serde(rename = "type")]
    #[schemars(length(min = 1, max = 63))]
    pub type_: String,
    /// Optional trigger name (KEDA uses it in metric names).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63))]
    pub name: Option<String>,
    /// Scaler settings as strings, exactly as KEDA documents them.
    #[schemars(extend("maxProperties" = 64), transform = super::common::bounded_string_values)]
    pub metadata: BTreeMap<String, String>,
    /// Credentials for the scaler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authentication_ref: Option<AuthenticationRef>,
    /// `AverageValue`, `Value` or `Utilization`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_type: Option<MetricType>,
}

/// Autoscaling by KEDA. A ScaledObject exists only when `triggers` is non-empty or `http` is given.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.triggers) || self.triggers.all(a, !has(a.name) || self.triggers.exists_one(b, has(b.name) && b.name == a.name))").message(Message::Message("scaling.triggers: two triggers have the same name, which KEDA's admission webhook refuses (ValidateTriggers): give each a distinct name or remove name".into())).field_path(".triggers"))]
#[x_kube(validation = Rule::new("!has(self.http) || !has(self.triggers) || !self.triggers.exists(t, has(t.name) && t.name == 'http')").message(Message::Message("scaling.triggers: http is the name of the trigger scaling.http adds, and KEDA refuses two triggers of one name: rename the trigger".into())).field_path(".triggers"))]
pub struct Scaling {
    /// KEDA triggers; scale to zero needs one whose metric exists while no pod runs (a queue,
    /// Kafka lag, a gateway backlog).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 16))]
    pub triggers: Option<Vec<Trigger>>,
    /// Seconds between trigger checks (KEDA default 30).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 86400))]
    pub polling_interval: Option<i32>,
    /// Seconds after the last active trigger before scaling to zero (KEDA default 300).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 86400))]
    pub cooldown_period: Option<i32>,
    /// Seconds after creation before the first scale to zero (KEDA default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 86400))]
    pub initial_cooldown_period: Option<i32>,
    /// Wake from zero on HTTP requests through the KEDA HTTP add-on (an `InterceptorRoute`, `http.keda.sh/v1beta1`,
    /// add-on v0.14 or later): requests arriving through the service's HTTPRoute are held by the add-on's
    /// interceptor while a replica starts, and their count drives the ScaledObject. Needs `gateway`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpScaling>,
}

/// Default `scaling.http.targetConcurrency` when neither target is given: 100 requests in flight per replica, the
/// KEDA HTTP add-on's own default (`HTTPScaledObject.spec.targetPendingRequests`).
pub const DEFAULT_TARGET_CONCURRENCY: i32 = 100;

/// Default `scaling.http.coldStartTimeoutSeconds`: 600 s, long enough for a server to pull and load model weights
/// of tens of GiB (the add-on's own default is no dedicated deadline at all).
pub const DEFAULT_COLD_START_TIMEOUT_SECONDS: i32 = 600;

/// HTTP wake-from-zero (`scaling.http`), rendered as the KEDA HTTP add-on's `InterceptorRoute` plus an
/// `external-push` trigger on the ScaledObject. Targets are per replica; absent both, `targetConcurrency` is
/// [`DEFAULT_TARGET_CONCURRENCY`]. When both are given KEDA scales on whichever asks for more replicas.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.requestTimeoutSeconds) || self.requestTimeoutSeconds > (has(self.coldStartTimeoutSeconds) ? self.coldStartTimeoutSeconds : 600)").message(Message::Message("scaling.http.requestTimeoutSeconds must exceed coldStartTimeoutSeconds (default 600): a request's whole life, its wait for a cold start included, must fit in it; raise requestTimeoutSeconds or lower coldStartTimeoutSeconds".into())).field_path(".requestTimeoutSeconds"))]
pub struct HttpScaling {
    /// Requests in flight per replica that KEDA aims for (InterceptorRoute `scalingMetric.concurrency.targetValue`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100000))]
    pub target_concurrency: Option<i32>,
    /// Requests per second per replica that KEDA aims for, averaged over one minute (InterceptorRoute
    /// `scalingMetric.requestRate`, window `1m`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100000))]
    pub target_requests_per_second: Option<i32>,
    /// Seconds a request waits at the interceptor for a ready replica while the model cold-starts (InterceptorRoute
    /// `timeouts.readiness`); absent means 600 seconds. Size it for image pull plus weight loading.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3600))]
    pub cold_start_timeout_seconds: Option<i32>,
    /// Seconds a whole request may take at the interceptor, cold start included (InterceptorRoute
    /// `timeouts.request`); absent means the add-on's global setting (none by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2, max = 86400))]
    pub request_timeout_seconds: Option<i32>,
}

/// A Gateway API parent (a Gateway).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ParentRef {
    /// Gateway name (an object name: a DNS subdomain).
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub name: String,
    /// Gateway namespace (a DNS label); absent means the InferenceService's namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = crate::names::DNS_LABEL_PATTERN)
    )]
    pub namespace: Option<String>,
    /// Listener name on the Gateway (Gateway API's `SectionName`: a DNS subdomain, which the HTTPRoute's schema
    /// checks).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub section_name: Option<String>,
}

/// Exposure through a Gateway API HTTPRoute (TLS stays with the Gateway's admin).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.pathPrefix) || !(self.pathPrefix.contains('//') || self.pathPrefix.contains('/./') || self.pathPrefix.contains('/../') || self.pathPrefix.contains('%2f') || self.pathPrefix.contains('%2F') || self.pathPrefix.endsWith('/.') || self.pathPrefix.endsWith('/..'))").message(Message::Message("gateway.pathPrefix: must not contain '//', '/./', '/../' or an encoded slash (%2f), nor end with '/.' or '/..' (Gateway API's HTTPRoute path rules): write the path in its plain form, e.g. /models/llama".into())).field_path(".pathPrefix"))]
#[x_kube(validation = Rule::new("!has(self.hostnames) || self.hostnames.all(h, !h.matches('^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+$'))").message(Message::Message("gateway.hostnames: an IP address is not a hostname (Gateway API's Hostname: IPs are not allowed): use a DNS name, e.g. model.example.com".into())).field_path(".hostnames"))]
pub struct Gateway {
    /// Host names the route matches, e.g. `model.localhost` (DNS names, not IP addresses; `*.` makes a wildcard); the
    /// first that is not a wildcard forms `status.url`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 16),
        inner(
            length(min = 1, max = 253),
            regex(
                pattern = crate::names::HOSTNAME_PATTERN
            )
        )
    )]
    pub hostnames: Option<Vec<String>>,
    /// Path prefix routed to the model; absent means `/`. An absolute path of the characters Gateway API's HTTPRoute
    /// takes in a path match (RFC 3986 path characters and `%XX` escapes), in its plain form (see the rule above).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 1024),
        regex(pattern = crate::names::PATH_PREFIX_PATTERN)
    )]
    pub path_prefix: Option<String>,
    /// Whether the Gateway strips `pathPrefix` before the request reaches the model (`/qwen-7b/v1/models` arrives as
    /// `/v1/models`): several models behind one hostname, each under its own prefix, while every server keeps
    /// serving the OpenAI paths at its root. Rendered as the HTTPRoute filter `URLRewrite` with
    /// `ReplacePrefixMatch: /` (Gateway API `HTTPURLRewriteFilter`). Absent means false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strip_path_prefix: Option<bool>,
    /// The Gateway; absent means the operator's `--default-gateway`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_ref: Option<ParentRef>,
}

/// Desired state of an InferenceService.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "modelfleet.io",
    version = "v1alpha1",
    kind = "InferenceService",
    plural = "inferenceservices",
    shortname = "isvc",
    namespaced,
    derive = "PartialEq",
    status = "InferenceServiceStatus",
    printcolumn = r#"{"name":"Intent","type":"string","jsonPath":".status.effective.intent"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Replicas","type":"integer","jsonPath":".status.readyReplicas"}"#,
    printcolumn = r#"{"name":"Class","type":"string","jsonPath":".status.capacityClass"}"#,
    printcolumn = r#"{"name":"URL","type":"string","jsonPath":".status.url"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.scaling) || !has(self.scaling.triggers) || self.scaling.triggers.all(t, !(t.type in ['cpu', 'memory']) || (has(self.container.resources) && has(self.container.resources.requests) && t.type in self.container.resources.requests))").message(Message::Message("scaling.triggers: a cpu or memory trigger needs container.resources.requests for that resource (KEDA rule): add the request".into())).field_path(".scaling.triggers"))]
#[x_kube(validation = Rule::new("!has(self.scaling) || !has(self.scaling.triggers) || size(self.scaling.triggers) == 0 || self.scaling.triggers.exists(t, !(t.type in ['cpu', 'memory'])) || has(self.scaling.http) || ((!has(self.replicas) || !has(self.replicas.min) || self.replicas.min >= 1) && (!has(self.replicas) || !has(self.replicas.idleReplicaCount)))").message(Message::Message("replicas: cpu and memory triggers alone cannot scale to zero (KEDA rule): set replicas.min >= 1 and drop idleReplicaCount, or add a queue-style trigger".into())).field_path(".replicas"))]
#[x_kube(validation = Rule::new("!has(self.schedule) || !has(self.schedule.suspendAfterIdleSeconds) || (has(self.scaling) && (has(self.scaling.http) || (has(self.scaling.triggers) && size(self.scaling.triggers) > 0)))").message(Message::Message("schedule.suspendAfterIdleSeconds needs scaling.triggers or scaling.http: KEDA's activity is the only idle signal; add a trigger or remove suspendAfterIdleSeconds".into())).field_path(".schedule.suspendAfterIdleSeconds"))]
#[x_kube(validation = Rule::new("!has(self.scaling) || !has(self.scaling.http) || has(self.gateway)").message(Message::Message("scaling.http needs gateway: requests reach the KEDA HTTP add-on's interceptor only through the service's HTTPRoute; add gateway or remove scaling.http".into())).field_path(".scaling.http"))]
#[x_kube(validation = super::rules::shared_memory_volumes())]
#[x_kube(validation = super::rules::unique("volumes", "name", "volumes"))]
#[x_kube(validation = super::rules::unique("volumes", "mountPath", "volumes"))]
#[x_kube(validation = super::rules::unique("initContainers", "name", "initContainers"))]
pub struct InferenceServiceSpec {
    /// `automatic` (absent), `active` or `suspended`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<Intent>,
    /// Scheduled suspend (`expiresAt`) and suspend after idle (`suspendAfterIdleSeconds`): the effective intent
    /// becomes `suspended` at that time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<crate::ServiceSchedule>,
    /// The model served.
    pub model: Model,
    /// The serving container.
    pub container: ServingContainer,
    /// Init containers, e.g. a weights prefetch into a shared volume.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 8))]
    pub init_containers: Option<Vec<InitContainer>>,
    /// Volumes mounted into every container.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 16))]
    pub volumes: Option<Vec<Volume>>,
    /// GPUs per replica and the fit budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Gpu>,
    /// Replica bounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<Replicas>,
    /// KEDA autoscaling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Scaling>,
    /// HTTPRoute exposure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<Gateway>,
    /// ServiceAccount of the pods; absent means `default`.
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
}

/// Defaults the operator applied, reported so users and Terraform can see effective values.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct InferenceEffective {
    /// Effective intent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<Intent>,
    /// Effective `replicas.min`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<i32>,
    /// Effective `replicas.max`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<i32>,
    /// Effective Gateway `NAMESPACE/NAME`, when routed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
    /// Effective path prefix, when routed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_prefix: Option<String>,
    /// Effective ServiceAccount.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// Effective fit shards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<i32>,
}

/// Observed state of an InferenceService.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct InferenceServiceStatus {
    /// `Ready`, `Progressing`, `RouteReady`, `ScalingReady`, `Suspended`, `Degraded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the status describes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Replicas of the Deployment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Ready replicas of the Deployment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,
    /// `http://<first hostname><pathPrefix>`, the first hostname that is not a wildcard (`*.`), for a service with
    /// `gateway` (`RouteReady` says whether it is routed: the Gateway API CRDs may be missing, or the Gateway may not
    /// have accepted the route); absent without `gateway`, when every hostname is a wildcard, and on a
    /// `HostnameConflict`. A refused spec keeps the URL the last reconcile wrote (the running route's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Smallest capacity class that fits the budget, e.g. `80gi`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_class: Option<String>,
    /// Per-GPU budget in GiB (2^30 bytes), rounded up to a whole GiB.
    #[serde(rename = "perGpuMemoryGiB", skip_serializing_if = "Option::is_none")]
    pub per_gpu_memory_gib: Option<i64>,
    /// KV caches sized from the model's shape (`gpu.fit.modules[].kvCache.fromShape`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    pub kv_cache: Option<Vec<crate::KvCacheStatus>>,
    /// What `spec.schedule` will do next, while it has not happened yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_transition: Option<crate::NextTransition>,
    /// The idle period counted for `spec.schedule.suspendAfterIdleSeconds`, and the idle suspension while it lasts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle: Option<crate::IdleStatus>,
    /// Effective defaults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective: Option<InferenceEffective>,
}
