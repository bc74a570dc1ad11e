//! The operator's own status writes, kept until the watch catches up with them (issue 17).
//!
//! A reconcile that starts a few milliseconds after the operator wrote the object's status still finds the version
//! from before that write in the controller's cache (the watch has not delivered the write yet). Its status write
//! would carry that outdated `resourceVersion` as precondition and be refused with 409 Conflict, and the object would
//! wait [`CONFLICT_RETRY`](super::context::CONFLICT_RETRY) for nothing. [`StatusWrites`] keeps the object each
//! status write returned, together with the `resourceVersion` it replaced; a reconcile whose cached object is
//! exactly that replaced version works from the written one instead. Nothing is guessed from the order of
//! `resourceVersion`s (they are opaque): only equality with the version the write replaced is used.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::{Resource, ResourceExt as _};

/// How long a write is kept at most (seconds: 10). The watch delivers a write within milliseconds, and a watched
/// object that moved past the replaced version drops its entry ([`StatusWrites::seen`]); an entry this old belongs to
/// an object whose event the controller does not pass here (or that was deleted), and is dropped at the next write.
pub const KEPT_FOR: Duration = Duration::from_secs(10);

/// `(Rust type, namespace, name)` of an object: the type stands for the kind.
type Key = (TypeId, String, String);

#[derive(Debug)]
struct Written {
    uid: Option<String>,
    replaced: String,
    object: Arc<dyn Any + Send + Sync>,
    at: Instant,
}

/// The objects the operator's latest status writes returned, one per object, by kind, namespace and name.
#[derive(Debug, Default)]
pub struct StatusWrites(Mutex<HashMap<Key, Written>>);

impl StatusWrites {
    /// Records that a status write replaced version `replaced` and returned `object`. Drops entries older than
    /// [`KEPT_FOR`].
    pub fn record<K>(&self, replaced: &str, object: K)
    where
        K: Resource + Send + Sync + 'static,
    {
        let key = key(&object);
        let written = Written {
            uid: object.uid(),
            replaced: replaced.to_owned(),
            object: Arc::new(object),
            at: Instant::now(),
        };
        let mut entries = self.0.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|_, w| w.at.elapsed() < KEPT_FOR);
        entries.insert(key, written);
    }

    /// The object to reconcile instead of `cached`: the one an own status write returned, when `cached` is exactly
    /// the version that write replaced (same UID and `resourceVersion`). `None` otherwise, and the entry is
    /// forgotten (the cache has caught up, or the object changed since).
    pub fn fresher<K>(&self, cached: &K) -> Option<Arc<K>>
    where
        K: Resource + Send + Sync + 'static,
    {
        let mut entries = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let written = entries.remove(&key(cached))?;
        let stale = written.uid == cached.uid()
            && Some(&written.replaced) == cached.meta().resource_version.as_ref()
            && written.at.elapsed() < KEPT_FOR;
        if !stale {
            return None;
        }
        let object = written.object.clone().downcast::<K>().ok()?;
        // Kept: the next reconcile may start before the watch delivers the write too.
        entries.insert(key(cached), written);
        Some(object)
    }

    /// The watch delivered `object`: its entry is dropped unless `object` is still the version the write replaced
    /// (the cache has caught up with the write, or moved past it). Keeps the map to the writes in flight.
    pub fn seen<K>(&self, object: &K)
    where
        K: Resource + 'static,
    {
        let mut entries = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let key = key(object);
        let replaced = entries.get(&key).map(|w| &w.replaced);
        if replaced.is_some() && replaced != object.meta().resource_version.as_ref() {
            entries.remove(&key);
        }
    }
}

fn key<K: Resource + 'static>(object: &K) -> Key {
    (
        TypeId::of::<K>(),
        object.namespace().unwrap_or_default(),
        object.name_any(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn object(uid: &str, version: &str, data: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("chat".into()),
                namespace: Some("ml".into()),
                uid: Some(uid.into()),
                resource_version: Some(version.into()),
                ..ObjectMeta::default()
            },
            data: Some([("status".to_owned(), data.to_owned())].into()),
            ..ConfigMap::default()
        }
    }

    #[test]
    fn the_written_object_replaces_exactly_the_version_it_replaced() {
        let writes = StatusWrites::default();
        writes.record("5", object("u1", "6", "written"));
        let fresher = writes.fresher(&object("u1", "5", "stale"));
        assert_eq!(
            fresher.as_deref(),
            Some(&object("u1", "6", "written")),
            "the cache still shows version 5"
        );
        assert!(
            writes.fresher(&object("u1", "5", "stale")).is_some(),
            "kept while the cache lags"
        );
        assert_eq!(
            writes.fresher(&object("u1", "6", "written")),
            None,
            "the cache caught up"
        );
        assert_eq!(
            writes.fresher(&object("u1", "5", "stale")),
            None,
            "forgotten once caught up"
        );
    }

    #[test]
    fn a_watched_version_past_the_replaced_one_drops_the_write() {
        let writes = StatusWrites::default();
        writes.record("5", object("u1", "6", "written"));
        writes.seen(&object("u1", "5", "stale"));
        assert!(
            writes.fresher(&object("u1", "5", "stale")).is_some(),
            "the replaced version itself keeps it"
        );
        writes.seen(&object("u1", "6", "written"));
        assert_eq!(writes.0.lock().unwrap().len(), 0, "caught up: dropped");
    }

    #[test]
    fn another_object_of_the_name_or_a_later_change_is_reconciled_as_cached() {
        let writes = StatusWrites::default();
        writes.record("5", object("u1", "6", "written"));
        assert_eq!(writes.fresher(&object("u2", "5", "recreated")), None);
        writes.record("5", object("u1", "6", "written"));
        assert_eq!(writes.fresher(&object("u1", "9", "edited")), None);
        writes.record("5", object("u1", "6", "written"));
        let secret = Secret {
            metadata: object("u1", "5", "stale").metadata,
            ..Secret::default()
        };
        assert_eq!(writes.fresher(&secret), None, "another kind");
    }
}
