//! Shared state of every reconciler: the client, the Event recorder, metrics, health, operator configuration,
//! optional-dependency discovery and per-object backoff.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use kube::core::{NamespaceResourceScope, Resource};
use kube::runtime::controller::Action;
use kube::runtime::events::{Recorder, Reporter};
use kube::{Api, Client, ResourceExt};

use super::apply::FIELD_MANAGER;
use super::backoff::{BackoffPolicy, ErrorBackoff};
use super::discovery::DependencyCache;
use super::error::Error;
use crate::telemetry::{Health, Metrics};

/// A Gateway API `Gateway` reference given as `NAMESPACE/NAME` (`--default-gateway`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayRef {
    /// Namespace of the Gateway.
    pub namespace: String,
    /// Name of the Gateway.
    pub name: String,
}

impl FromStr for GatewayRef {
    type Err = String;

    /// Parses `NAMESPACE/NAME`; both parts must be non-empty DNS labels/subdomains (lowercase alphanumerics, `-`,
    /// `.`), as the API server would require.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (namespace, name) = text
            .split_once('/')
            .ok_or_else(|| format!("expected NAMESPACE/NAME, got {text:?}"))?;
        let valid = |part: &str| {
            !part.is_empty()
                && part.len() <= 253
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
                && part.starts_with(|c: char| c.is_ascii_alphanumeric())
                && part.ends_with(|c: char| c.is_ascii_alphanumeric())
        };
        if !valid(namespace) || !valid(name) {
            return Err(format!(
                "expected NAMESPACE/NAME with lowercase DNS names, got {text:?}"
            ));
        }
        Ok(Self {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        })
    }
}

impl fmt::Display for GatewayRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Default period (seconds: 300) after which a settled object is reconciled again even without a change.
pub const DEFAULT_RESYNC: Duration = Duration::from_secs(300);

/// Operator-wide settings from the `run` flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorConfig {
    /// `--default-gateway`: the Gateway an HTTPRoute attaches to when the spec names none (DESIGN.md section 3).
    pub default_gateway: Option<GatewayRef>,
    /// `--watch-namespace`: the one namespace watched, or `None` for all namespaces.
    pub watch_namespace: Option<String>,
    /// This process's identity (Lease holder, Event reporting instance).
    pub identity: String,
    /// `--resync-seconds`: requeue period of settled objects ([`DEFAULT_RESYNC`]).
    pub resync: Duration,
}

impl Default for OperatorConfig {
    fn default() -> Self {
        Self {
            default_gateway: None,
            watch_namespace: None,
            identity: String::new(),
            resync: DEFAULT_RESYNC,
        }
    }
}

/// Everything a reconcile needs besides the object; shared as `Arc<Context>`.
pub struct Context {
    /// Kubernetes client.
    pub client: Client,
    /// Event recorder (reporting controller `model-fleet-operator`, instance = identity).
    pub recorder: Recorder,
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
            recorder: Recorder::new(client.clone(), reporter),
            dependencies: DependencyCache::new(client.clone()),
            backoff: ErrorBackoff::new(BackoffPolicy::default()),
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

    /// After a successful reconcile of `kind`: resets the object's error backoff.
    pub fn reconcile_succeeded<K: Resource>(&self, kind: &str, object: &K) {
        self.backoff.succeeded(&object_key(kind, object));
    }

    /// After a failed reconcile of `kind`: counts the error by its `metric_label`, logs it and
    /// returns the requeue after the object's next backoff delay.
    pub fn reconcile_failed<K: Resource>(&self, kind: &str, object: &K, error: &Error) -> Action {
        let key = object_key(kind, object);
        self.metrics.reconcile_failed(kind, error.metric_label());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_gateway_refs() {
        let gw: GatewayRef = "gateway-system/shared".parse().unwrap();
        assert_eq!(gw.namespace, "gateway-system");
        assert_eq!(gw.name, "shared");
        assert_eq!(gw.to_string(), "gateway-system/shared");
        for bad in [
            "shared",
            "/shared",
            "ns/",
            "NS/shared",
            "ns/sha red",
            "a/b/c",
            "-ns/x",
        ] {
            assert!(
                bad.parse::<GatewayRef>().is_err(),
                "{bad} should be refused"
            );
        }
    }
}
