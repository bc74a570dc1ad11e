//! Refresh reads served from one LIST per kind and namespace (issue 17, "at most one API request per resource per
//! refresh").
//!
//! Terraform refreshes every resource of a plan with its own `ReadResource` call, ten at a time by default
//! (`-parallelism`). One GET per resource is a request per resource per plan for the API server to authenticate,
//! authorize, audit and serve. When one provider process has been asked for [`LIST_AFTER`] objects of the same kind in
//! the same namespace, it lists that namespace's objects of the kind once (pages of [`PAGE_SIZE`], one consistent
//! snapshot: the continue token keeps the first page's resourceVersion) and serves the following reads of it from that
//! snapshot. A workspace of a handful of resources never lists (no namespace is read whole for three objects).
//!
//! What stays exact:
//! - A name the snapshot does not hold is read with a GET, as before: an object created after the LIST, or one that
//!   is gone (the GET's 404 is what says so, with the cluster-identity check of the read path).
//! - A snapshot older than [`MAX_AGE`] is taken again, so a long refresh walk does not serve minutes-old objects.
//! - Any write by this process ([`Snapshots::invalidate`], called before apply and delete) drops every snapshot:
//!   Terraform runs plan and apply in separate provider processes today, but a read after a write in one process
//!   still sees the write.
//! - A LIST that fails (RBAC allowing `get` but not `list`, the CRD missing, a timeout, an expired continue token)
//!   is never an error: the reads of that kind and namespace go back to one GET each, whose errors are the read
//!   path's own diagnostics.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, ListParams};
use tokio::sync::OnceCell;

/// Reads of one kind in one namespace a provider process serves with a GET each before it lists the namespace: the
/// first [`LIST_AFTER`] reads of a refresh (Terraform's default parallelism is 10, so they are in flight together).
/// The environment variable [`LIST_AFTER_ENV`] overrides it: `0` lists at the first read, a large number never lists.
pub const LIST_AFTER: u32 = 8;

/// `MODELFLEET_REFRESH_LIST_AFTER`: a whole number that replaces [`LIST_AFTER`] (an unparsable value is ignored).
pub const LIST_AFTER_ENV: &str = "MODELFLEET_REFRESH_LIST_AFTER";

/// [`LIST_AFTER`], or [`LIST_AFTER_ENV`] when set to a whole number; read once per process.
fn list_after() -> u32 {
    static VALUE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *VALUE.get_or_init(|| {
        std::env::var(LIST_AFTER_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(LIST_AFTER)
    })
}

/// Objects per LIST page (`limit`); the API server returns a continue token for the rest.
pub const PAGE_SIZE: u32 = 500;

/// How long a snapshot serves reads before the next read lists the namespace again.
pub const MAX_AGE: Duration = Duration::from_secs(30);

/// One kind (`group/version/plural`) in one namespace.
pub type Key = (String, String);

/// The snapshots of one provider process (kept in its [`super::ProviderContext`]).
#[derive(Default)]
pub struct Snapshots {
    entries: Mutex<HashMap<Key, Entry>>,
}

enum Entry {
    /// Reads served with a GET so far.
    Counting(u32),
    /// The LIST, taken once by whichever read gets to it first; `None` when it failed.
    Listed(Arc<OnceCell<Option<Arc<Snapshot>>>>),
    /// The LIST failed: every read of this kind and namespace is a GET for the rest of the process.
    Unlistable,
}

/// A namespace's objects of one kind as one LIST returned them ([`list`]).
pub struct Snapshot {
    taken: Instant,
    objects: HashMap<String, DynamicObject>,
}

/// What [`Snapshots::lookup`] found for one read.
#[derive(Debug)]
pub enum Lookup {
    /// The object as the snapshot holds it.
    Listed(Box<DynamicObject>),
    /// Read it with a GET: too few reads yet, the snapshot does not hold the name, or the LIST failed.
    Get,
}

impl Snapshots {
    /// The object `name` from the snapshot of `key` (a kind and a namespace), calling `list` first when this read is
    /// the one after [`LIST_AFTER`] GETs of the key or its snapshot is older than [`MAX_AGE`]; reads that arrive while
    /// a LIST is in flight wait for it instead of listing again. Never fails: anything the snapshot cannot answer is
    /// [`Lookup::Get`], and a `list` that returned `None` makes every later read of the key a GET.
    pub async fn lookup<F, Fut>(&self, key: Key, name: &str, list: F) -> Lookup
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Option<Snapshot>>,
    {
        let cell = {
            let mut entries = self.entries.lock().expect("snapshot lock");
            let entry = entries.entry(key.clone()).or_insert(Entry::Counting(0));
            match entry {
                Entry::Unlistable => return Lookup::Get,
                Entry::Counting(reads) if *reads < list_after() => {
                    *reads += 1;
                    return Lookup::Get;
                }
                Entry::Listed(cell) if !expired(cell) => cell.clone(),
                // The read after the GETs, or a snapshot past its age: a new LIST.
                _ => {
                    let cell = Arc::new(OnceCell::new());
                    *entry = Entry::Listed(cell.clone());
                    cell
                }
            }
        };
        let listed = cell
            .get_or_init(|| async { list().await.map(Arc::new) })
            .await;
        match listed {
            Some(snapshot) => snapshot.objects.get(name).map_or(Lookup::Get, |object| {
                Lookup::Listed(Box::new(object.clone()))
            }),
            None => {
                self.entries
                    .lock()
                    .expect("snapshot lock")
                    .insert(key, Entry::Unlistable);
                Lookup::Get
            }
        }
    }

    /// Drops every snapshot and read count (a write by this process makes them stale).
    pub fn invalidate(&self) {
        self.entries.lock().expect("snapshot lock").clear();
    }
}

/// Whether the LIST of `cell` has returned a snapshot older than [`MAX_AGE`].
fn expired(cell: &OnceCell<Option<Arc<Snapshot>>>) -> bool {
    matches!(cell.get(), Some(Some(snapshot)) if snapshot.taken.elapsed() >= MAX_AGE)
}

/// Lists every object of `api` (one kind in one namespace) in pages of [`PAGE_SIZE`], the `list` of
/// [`Snapshots::lookup`]; `None` (logged) when any page fails.
pub async fn list(api: &Api<DynamicObject>) -> Option<Snapshot> {
    let taken = Instant::now();
    let mut objects = HashMap::new();
    let mut params = ListParams::default().limit(PAGE_SIZE);
    loop {
        let page = match api.list(&params).await {
            Ok(page) => page,
            Err(error) => {
                tracing::info!(%error, "listing for refresh failed; reading each object with a GET");
                return None;
            }
        };
        for object in page.items {
            if let Some(name) = object.metadata.name.clone() {
                objects.insert(name, object);
            }
        }
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => params = params.continue_token(&token),
            _ => break,
        }
    }
    tracing::debug!(objects = objects.len(), "listed for refresh");
    Some(Snapshot { taken, objects })
}

#[cfg(test)]
mod tests;
