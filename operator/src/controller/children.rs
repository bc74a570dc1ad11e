//! Metadata-only caches of owned children (issue 17).
//!
//! One metadata-only watch per child kind (a watch of `PartialObjectMetadata`: names, labels, owner references, no
//! spec or status) feeds two readers:
//! - the controller, which reconciles the owner of every child created, changed or deleted
//!   (`Controller::owns_stream_with`), as `Controller::owns` would with a watch of whole objects;
//! - prune ([`ChildCaches::labelled`]), which finds the children of one owner in the cache instead of sending one
//!   LIST per kind and reconcile (a LIST with a label selector makes the API server walk every object of the kind in
//!   the namespace: quadratic work across N owners); an index of the cached names by owner, kept from the same
//!   watch ([`WatchIndex`]), finds them without walking every cached child of the kind either.
//!
//! `managedFields` are dropped before the cache stores an object (nothing reads them here; they are most of a small
//! object's metadata).
//!
//! A child event that only reports the operator's own write does not trigger its owner: the reconcile that wrote the
//! child read the object the write returned ([`ChildCaches::wrote`]), so reconciling again for the same version
//! would only repeat it. Any other change (another writer, a controller's status update, a deletion) has a newer
//! `resourceVersion` and triggers as before.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, RwLock};

use futures::{FutureExt as _, Stream, TryStreamExt as _};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, PartialObjectMeta};
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt as _};

use super::index::{Indexer, WatchIndex};
use super::runtime::{watch_config, without_managed_fields};

/// Metadata of one cached child.
pub type ChildMeta = PartialObjectMeta<DynamicObject>;

/// Which cache: the owner label its watch selects on (e.g. `modelfleet.io/inference`) and the child kind.
type CacheKey = (&'static str, String);

/// One child cache: the resource its watch lists (the store's keys carry it), the store, and its children by owner.
#[derive(Clone, Debug)]
struct Cache {
    resource: ApiResource,
    store: Store<ChildMeta>,
    by_owner: Arc<RwLock<WatchIndex<ByOwner>>>,
}

/// The names of the cached children by `(namespace, owner label value)`: what prune asks, without walking every
/// cached child of the kind.
#[derive(Debug)]
struct ByOwner {
    label: &'static str,
    names: HashMap<(String, String), BTreeSet<String>>,
    /// `(namespace, name)` of each indexed child -> its owner label value.
    owner_of: HashMap<(String, String), String>,
}

impl ByOwner {
    fn new(label: &'static str) -> Self {
        Self {
            label,
            names: HashMap::new(),
            owner_of: HashMap::new(),
        }
    }

    fn key(child: &ChildMeta) -> (String, String) {
        let meta = &child.metadata;
        (
            meta.namespace.clone().unwrap_or_default(),
            meta.name.clone().unwrap_or_default(),
        )
    }
}

impl Indexer<ChildMeta> for ByOwner {
    fn empty(&self) -> Self {
        ByOwner::new(self.label)
    }

    fn upsert(&mut self, child: &ChildMeta) {
        self.remove(child);
        let Some(owner) = child.labels().get(self.label) else {
            return;
        };
        let (namespace, name) = Self::key(child);
        self.names
            .entry((namespace.clone(), owner.clone()))
            .or_default()
            .insert(name.clone());
        self.owner_of.insert((namespace, name), owner.clone());
    }

    fn remove(&mut self, child: &ChildMeta) {
        let (namespace, name) = Self::key(child);
        let Some(owner) = self.owner_of.remove(&(namespace.clone(), name.clone())) else {
            return;
        };
        let key = (namespace, owner);
        if let Some(names) = self.names.get_mut(&key) {
            names.remove(&name);
            if names.is_empty() {
                self.names.remove(&key);
            }
        }
    }
}

/// The child caches of the running controllers. A controller attaches its caches each time it is built (the
/// controllers start again each time the Lease is acquired; a stopped controller's cache is never updated again).
#[derive(Debug, Default)]
pub struct ChildCaches {
    caches: RwLock<HashMap<CacheKey, Cache>>,
    own_writes: Arc<OwnWrites>,
    /// The children [`recreate`](super::recreate) deleted and created again lately.
    pub recreated: super::recreate::RecentRecreates,
}

/// The `resourceVersion` each of the operator's latest child writes returned, by `(kind, namespace, name)`, until
/// the watch delivers that child again. At most one entry per child of a watched kind.
#[derive(Debug, Default)]
struct OwnWrites(Mutex<HashMap<(String, String, String), String>>);

impl OwnWrites {
    fn record(&self, kind: &str, namespace: &str, name: &str, resource_version: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(
            (kind.to_owned(), namespace.to_owned(), name.to_owned()),
            resource_version.to_owned(),
        );
    }

    /// Whether the watched `child` is exactly the version an own write returned. Forgets the write either way: the
    /// watch has caught up with it (or moved past it).
    fn is_own(&self, kind: &str, child: &ChildMeta) -> bool {
        let meta = &child.metadata;
        let key = (
            kind.to_owned(),
            meta.namespace.clone().unwrap_or_default(),
            meta.name.clone().unwrap_or_default(),
        );
        let written = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
        written.is_some() && written == meta.resource_version
    }
}

impl ChildCaches {
    /// Starts the cache of the children of kind `resource` that carry the label `label` (any value) in `namespace`
    /// (`None`: every namespace), replacing the cache of an earlier run. Returns the stream of children
    /// created, changed or deleted, for `Controller::owns_stream_with(stream, resource)`; the cache fills only while
    /// that stream is polled. Watch errors are retried with kube's default backoff.
    pub fn watch(
        &self,
        client: Client,
        namespace: Option<&str>,
        resource: &ApiResource,
        label: &'static str,
    ) -> impl Stream<Item = Result<ChildMeta, watcher::Error>> + Send + 'static {
        let writer = Writer::new(resource.clone());
        let by_owner = Arc::new(RwLock::new(WatchIndex::new(ByOwner::new(label))));
        self.attach(
            label,
            Cache {
                resource: resource.clone(),
                store: writer.as_reader(),
                by_owner: by_owner.clone(),
            },
        );
        let own_writes = self.own_writes.clone();
        // An `Api` of `PartialObjectMeta` sends metadata-only requests (`as=PartialObjectMetadata`).
        let api: Api<ChildMeta> = match namespace {
            Some(namespace) => Api::namespaced_with(client, namespace, resource),
            None => Api::all_with(client, resource),
        };
        let changes = watcher(api, watch_config().labels(label))
            .default_backoff()
            .modify(without_managed_fields)
            .reflect(writer)
            .inspect_ok(move |event| {
                by_owner
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .observe(event)
            })
            .touched_objects();
        skip_own_writes(changes, own_writes, resource.kind.clone())
    }

    /// Records that the operator wrote `object`, a child of kind `kind`: its watch event with the same
    /// `resourceVersion` then triggers no reconcile. Kinds without a cache are not recorded (no event would ever
    /// clear the entry).
    pub fn wrote(&self, kind: &str, object: &DynamicObject) {
        let meta = &object.metadata;
        let (Some(namespace), Some(name), Some(version)) =
            (&meta.namespace, &meta.name, &meta.resource_version)
        else {
            return;
        };
        let cached = self
            .caches
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .any(|(_, cached)| cached == kind);
        if cached {
            self.own_writes.record(kind, namespace, name, version);
        }
    }

    /// Whether the cache of `resource` children labelled `label` has listed and holds no child named `name` in
    /// `namespace`: then it is absent or was created too recently for the watch to have delivered it (or does not
    /// carry the label: not ours). `false` when no cache of that kind exists or it has not listed yet. Never waits.
    pub fn unseen(&self, label: &'static str, kind: &str, namespace: &str, name: &str) -> bool {
        let Some(cache) = self.cache(label, kind) else {
            return false;
        };
        cache.store.get(&cache.key(namespace, name)).is_none()
    }

    /// The cache of `kind` children labelled `label`, once it has listed (`None` before, or without one).
    fn cache(&self, label: &'static str, kind: &str) -> Option<Cache> {
        let cache = self
            .caches
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(label, kind.to_owned()))
            .cloned()?;
        // Ready means the first list is in the cache; `now_or_never` polls once and never blocks.
        cache.store.wait_until_ready().now_or_never()?.ok()?;
        Some(cache)
    }

    /// Makes `cache` the cache of its kind's children labelled `label`.
    fn attach(&self, label: &'static str, cache: Cache) {
        self.caches
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert((label, cache.resource.kind.clone()), cache);
    }

    /// The metadata of the cached children of `kind` in `namespace` labelled `label=value`, or `None` when no cache
    /// of that kind exists or it has not finished its first list (the caller lists instead). Never waits.
    pub fn labelled(
        &self,
        kind: &str,
        namespace: &str,
        (label, value): (&'static str, &str),
    ) -> Option<Vec<ObjectMeta>> {
        let cache = self.cache(label, kind)?;
        let by_owner = cache.by_owner.read().unwrap_or_else(|e| e.into_inner());
        let names = by_owner
            .get()?
            .names
            .get(&(namespace.to_owned(), value.to_owned()));
        Some(
            names
                .into_iter()
                .flatten()
                .filter_map(|name| cache.store.get(&cache.key(namespace, name)))
                .map(|child| child.metadata.clone())
                .collect(),
        )
    }
}

impl Cache {
    /// The store's key of `namespace/name`, as its writer makes it: with the resource of the cache's own watch.
    fn key(&self, namespace: &str, name: &str) -> ObjectRef<ChildMeta> {
        ObjectRef::new_with(name, self.resource.clone()).within(namespace)
    }
}

/// `changes` without the children that are exactly what an own write returned ([`OwnWrites::is_own`]).
fn skip_own_writes<E>(
    changes: impl Stream<Item = Result<ChildMeta, E>>,
    own_writes: Arc<OwnWrites>,
    kind: String,
) -> impl Stream<Item = Result<ChildMeta, E>> {
    changes.try_filter(move |child| std::future::ready(!own_writes.is_own(&kind, child)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::core::PartialObjectMetaExt as _;
    use kube::runtime::watcher::Event;

    const LABEL: &str = "modelfleet.io/inference";

    type Index = Arc<RwLock<WatchIndex<ByOwner>>>;

    /// A cache of `resource` attached to `caches` as `watch` attaches one; events go to both through [`feed`].
    fn attach(caches: &ChildCaches, resource: &ApiResource) -> (Writer<ChildMeta>, Index) {
        let writer = Writer::new(resource.clone());
        let by_owner = Arc::new(RwLock::new(WatchIndex::new(ByOwner::new(LABEL))));
        let cache = Cache {
            resource: resource.clone(),
            store: writer.as_reader(),
            by_owner: by_owner.clone(),
        };
        caches.attach(LABEL, cache);
        (writer, by_owner)
    }

    /// What the watch stream does with an event: the store takes it, then the index.
    fn feed(writer: &mut Writer<ChildMeta>, by_owner: &Index, event: Event<ChildMeta>) {
        writer.apply_watcher_event(&event);
        by_owner.write().unwrap().observe(&event);
    }

    fn child(namespace: &str, name: &str, owner: &str) -> ChildMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some([(LABEL.to_owned(), owner.to_owned())].into()),
            ..ObjectMeta::default()
        }
        .into_response_partial()
    }

    fn versioned(name: &str, version: &str) -> ChildMeta {
        let mut child = child("ml", name, name);
        child.metadata.resource_version = Some(version.into());
        child
    }

    fn written(name: &str, version: &str) -> DynamicObject {
        let mut object =
            DynamicObject::new(name, &ApiResource::erase::<Deployment>(&())).within("ml");
        object.metadata.resource_version = Some(version.into());
        object
    }

    #[test]
    fn a_child_event_of_an_own_write_triggers_nothing_and_any_other_change_does() {
        let caches = ChildCaches::default();
        let resource = ApiResource::erase::<Deployment>(&());
        let (_writer, _) = attach(&caches, &resource);
        caches.wrote("Deployment", &written("chat", "5"));
        caches.wrote("Deployment", &written("chat", "7"));
        caches.wrote("Deployment", &written("other", "9"));
        // Not a watched kind: nothing is recorded (no event would ever clear it).
        caches.wrote("ConfigMap", &written("chat", "11"));
        let events = vec![
            Ok::<_, ()>(versioned("chat", "5")), // older than the latest own write: someone else's, passes
            Ok(versioned("chat", "7")),          // forgotten by the event before
            Ok(versioned("other", "9")),         // the own write: skipped
            Ok(versioned("other", "9")),         // the same version again (a relist): passes
            Ok(versioned("other", "12")),        // a later change: passes
            Err(()),                             // watch errors pass untouched
        ];
        let passed: Vec<_> = futures::executor::block_on(
            skip_own_writes(
                futures::stream::iter(events),
                caches.own_writes.clone(),
                "Deployment".into(),
            )
            .map(|item| {
                item.map(|c| {
                    (
                        c.metadata.name.unwrap(),
                        c.metadata.resource_version.unwrap(),
                    )
                })
            })
            .collect(),
        );
        let pass = |name: &str, version: &str| Ok((name.to_owned(), version.to_owned()));
        assert_eq!(
            passed,
            vec![
                pass("chat", "5"),
                pass("chat", "7"),
                pass("other", "9"),
                pass("other", "12"),
                Err(())
            ]
        );
        assert!(
            !caches
                .own_writes
                .is_own("ConfigMap", &versioned("chat", "11")),
            "an uncached kind was not recorded"
        );
    }

    #[test]
    fn answers_from_the_cache_only_once_it_has_listed() {
        let resource = ApiResource::erase::<Deployment>(&());
        let caches = ChildCaches::default();
        let (mut writer, by_owner) = attach(&caches, &resource);
        assert_eq!(
            caches.labelled("Deployment", "ml", (LABEL, "chat")),
            None,
            "not listed yet"
        );
        assert!(
            !caches.unseen(LABEL, "Deployment", "ml", "new"),
            "not listed yet: unknown, so read"
        );
        assert_eq!(
            caches.labelled("Service", "ml", (LABEL, "chat")),
            None,
            "no cache of that kind"
        );

        feed(&mut writer, &by_owner, Event::Init);
        for object in [
            child("ml", "chat", "chat"),
            child("ml", "chat-route", "chat"),
            child("ml", "other", "other"),
            child("dev", "chat", "chat"),
        ] {
            feed(&mut writer, &by_owner, Event::InitApply(object));
        }
        feed(&mut writer, &by_owner, Event::InitDone);
        let names = |found: Option<Vec<ObjectMeta>>| -> Vec<String> {
            found
                .unwrap_or_default()
                .into_iter()
                .filter_map(|m| m.name)
                .collect()
        };
        assert_eq!(
            names(caches.labelled("Deployment", "ml", (LABEL, "chat"))),
            ["chat", "chat-route"]
        );
        assert!(names(caches.labelled("Deployment", "ml", (LABEL, "gone"))).is_empty());
        assert_eq!(
            caches.labelled("Deployment", "ml", (LABEL, "gone")),
            Some(Vec::new()),
            "listed: empty, not unknown"
        );
        assert!(caches.unseen(LABEL, "Deployment", "ml", "new"));
        assert!(
            caches.unseen(LABEL, "Deployment", "staging", "chat"),
            "by namespace"
        );
        assert!(!caches.unseen(LABEL, "Deployment", "ml", "chat"));
        assert!(
            !caches.unseen(LABEL, "Service", "ml", "new"),
            "no cache of that kind"
        );
        assert!(
            !caches.unseen("modelfleet.io/training", "Deployment", "ml", "new"),
            "no cache under that label"
        );

        // A child that changes owner, and one deleted, leave the index as the store.
        feed(
            &mut writer,
            &by_owner,
            Event::Apply(child("ml", "chat-route", "other")),
        );
        feed(
            &mut writer,
            &by_owner,
            Event::Delete(child("ml", "chat", "chat")),
        );
        assert!(names(caches.labelled("Deployment", "ml", (LABEL, "chat"))).is_empty());
        assert_eq!(
            names(caches.labelled("Deployment", "ml", (LABEL, "other"))),
            ["chat-route", "other"]
        );
        let index = by_owner.read().unwrap();
        let index = index.get().unwrap();
        assert_eq!((index.names.len(), index.owner_of.len()), (2, 3));
    }
}
