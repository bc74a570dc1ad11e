//! Metadata-only caches of owned children (issue 17).
//!
//! One metadata-only watch per child kind (a watch of `PartialObjectMetadata`: names, labels, owner references, no
//! spec or status) feeds two readers:
//! - the controller, which reconciles the owner of every child created, changed or deleted
//!   (`Controller::owns_stream_with`), as `Controller::owns` would with a watch of whole objects;
//! - prune ([`ChildCaches::labelled`]), which finds the children of one owner in the cache instead of sending one
//!   LIST per kind and reconcile (a LIST with a label selector makes the API server walk every object of the kind in
//!   the namespace: quadratic work across N owners).
//!
//! `managedFields` are dropped before the cache stores an object (nothing reads them here; they are most of a small
//! object's metadata).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use futures::{FutureExt as _, Stream};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, PartialObjectMeta};
use kube::runtime::reflector::Store;
use kube::runtime::reflector::store::Writer;
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt as _};

/// Metadata of one cached child.
pub type ChildMeta = PartialObjectMeta<DynamicObject>;

/// Which cache: the owner label its watch selects on (e.g. `modelfleet.io/inference`) and the child kind.
type CacheKey = (&'static str, String);

/// The child caches of the running controllers. A controller attaches its caches each time it is built (the
/// controllers start again each time the Lease is acquired; a stopped controller's cache is never updated again).
#[derive(Debug, Default)]
pub struct ChildCaches(RwLock<HashMap<CacheKey, Store<ChildMeta>>>);

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
        self.attach(label, &resource.kind, writer.as_reader());
        // An `Api` of `PartialObjectMeta` sends metadata-only requests (`as=PartialObjectMetadata`).
        let api: Api<ChildMeta> = match namespace {
            Some(namespace) => Api::namespaced_with(client, namespace, resource),
            None => Api::all_with(client, resource),
        };
        watcher(api, watcher::Config::default().labels(label))
            .default_backoff()
            .modify(|child| child.managed_fields_mut().clear())
            .reflect(writer)
            .touched_objects()
    }

    /// Makes `store` the cache of `kind` children labelled `label`.
    fn attach(&self, label: &'static str, kind: &str, store: Store<ChildMeta>) {
        self.0
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert((label, kind.to_owned()), store);
    }

    /// The metadata of the cached children of `kind` in `namespace` labelled `label=value`, or `None` when no cache
    /// of that kind exists or it has not finished its first list (the caller lists instead). Never waits.
    pub fn labelled(
        &self,
        kind: &str,
        namespace: &str,
        (label, value): (&'static str, &str),
    ) -> Option<Vec<ObjectMeta>> {
        let store = self
            .0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(label, kind.to_owned()))
            .cloned()?;
        // Ready means the first list is in the cache; `now_or_never` polls once and never blocks.
        store.wait_until_ready().now_or_never()?.ok()?;
        let children = store.state_filter(|child| {
            child.metadata.namespace.as_deref() == Some(namespace)
                && child.labels().get(label).map(String::as_str) == Some(value)
        });
        Some(
            children
                .iter()
                .map(|child: &Arc<ChildMeta>| child.metadata.clone())
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::core::PartialObjectMetaExt as _;
    use kube::runtime::watcher::Event;

    const LABEL: &str = "modelfleet.io/inference";

    fn child(namespace: &str, name: &str, owner: &str) -> ChildMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some([(LABEL.to_owned(), owner.to_owned())].into()),
            ..ObjectMeta::default()
        }
        .into_response_partial()
    }

    #[test]
    fn answers_from_the_cache_only_once_it_has_listed() {
        let resource = ApiResource::erase::<Deployment>(&());
        let caches = ChildCaches::default();
        let mut writer = Writer::new(resource.clone());
        caches.attach(LABEL, "Deployment", writer.as_reader());
        assert_eq!(
            caches.labelled("Deployment", "ml", (LABEL, "chat")),
            None,
            "not listed yet"
        );
        assert_eq!(
            caches.labelled("Service", "ml", (LABEL, "chat")),
            None,
            "no cache of that kind"
        );

        writer.apply_watcher_event(&Event::Init);
        for object in [
            child("ml", "chat", "chat"),
            child("ml", "other", "other"),
            child("dev", "chat", "chat"),
        ] {
            writer.apply_watcher_event(&Event::InitApply(object));
        }
        writer.apply_watcher_event(&Event::InitDone);
        let names = |found: Option<Vec<ObjectMeta>>| -> Vec<String> {
            found
                .unwrap_or_default()
                .into_iter()
                .filter_map(|m| m.name)
                .collect()
        };
        assert_eq!(
            names(caches.labelled("Deployment", "ml", (LABEL, "chat"))),
            ["chat"]
        );
        assert!(names(caches.labelled("Deployment", "ml", (LABEL, "gone"))).is_empty());
        assert_eq!(
            caches.labelled("Deployment", "ml", (LABEL, "gone")),
            Some(Vec::new()),
            "listed: empty, not unknown"
        );
    }
}
