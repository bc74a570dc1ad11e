//! Route claims across namespaces (issue 18, "hostname conflict"): which InferenceService may serve a hostname and
//! path on a Gateway, decided by the pure [`model_fleet_api::routing`] over the controller's cache of
//! InferenceServices, and which services to reconcile again when one of them changes.
//!
//! Both look only at the services a [`ClaimIndex`] says share a Gateway, hostname and path with the one at hand; the
//! index is kept from the same watch events as the cache, right after it (DESIGN.md section 5, issue 17: without it
//! every reconcile and every watch event compared against every cached service). Until the index has the watch's
//! first complete list, both read the whole cache as before.

use std::sync::{Arc, RwLock};

use kube::core::DeserializeGuard;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use model_fleet_api::InferenceService;
use model_fleet_api::render::RenderConfig;
use model_fleet_api::routing::{self, ClaimIndex, Conflict};

use crate::controller::index::{Indexer, WatchIndex};

/// The controller's cache of InferenceServices (every watched namespace).
pub type ServiceStore = Store<DeserializeGuard<InferenceService>>;

/// A cached InferenceService.
type Cached = Arc<DeserializeGuard<InferenceService>>;

/// How the index and the cache name a service.
type ServiceRef = ObjectRef<DeserializeGuard<InferenceService>>;

/// The claim index of the cached services ([`ClaimIndex`]), with the render configuration that decides claims.
#[derive(Debug)]
struct Claims {
    index: ClaimIndex<ServiceRef>,
    config: RenderConfig,
}

impl Indexer<DeserializeGuard<InferenceService>> for Claims {
    fn empty(&self) -> Self {
        Claims {
            index: ClaimIndex::default(),
            config: self.config.clone(),
        }
    }

    /// An object that does not deserialize claims nothing.
    fn upsert(&mut self, object: &DeserializeGuard<InferenceService>) {
        let service = ObjectRef::from_obj(object);
        match &object.0 {
            Ok(isvc) => self.index.upsert(service, isvc, &self.config),
            Err(_) => self.index.remove(&service),
        }
    }

    fn remove(&mut self, object: &DeserializeGuard<InferenceService>) {
        self.index.remove(&ObjectRef::from_obj(object));
    }
}

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

/// The cache the claims are read from, attached when the controller is built, and the claim index kept from its
/// watch ([`RouteClaims::observe`]).
#[derive(Debug, Default)]
pub struct RouteClaims {
    store: AttachedStore,
    index: RwLock<Option<WatchIndex<Claims>>>,
}

impl RouteClaims {
    /// Attaches the controller's cache ([`AttachedStore::attach`]) and starts the claim index afresh for claims
    /// decided with `config`: it is used once the new controller's watch has listed.
    pub fn attach(&self, store: ServiceStore, config: &RenderConfig) {
        self.store.attach(store);
        let claims = Claims {
            index: ClaimIndex::default(),
            config: config.clone(),
        };
        *self.index.write().unwrap_or_else(|e| e.into_inner()) = Some(WatchIndex::new(claims));
    }

    /// Keeps the claim index from one event of the watch that fills the attached cache (called right after the
    /// cache took the event). Returns the services that shared a bucket with the changed service's claims before
    /// the event ([`ClaimIndex::sharing_recorded`]): a change may free a claim they wait for. Nothing before
    /// [`RouteClaims::attach`], and no services before the index has the watch's first complete list.
    pub fn observe(
        &self,
        event: &watcher::Event<DeserializeGuard<InferenceService>>,
    ) -> Vec<ServiceRef> {
        let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
        let Some(index) = index.as_mut() else {
            return Vec::new();
        };
        let before = match (event, index.get()) {
            // InitApply too: during a re-list after a watch gap the index still holds the claims from before it.
            (
                watcher::Event::Apply(changed)
                | watcher::Event::InitApply(changed)
                | watcher::Event::Delete(changed),
                Some(claims),
            ) => claims
                .index
                .sharing_recorded(&ObjectRef::from_obj(changed))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        };
        index.observe(event);
        before
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
        let services = self.sharing(&store, isvc, config);
        routing::conflict(
            isvc,
            services.iter().filter_map(|s| s.0.as_ref().ok()),
            config,
        )
    }

    /// The services to reconcile after `changed` was created, updated or deleted: those sharing one of its claims
    /// ([`routing::contenders`]). An object that does not deserialize claims nothing; nothing without a cache.
    pub fn contenders(
        &self,
        changed: &DeserializeGuard<InferenceService>,
        config: &RenderConfig,
    ) -> Vec<ServiceRef> {
        let (Ok(changed), Some(store)) = (changed.0.as_ref(), self.store.get()) else {
            return Vec::new();
        };
        let services = self.sharing(&store, changed, config);
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

    /// The cached services that may share a claim with `isvc`: those the index names once it is ready, else every
    /// cached service.
    fn sharing(
        &self,
        store: &ServiceStore,
        isvc: &InferenceService,
        config: &RenderConfig,
    ) -> Vec<Cached> {
        let index = self.index.read().unwrap_or_else(|e| e.into_inner());
        let Some(claims) = index.as_ref().and_then(WatchIndex::get) else {
            return store.state();
        };
        claims
            .index
            .sharing(isvc, config)
            .iter()
            .filter_map(|service| store.get(service))
            .collect()
    }
}
