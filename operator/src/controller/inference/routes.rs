//! Route claims across namespaces (issue 18, "hostname conflict"): which InferenceService may serve a hostname and
//! path on a Gateway, decided by the pure [`model_fleet_api::routing`] over the controller's cache of
//! InferenceServices, and which services to reconcile again when one of them changes.

use std::sync::RwLock;

use kube::core::DeserializeGuard;
use kube::runtime::reflector::{ObjectRef, Store};
use model_fleet_api::InferenceService;
use model_fleet_api::render::RenderConfig;
use model_fleet_api::routing::{self, Conflict};

/// The controller's cache of InferenceServices (every watched namespace).
pub type ServiceStore = Store<DeserializeGuard<InferenceService>>;

/// The cache of the running controller, attached each time the controller is built.
#[derive(Debug, Default)]
pub struct AttachedStore(RwLock<Option<ServiceStore>>);

impl AttachedStore {
    /// Attaches the cache of the controller just built, replacing the previous one: the controllers start again
    /// each time the Lease is acquired, and a stopped controller's cache is never updated again.
    pub fn attach(&self, store: ServiceStore) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Some(store);
    }

    /// The current cache (a cheap handle), if a controller was built.
    pub fn get(&self) -> Option<ServiceStore> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The cache the claims are read from, attached when the controller is built.
#[derive(Debug, Default)]
pub struct RouteClaims {
    store: AttachedStore,
}

impl RouteClaims {
    /// Attaches the controller's cache ([`AttachedStore::attach`]).
    pub fn attach(&self, store: ServiceStore) {
        self.store.attach(store);
    }

    /// The claim of `isvc` that an older InferenceService holds, if any. Waits for the cache's first complete list,
    /// so a reconcile right after start never decides from a partial view; `None` without a cache (the controller
    /// is not running, or it stopped).
    pub async fn conflict(
        &self,
        isvc: &InferenceService,
        config: &RenderConfig,
    ) -> Option<Conflict> {
        let store = self.store.get()?;
        store.wait_until_ready().await.ok()?;
        let services = store.state();
        routing::conflict(
            isvc,
            services.iter().filter_map(|s| s.0.as_ref().ok()),
            config,
        )
    }
}

/// The services to reconcile after `changed` was created, updated or deleted: those sharing one of its claims
/// ([`routing::contenders`]). An object that does not deserialize claims nothing.
pub fn contenders(
    store: &ServiceStore,
    changed: &DeserializeGuard<InferenceService>,
    config: &RenderConfig,
) -> Vec<ObjectRef<DeserializeGuard<InferenceService>>> {
    let Ok(changed) = changed.0.as_ref() else {
        return Vec::new();
    };
    let services = store.state();
    routing::contenders(
        changed,
        services.iter().filter_map(|s| s.0.as_ref().ok()),
        config,
    )
    .into_iter()
    .map(|isvc| {
        let meta = &isvc.metadata;
        ObjectRef::new(meta.name.as_deref().unwrap_or_default())
            .within(meta.namespace.as_deref().unwrap_or_default())
    })
    .collect()
}
