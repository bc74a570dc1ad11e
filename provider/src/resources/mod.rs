//! Managed resources and data sources: the [`Resource`] trait every `modelfleet_*` resource type implements, the
//! [`DataSource`] trait of the data sources reading the same kinds, and the registry the gRPC server dispatches on.
//!
//! Layers (DESIGN.md section 2): [`kind`] is the one small trait per resource kind ([`inference`], [`training`],
//! [`dataset`]: extra attributes, plan-time values, refreshed facts, wait rule); [`object`] is the generic
//! custom-resource type built on a kind (schema, read, apply, import, delete); [`plan`] holds the plan modifiers in
//! one place; [`data_source`] reads an existing object of a kind; [`fields`] derives the spec schema from the CRD
//! and converts values; [`validate`], [`wait`],
//! [`quantity`], [`managed`], [`timeouts`], [`api_error`] and [`capacity`] are the shared pieces.

pub mod api_error;
pub mod attributes;
pub mod capacity;
pub mod cluster_identity;
pub mod data_source;
pub mod dataset;
pub mod fields;
pub mod inference;
pub mod kind;
pub mod managed;
pub mod object;
pub mod outage;
pub mod plan;
pub mod private_state;
pub mod quantity;
pub mod snapshot;
pub mod takeover;
pub mod timeouts;
pub mod training;
pub mod validate;
pub mod wait;

use std::collections::BTreeMap;
use std::sync::Arc;

use self::data_source::{DataSource, ExistingObject};
use crate::client::LazyClient;
use crate::config::ProviderConfig;
use crate::diag::{AttrPath, Diagnostics};
use crate::schema::Schema;
use crate::value::{self, Value};

/// What a configured provider hands to resource operations.
pub struct ProviderContext {
    /// The parsed provider configuration.
    pub config: ProviderConfig,
    /// The Kubernetes client, built on first use.
    pub client: LazyClient,
    /// The identity of the cluster the client talks to ([`cluster_identity`]), read on first use.
    cluster_uid: tokio::sync::OnceCell<Option<String>>,
    /// Refresh reads served from one LIST per kind and namespace ([`snapshot`]).
    pub snapshots: snapshot::Snapshots,
    /// Set when Terraform sends Stop (Ctrl-C): waits and delete polls end early.
    stop: tokio::sync::watch::Receiver<bool>,
}

impl ProviderContext {
    /// A context for `config` (no I/O) that is never stopped.
    pub fn new(config: ProviderConfig) -> ProviderContext {
        let (_, stop) = tokio::sync::watch::channel(false);
        Self::with_stop(config, stop)
    }

    /// A context for `config` whose waits end when `stop` becomes true (the server's Stop RPC).
    pub fn with_stop(
        config: ProviderConfig,
        stop: tokio::sync::watch::Receiver<bool>,
    ) -> ProviderContext {
        let client = LazyClient::new(config.clone());
        ProviderContext {
            config,
            client,
            cluster_uid: tokio::sync::OnceCell::new(),
            snapshots: snapshot::Snapshots::default(),
            stop,
        }
    }

    /// Sleeps `duration` (a poll interval) unless Terraform asks the provider to stop meanwhile (the Stop RPC, which
    /// Terraform sends on Ctrl-C). Returns whether the provider was asked to stop: the caller then ends its wait and
    /// reports the object as it is, instead of holding Terraform until the wait's timeout.
    pub async fn sleep_unless_stopped(&self, duration: std::time::Duration) -> bool {
        let mut stop = self.stop.clone();
        if *stop.borrow() {
            return true;
        }
        tokio::select! {
            () = tokio::time::sleep(duration) => false,
            stopped = stop.wait_for(|stopped| *stopped) => stopped.is_ok(),
        }
    }

    /// `None` when every connection setting is known; otherwise the start of a message naming the unknown ones:
    /// ``The provider's `host` and `token` depend on values known only after apply (such as a cluster this
    /// configuration creates or replaces)``. Terraform sends unknowns to
    /// Configure during a plan when the settings come from something not applied yet (a cluster this configuration
    /// creates or replaces). The client would then be built from the settings known so far or from the default
    /// kubeconfig: another cluster, or the right one without all its settings. So nothing is read: data sources and
    /// import refuse, and a refresh keeps the prior state with a warning (see `crate::server`).
    pub fn unknown_connection(&self) -> Option<String> {
        let names: Vec<String> = self
            .config
            .unknown_connection
            .iter()
            .map(|name| format!("`{name}`"))
            .collect();
        let (list, verb) = match names.as_slice() {
            [] => return None,
            [one] => (one.clone(), "depends"),
            [rest @ .., last] => (format!("{} and {last}", rest.join(", ")), "depend"),
        };
        Some(format!(
            "The provider's {list} {verb} on values known only after apply (such as a cluster this configuration \
             creates or replaces)"
        ))
    }

    /// `Ok` when every connection setting is known; otherwise the error `Provider connection not known yet` saying
    /// that `action` (e.g. ``modelfleet_inference cannot be read``) cannot happen now without risking another cluster,
    /// then `advice` (see [`Self::unknown_connection`]). Import and data source reads call it before any request.
    ///
    /// # Errors
    /// A connection setting is unknown.
    pub fn require_known_connection(&self, action: &str, advice: &str) -> Result<(), Diagnostics> {
        match self.unknown_connection() {
            None => Ok(()),
            Some(unknown) => Err(Diagnostics::error(
                "Provider connection not known yet",
                format!("{unknown}, so {action} now without risking another cluster. {advice}"),
            )),
        }
    }

    /// The identity of the cluster the provider talks to (see [`cluster_identity::current`]), read once per
    /// provider process; `None` when the client cannot be built or the identity cannot be read.
    pub async fn cluster_uid(&self) -> Option<String> {
        self.cluster_uid
            .get_or_init(|| async {
                match self.client.get().await {
                    Ok(client) => cluster_identity::current(client).await,
                    Err(_) => None,
                }
            })
            .await
            .clone()
    }
}

/// The outcome of planning (tfplugin5 `PlanResourceChange.Response`).
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    /// The planned new state (null for a destroy).
    pub state: Value,
    /// Attributes whose change forces replacement.
    pub requires_replace: Vec<AttrPath>,
    /// Warnings about the planned configuration ([`kind::Kind::warnings`]), shown once by `terraform plan`.
    pub warnings: Diagnostics,
}

/// A write of [`Resource::apply`]: the written object's UID (when the API server returned one).
#[derive(Clone, Debug, PartialEq)]
pub struct Wrote {
    /// `metadata.uid` of the object written.
    pub uid: Option<String>,
}

/// What [`Resource::apply`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// The new state: the planned one with its computed values, null after a delete, the prior one on a failed
    /// write.
    pub state: Value,
    /// Warnings, and the errors of a failed write or wait.
    pub diagnostics: Diagnostics,
    /// The write a server-side apply made (`None` for a delete, a failed write, and an update with nothing to send),
    /// which the private state records ([`takeover::written`]).
    pub wrote: Option<Wrote>,
}

/// A managed resource type.
#[tonic::async_trait]
pub trait Resource: Send + Sync {
    /// Terraform type name, e.g. `modelfleet_dataset`.
    fn type_name(&self) -> &str;

    /// The Kubernetes kind behind the type, e.g. `Dataset`, for messages.
    fn kind(&self) -> &str;

    /// The schema (its `version` is what state records).
    fn schema(&self) -> &Schema;

    /// Static checks of a configuration (values may be unknown). No I/O.
    fn validate(&self, config: &Value) -> Diagnostics;

    /// Rewrites stored state of schema `version` (JSON form) into the current schema.
    ///
    /// # Errors
    /// Diagnostics when the state cannot be interpreted.
    fn upgrade(&self, version: i64, json: &[u8]) -> Result<Value, Diagnostics> {
        upgrade_same_version(self.schema(), version, json)
    }

    /// Plans a change. `prior` null = create, `proposed` null = destroy. No I/O.
    ///
    /// # Errors
    /// Diagnostics (with paths) for configurations that cannot be planned.
    fn plan(
        &self,
        ctx: &ProviderContext,
        prior: &Value,
        proposed: &Value,
        config: &Value,
    ) -> Result<Planned, Diagnostics>;

    /// Refreshes `state` from the cluster; null means the object is gone. The diagnostics are warnings (an object
    /// being deleted).
    ///
    /// # Errors
    /// Diagnostics for failures other than "not found".
    async fn read(
        &self,
        ctx: &ProviderContext,
        state: &Value,
    ) -> Result<(Value, Diagnostics), Diagnostics>;

    /// Applies a planned change; `planned` null = delete. `takeover` is what the private state says of forcing an
    /// update's write. Returns the new state (on failure, the state that now exists, e.g. the prior state when a
    /// delete timed out), diagnostics and whether the object was written.
    async fn apply(
        &self,
        ctx: &ProviderContext,
        (prior, planned, config): (&Value, &Value, &Value),
        takeover: &takeover::Takeover,
    ) -> Applied;

    /// Imports an existing object by ID.
    ///
    /// # Errors
    /// Diagnostics for malformed IDs and missing objects.
    async fn import(&self, ctx: &ProviderContext, id: &str) -> Result<Value, Diagnostics>;
}

/// Upgrade for a schema that has only ever had its current version: decode the JSON with the
/// current type. Newer versions (state written by a newer provider) are refused.
///
/// # Errors
/// Diagnostics for a newer version or undecodable JSON.
pub fn upgrade_same_version(
    schema: &Schema,
    version: i64,
    json: &[u8],
) -> Result<Value, Diagnostics> {
    if version > schema.version {
        return Err(Diagnostics::error(
            "State written by a newer provider",
            format!(
                "The state has schema version {version}, this provider knows up to {}. Upgrade \
                 the provider.",
                schema.version
            ),
        ));
    }
    value::json::decode(json, &schema.value_type()).map_err(|e| {
        Diagnostics::error(
            "Cannot read stored state",
            format!("The stored state does not match the resource schema: {e}"),
        )
    })
}

/// Resource and data source types by Terraform type name.
#[derive(Clone, Default)]
pub struct Registry {
    resources: BTreeMap<String, Arc<dyn Resource>>,
    data_sources: BTreeMap<String, Arc<dyn DataSource>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// The registry with every resource and data source this provider ships: one of each per kind.
    pub fn builtin() -> Registry {
        let mut registry = Registry::new();
        let (dataset, inference, training) = (
            Arc::new(dataset::dataset()),
            Arc::new(inference::inference()),
            Arc::new(training::training()),
        );
        registry.register(dataset.clone());
        registry.register(inference.clone());
        registry.register(training.clone());
        registry.register_data_source(Arc::new(ExistingObject::new(dataset)));
        registry.register_data_source(Arc::new(ExistingObject::new(inference)));
        registry.register_data_source(Arc::new(ExistingObject::new(training)));
        registry
    }

    /// Adds a data source type.
    pub fn register_data_source(&mut self, data_source: Arc<dyn DataSource>) {
        self.data_sources
            .insert(data_source.type_name().to_string(), data_source);
    }

    /// The data source type named `type_name`.
    ///
    /// # Errors
    /// A diagnostic naming the unknown type.
    pub fn data_source(&self, type_name: &str) -> Result<&Arc<dyn DataSource>, Diagnostics> {
        self.data_sources.get(type_name).ok_or_else(|| {
            Diagnostics::error(
                "Unknown data source type",
                format!("This provider has no data source type {type_name:?}."),
            )
        })
    }

    /// All data source types, sorted by name.
    pub fn data_sources(&self) -> impl Iterator<Item = &Arc<dyn DataSource>> {
        self.data_sources.values()
    }

    /// Adds a resource type.
    pub fn register(&mut self, resource: Arc<dyn Resource>) {
        self.resources
            .insert(resource.type_name().to_string(), resource);
    }

    /// The resource type named `type_name`.
    ///
    /// # Errors
    /// A diagnostic naming the unknown type.
    pub fn get(&self, type_name: &str) -> Result<&Arc<dyn Resource>, Diagnostics> {
        self.resources.get(type_name).ok_or_else(|| {
            Diagnostics::error(
                "Unknown resource type",
                format!("This provider has no resource type {type_name:?}."),
            )
        })
    }

    /// All resource types, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Resource>> {
        self.resources.values()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_stop_ends_a_poll_sleep_at_once() {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let ctx = ProviderContext::with_stop(ProviderConfig::default(), stopped);
        assert!(!ctx.sleep_unless_stopped(Duration::from_millis(1)).await);
        let (was_stopped, ()) = tokio::time::timeout(
            Duration::from_secs(30),
            futures::future::join(ctx.sleep_unless_stopped(Duration::from_secs(3600)), async {
                stop.send_replace(true);
            }),
        )
        .await
        .expect("the sleep ended on Stop, not after an hour");
        assert!(was_stopped);
        // Once stopped, every later poll returns at once.
        assert!(ctx.sleep_unless_stopped(Duration::from_secs(3600)).await);
        // A context without a stop channel just sleeps.
        let plain = ProviderContext::new(ProviderConfig::default());
        assert!(!plain.sleep_unless_stopped(Duration::from_millis(1)).await);
    }
}
