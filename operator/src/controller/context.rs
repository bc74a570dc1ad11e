//! Shared state of every reconciler: the client, the Event recorder, metrics, health, operator configuration,
//! optional-dependency discovery and per-object backoff.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use kube::core::{ApiResource, NamespaceResourceScope, Resource};
use kube::runtime::controller::Action;
use kube::runtime::events::Reporter;
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};

use super::backoff::{BackoffPolicy, ErrorBackoff};
use super::children::{ChildCaches, ChildMeta};
use super::discovery::DependencyCache;
use super::error::Error;
use super::events::EventRecorder;
use super::failpoint::Failpoint;
use super::inference::PROGRESS_REQUEUE;
use super::inference::routes::RouteClaims;
use super::inference::wake::WakeGrants;
use super::written::StatusWrites;
use crate::telemetry::{Health, Metrics};
use model_fleet_api::render::{FIELD_MANAGER, RenderConfig};

/// How often a reconcile that waits on something outside it ([`Error::is_wait`]: a child name taken by a foreign
/// object) is retried: steady, not the growing backoff of failures, so it recovers within this long of the object
/// going away.
pub const WAIT_RETRY: Duration = Duration::from_secs(5);

/// When a reconcile whose write met a 409 Conflict (the object changed since it was read) runs again (seconds: 1).
/// Usually the watch event of that change has already queued it.
pub const CONFLICT_RETRY: Duration = Duration::from_secs(1);

/// Default period (seconds: 300) after which a settled object is reconciled again even without a change.
pub const DEFAULT_RESYNC: Duration = Duration::from_secs(300);

/// Default of `--max-concurrent-reconciles` (per controller): enough to keep the API server busy, few enough that a
/// burst of 1000 objects does not push it past its in-flight limit (measured in docs/PERFORMANCE.md).
pub const DEFAULT_MAX_CONCURRENT_RECONCILES: u16 = 16;

/// Operator-wide settings from the `run` flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorConfig {
    /// What rendering depends on: `--default-gateway` (the Gateway an HTTPRoute attaches to when the spec names none,
    /// DESIGN.md section 3) and the hidden `--test-training-default-env`.
    pub render: RenderConfig,
    /// Hidden `--test-failpoint`: a point at which the process exits abruptly (crash-safety tests); `None` in
    /// production.
    pub failpoint: Option<Failpoint>,
    /// `--watch-namespace`: the one namespace watched, or `None` for all namespaces.
    pub watch_namespace: Option<String>,
    /// This process's identity (Lease holder, Event reporting instance).
    pub identity: String,
    /// `--resync-seconds`: requeue period of settled objects ([`DEFAULT_RESYNC`]).
    pub resync: Duration,
    /// Hidden `--test-progress-requeue-seconds`: requeue period of InferenceServices that are not settled
    /// ([`PROGRESS_REQUEUE`]).
    pub progress_requeue: Duration,
    /// `--max-concurrent-reconciles`: reconciles each controller runs at once ([`DEFAULT_MAX_CONCURRENT_RECONCILES`]).
    pub max_concurrent_reconciles: u16,
    /// `false` with `--http-add-on=disabled`: the KEDA HTTP add-on is treated as absent whatever discovery says
    /// ([`DependencyCache::new`]), and `DependencyMissing` names the flag rather than the CRD.
    pub http_add_on_enabled: bool,
}

impl Default for OperatorConfig {
    fn default() -> Self {
        Self {
            render: RenderConfig::default(),
            failpoint: None,
            watch_namespace: None,
            identity: String::new(),
            resync: DEFAULT_RESYNC,
            progress_requeue: PROGRESS_REQUEUE,
            max_concurrent_reconciles: DEFAULT_MAX_CONCURRENT_RECONCILES,
            http_add_on_enabled: true,
        }
    }
}

/// Everything a reconcile needs besides the object; shared as `Arc<Context>`.
pub struct Context {
    /// Kubernetes client.
    pub client: Client,
    /// Event recorder (reporting controller `model-fleet-operator`, instance = identity).
    pub recorder: EventRecorder,
    /// Reconcile metrics.
    pub metrics: Metrics,
    /// Health facts (controllers mark their caches synced here).
    pub health: Arc<Health>,
    /// Flags.
    pub config: OperatorConfig,
    /// Which optional CRDs exist.
    pub dependencies: DependencyCache,
    /// Per-object error backoff.
    pub backoff: ErrorBackoff,
    /// The InferenceService cache that hostname and path claims are decided from.
    pub route_claims: RouteClaims,
    /// The KEDA HTTP add-on ReferenceGrants the operator keeps (`scaling.http`).
    pub wake_grants: WakeGrants,
    /// Metadata-only caches of owned children (owner triggers and prune).
    pub children: ChildCaches,
    /// The objects the latest status writes returned, until the watch delivers them.
    pub status_writes: StatusWrites,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// Builds the context with the default backoff policy (1 s doubling to 5 min).
    pub fn new(
        client: Client,
        metrics: Metrics,
        health: Arc<Health>,
        config: OperatorConfig,
    ) -> Self {
        let reporter = Reporter {
            controller: FIELD_MANAGER.to_owned(),
            instance: Some(config.identity.clone()),
        };
        Self {
            recorder: EventRecorder::new(client.clone(), reporter),
            dependencies: DependencyCache::new(client.clone(), config.http_add_on_enabled),
            backoff: ErrorBackoff::new(BackoffPolicy::default()),
            route_claims: RouteClaims::default(),
            wake_grants: WakeGrants::default(),
            children: ChildCaches::default(),
            status_writes: StatusWrites::default(),
            client,
            metrics,
            health,
            config,
        }
    }

    /// The API of a namespaced kind restricted to `--watch-namespace` (all namespaces without it).
    pub fn watched_api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>,
    {
        match &self.config.watch_namespace {
            Some(namespace) => Api::namespaced(self.client.clone(), namespace),
            None => Api::all(self.client.clone()),
        }
    }

    /// Starts the metadata-only cache of children of kind `resource` labelled `label` in the watched namespace(s)
    /// and returns its stream for `Controller::owns_stream_with` ([`ChildCaches::watch`]).
    pub fn watch_children(
        &self,
        resource: &ApiResource,
        label: &'static str,
    ) -> impl Stream<Item = Result<ChildMeta, watcher::Error>> + Send + 'static {
        let namespace = self.config.watch_namespace.as_deref();
        self.children
            .watch(self.client.clone(), namespace, resource, label)
    }

    /// The kube-rs controller settings every controller runs with: at most `--max-concurrent-reconciles` reconciles
    /// at once, kube-rs's default debounce (none).
    pub fn controller_config(&self) -> kube::runtime::controller::Config {
        kube::runtime::controller::Config::default()
            .concurrency(self.config.max_concurrent_reconciles)
    }

    /// After a successful reconcile of `kind`: resets the object's error backoff.
    pub fn reconcile_succeeded<K: Resource>(&self, kind: &str, object: &K) {
        self.backoff.succeeded(&object_key(kind, object));
    }

    /// Counts a failed reconcile of `kind` by the error's step and class.
    pub fn count_error(&self, kind: &str, error: &Error) {
        self.metrics
            .reconcile_failed(kind, error.step().as_str(), error.metric_label());
    }

    /// After a failed reconcile of `kind`: counts the error ([`Context::count_error`]), logs it and returns the
    /// requeue after the object's next backoff delay. A status write refused because the object changed since it was
    /// read ([`Error::is_conflict`]) is counted as a conflict instead and retried after [`CONFLICT_RETRY`].
    pub fn reconcile_failed<K: Resource>(&self, kind: &str, object: &K, error: &Error) -> Action {
        let key = object_key(kind, object);
        if error.is_conflict() {
            self.metrics.reconcile_conflicted(kind);
            tracing::debug!(object = %key, error = %error, "the object changed while it was reconciled: retrying on fresh data");
            return Action::requeue(CONFLICT_RETRY);
        }
        self.count_error(kind, error);
        if error.is_wait() {
            tracing::info!(object = %key, error = %error, retry_in_seconds = WAIT_RETRY.as_secs(), "reconcile waits");
            return Action::requeue(WAIT_RETRY);
        }
        let delay = self.backoff.failed(&key);
        tracing::warn!(object = %key, error = %error, retry_in_seconds = delay.as_secs_f64(), "reconcile failed");
        Action::requeue(delay)
    }
}

/// `kind/namespace/name` of an object: the backoff and log key.
pub fn object_key<K: Resource>(kind: &str, object: &K) -> String {
    format!(
        "{kind}/{}/{}",
        object.namespace().unwrap_or_default(),
        object.name_any()
    )
}
