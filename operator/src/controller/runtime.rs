//! The process's control loop: controllers run only while this process holds the Lease.
//!
//! ```text
//! standby --(Lease acquired)--> leading: start every controller
//! standby --(Lease released by its holder)--> standby: ask for it at once
//! leading --(Lease lost)------> standby: stop them (watches and queues dropped)
//! any     --(SIGTERM/SIGINT)--> stop controllers gracefully, release the Lease, return
//! ```
//! Each controller is a [`ControllerSpec`]: a name and a function that runs it until its stop signal fires.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::Stream;
use futures::future::BoxFuture;
use kube::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use serde::de::DeserializeOwned;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::context::Context;
use super::leader::{self, LeaseSettings, lease_manager};

/// Fires when a controller must stop (Lease lost or process shutting down). Cloneable; `Send + Sync`.
#[derive(Clone, Debug)]
pub struct StopSignal(watch::Receiver<bool>);

impl StopSignal {
    /// A signal and the sender that fires it (send `true`).
    pub fn new() -> (watch::Sender<bool>, StopSignal) {
        let (tx, rx) = watch::channel(false);
        (tx, StopSignal(rx))
    }

    /// Whether the stop was requested (or its sender is gone).
    pub fn is_stopped(&self) -> bool {
        *self.0.borrow() || self.0.has_changed().is_err()
    }

    /// Completes once the stop is requested (or its sender is gone).
    pub fn stopped(self) -> impl Future<Output = ()> + Send + Sync + 'static {
        let mut rx = self.0;
        async move {
            let _ = rx.wait_for(|stop| *stop).await;
        }
    }
}

/// Function running one controller until its [`StopSignal`] fires; it must mark its caches synced in
/// `ctx.health` (see [`mark_synced_when_ready`]).
pub type RunController =
    Box<dyn Fn(Arc<Context>, StopSignal) -> BoxFuture<'static, ()> + Send + Sync>;

/// One controller the runtime starts while leading.
pub struct ControllerSpec {
    /// Kind it reconciles, for logs.
    pub kind: &'static str,
    /// Runs it.
    pub run: RunController,
}

/// Marks one controller as synced in `ctx.health` once `store` has finished its initial list (readiness).
pub fn mark_synced_when_ready<K>(
    ctx: &Arc<Context>,
    store: kube::runtime::reflector::Store<K>,
    kind: &'static str,
) where
    K: kube::Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
{
    mark_synced_once(ctx, store, kind, Arc::default());
}

/// [`mark_synced_when_ready`] for a controller that builds its caches again while it runs: every build's store is
/// watched, and the first to be ready (`marked` not yet set) marks the controller synced, once.
pub fn mark_synced_once<K>(
    ctx: &Arc<Context>,
    store: kube::runtime::reflector::Store<K>,
    kind: &'static str,
    marked: Arc<AtomicBool>,
) where
    K: kube::Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
{
    let health = ctx.health.clone();
    let term = health.term();
    tokio::spawn(async move {
        if listed(&store).await && !marked.swap(true, Ordering::SeqCst) {
            tracing::info!(%kind, "controller caches synced");
            health.controller_synced(term);
        }
    });
}

/// Waits until `store` has finished its initial list (true), or its writer is gone first (false: that watch was
/// dropped). The store's readiness is a one-shot channel that wakes only its latest poller, and the controller's own
/// applier waits on it too: it is polled again every [`SYNC_POLL`] instead of relying on being woken.
pub async fn listed<K>(store: &kube::runtime::reflector::Store<K>) -> bool
where
    K: kube::Resource + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    loop {
        match tokio::time::timeout(SYNC_POLL, store.wait_until_ready()).await {
            Ok(Ok(())) => return true,
            Ok(Err(_)) => return false,
            Err(_) => continue,
        }
    }
}

/// Objects per page of a watch's initial list and re-lists (kube's default is 500, as client-go's): a page is
/// deserialized whole, managedFields included, before the watch drops them. At 500 one page of InferenceServices
/// was the operator's peak memory at start-up (issue 17: about 17 MB of 32 MB heap with 1000 services); at 100 a
/// list of 1000 objects costs 10 requests instead of 2.
pub const LIST_PAGE_SIZE: u32 = 100;

/// The watch configuration of every controller's watches: [`LIST_PAGE_SIZE`] objects per list page.
pub fn watch_config() -> kube::runtime::watcher::Config {
    kube::runtime::watcher::Config::default().page_size(LIST_PAGE_SIZE)
}

/// Drops `object`'s `metadata.managedFields` before a watch caches it (`WatchStreamExt::modify`). No reconcile reads
/// them from a cache, and deserialized (`FieldsV1` is a JSON tree) they were about half of the memory of 1000 cached
/// InferenceServices with their status writes (issue 17, heaptrack at start-up). Children read for a field manager's
/// ownership come from a GET, which keeps them.
pub fn without_managed_fields<K: kube::Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
}

/// The primary watch of a controller: every change of `api`'s objects as `config` selects them, without
/// managedFields ([`without_managed_fields`]), reflected into the returned store, which is the controller's cache
/// (`Controller::for_stream` takes both). `Controller::new` would cache whole objects.
pub fn primary_watch<K>(
    api: Api<K>,
    config: watcher::Config,
) -> (
    Store<K>,
    impl Stream<Item = watcher::Result<watcher::Event<K>>> + Send + 'static,
)
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone + Send + Sync,
{
    let (store, writer) = reflector::store();
    let changes = watcher(api, config)
        .modify(without_managed_fields)
        .reflect(writer);
    (store, changes)
}

/// How often a controller's cache readiness is re-checked (seconds: 0.5).
const SYNC_POLL: Duration = Duration::from_millis(500);

/// How long controllers get to finish in-flight reconciles after a stop (seconds: 10).
pub const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `controllers` while this process holds the Lease described by `lease`, until `shutdown` completes.
/// On shutdown the controllers stop and the Lease is released.
///
/// # Errors
/// When the Lease cannot be created or read at start, or the Lease loop dies (the process should exit and be
/// restarted).
pub async fn run(
    ctx: Arc<Context>,
    lease: LeaseSettings,
    controllers: Vec<ControllerSpec>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let manager = lease_manager(ctx.client.clone(), &lease).await?;
    ctx.health.set_leading(false);
    tracing::info!(lease = %lease.name, namespace = %lease.namespace, identity = %lease.identity, "waiting for the lease");
    let (mut leading, mut lease_task) = manager.watch().await;
    tokio::pin!(shutdown);
    let controllers = Arc::new(controllers);

    let result = loop {
        // Standby: wait for the Lease, a release by its holder, or the shutdown.
        let released = tokio::select! {
            () = &mut shutdown => break Ok(()),
            () = leader::released(ctx.client.clone(), &lease) => true,
            acquired = leading.wait_for(|l| *l) => {
                if acquired.is_err() {
                    ctx.health.set_lease_failed();
                    break Err(anyhow::anyhow!("the lease loop stopped"));
                }
                false
            }
        };
        if released {
            // The old manager holds nothing: stopping it mid-sleep loses nothing.
            if let Some(fresh) = fresh_lease_watch(&ctx, &lease).await {
                lease_task.abort();
                (leading, lease_task) = fresh;
            }
            continue;
        }
        // The lease manager may report leading while its renewals fail: read the Lease back first.
        let expiry = tokio::select! {
            () = &mut shutdown => break Ok(()),
            expiry = leader::confirmed(ctx.client.clone(), &lease) => expiry,
            _ = leading.wait_for(|l| !*l) => continue,
        };
        ctx.health.set_leading(true);
        tracing::info!(identity = %lease.identity, "acquired the lease: starting controllers");
        let (stop, running) = start(&ctx, &controllers);

        // Leading: until the Lease is lost or the shutdown.
        let outcome = tokio::select! {
            () = &mut shutdown => Some(Ok(())),
            () = leader::lost(ctx.client.clone(), &lease, expiry) => None,
            lost = leading.wait_for(|l| !*l) => match lost {
                Ok(_) => None,
                Err(_) => {
                    ctx.health.set_lease_failed();
                    Some(Err(anyhow::anyhow!("the lease loop stopped")))
                }
            },
        };
        if outcome.is_none() {
            tracing::warn!(identity = %lease.identity, "lost the lease: aborting controllers");
            abort_controllers(running).await;
        } else {
            stop_controllers(stop, running).await;
        }
        ctx.health.set_leading(false);
        ctx.health.controllers_stopped();
        if let Some(result) = outcome {
            break result;
        }
    };

    ctx.health.set_shutting_down();
    // Dropping the receiver makes the lease task release the Lease and return.
    drop(leading);
    match tokio::time::timeout(STOP_TIMEOUT, lease_task).await {
        Ok(Ok(Ok(_))) => tracing::info!("released the lease"),
        Ok(Ok(Err(error))) => tracing::warn!(%error, "could not release the lease"),
        Ok(Err(error)) => tracing::warn!(%error, "lease task panicked"),
        Err(_) => tracing::warn!("timed out releasing the lease"),
    }
    result
}

/// A standby saw the Lease released: its lease manager sleeps until the expiry it last read, so a new one is made,
/// which reads the vacant Lease and takes it now. `None` (warned) when it cannot be made within a watchdog period
/// (the read hangs or fails): the current manager then takes the Lease at that expiry.
async fn fresh_lease_watch(ctx: &Context, lease: &LeaseSettings) -> Option<LeaseWatch> {
    tracing::info!(identity = %lease.identity, "the lease was released: asking for it now");
    let period = leader::watchdog_period(lease);
    match tokio::time::timeout(period, lease_manager(ctx.client.clone(), lease)).await {
        Ok(Ok(manager)) => Some(manager.watch().await),
        Ok(Err(error)) => {
            tracing::warn!(%error, "cannot read the released lease: waiting for its expiry");
            None
        }
        Err(_) => {
            tracing::warn!(
                seconds = period.as_secs(),
                "no answer reading the released lease: waiting for its expiry"
            );
            None
        }
    }
}

/// What [`LeaseManager::watch`](kube_lease_manager::LeaseManager::watch) returns: whether this process leads, and
/// the task renewing or acquiring the Lease (it releases the Lease and returns the manager once the receiver is
/// dropped).
type LeaseWatch = (
    watch::Receiver<bool>,
    tokio::task::JoinHandle<
        Result<kube_lease_manager::LeaseManager, kube_lease_manager::LeaseManagerError>,
    >,
);

fn start(
    ctx: &Arc<Context>,
    controllers: &Arc<Vec<ControllerSpec>>,
) -> (watch::Sender<bool>, JoinSet<()>) {
    let (stop, signal) = StopSignal::new();
    let mut running = JoinSet::new();
    for spec in controllers.iter() {
        let future = (spec.run)(ctx.clone(), signal.clone());
        let kind = spec.kind;
        running.spawn(async move {
            future.await;
            tracing::info!(%kind, "controller stopped");
        });
    }
    (stop, running)
}

/// Shutdown: asks every controller to stop and gives in-flight reconciles [`STOP_TIMEOUT`] to finish, then aborts
/// what is left.
async fn stop_controllers(stop: watch::Sender<bool>, mut running: JoinSet<()>) {
    let _ = stop.send(true);
    let drained = tokio::time::timeout(STOP_TIMEOUT, async {
        while running.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!("controllers did not stop in time: aborting them");
        abort_controllers(running).await;
    }
}

/// Lease lost: aborts every controller at once, in-flight reconciles included, and waits until they are gone.
/// Another process may lead already, so nothing more is written; a drain would let a reconcile that is still
/// writing finish under a Lease this process no longer holds (controller-runtime likewise skips its graceful
/// shutdown when leader election is lost). An aborted reconcile is no worse than a crash: the next leader's
/// start-up reconcile of every object finishes it.
async fn abort_controllers(mut running: JoinSet<()>) {
    running.abort_all();
    while running.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stop_signal_fires_on_send_and_on_drop() {
        let (tx, signal) = StopSignal::new();
        let waiting = tokio::spawn(signal.clone().stopped());
        assert!(!signal.is_stopped());
        tx.send(true).unwrap();
        waiting.await.unwrap();
        assert!(signal.is_stopped());
        let (tx, signal) = StopSignal::new();
        drop(tx);
        assert!(signal.is_stopped());
        tokio::time::timeout(Duration::from_secs(1), signal.stopped())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_lost_lease_aborts_controllers_without_a_drain() {
        /// Sets its flag when dropped: the task holding it was cancelled.
        struct Cancelled(Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Cancelled {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let cancelled = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut running = JoinSet::new();
        let guard = Cancelled(cancelled.clone());
        // A reconcile stuck in a request that never returns, deaf to the stop signal.
        running.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await
        });
        // Well under STOP_TIMEOUT: a drain would still be waiting.
        tokio::time::timeout(STOP_TIMEOUT / 5, abort_controllers(running))
            .await
            .expect("aborted without waiting for the stop timeout");
        assert!(cancelled.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[test]
    fn cached_objects_lose_managed_fields_and_keep_the_rest() {
        use k8s_openapi::api::core::v1::ConfigMap;
        use kube::core::DeserializeGuard;
        let object = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "7", "labels": {"x": "y"},
                "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {"f:k": {}}}}]},
            "data": {"k": "v"},
        });
        let mut guard: DeserializeGuard<ConfigMap> = serde_json::from_value(object).unwrap();
        without_managed_fields(&mut guard);
        let map = guard.0.as_ref().unwrap();
        assert_eq!(map.metadata.managed_fields, None);
        assert_eq!(map.metadata.resource_version.as_deref(), Some("7"));
        assert_eq!(map.metadata.labels.as_ref().unwrap()["x"], "y");
        assert_eq!(map.data.as_ref().unwrap()["k"], "v");

        // An object that does not deserialize keeps only its metadata: it loses them too.
        let invalid = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "b", "managedFields": [{"manager": "kubectl"}]},
            "data": "not a map",
        });
        let mut guard: DeserializeGuard<ConfigMap> = serde_json::from_value(invalid).unwrap();
        without_managed_fields(&mut guard);
        assert_eq!(guard.0.as_ref().unwrap_err().metadata.managed_fields, None);
    }

    #[test]
    fn watches_list_in_pages_of_list_page_size() {
        assert_eq!(watch_config().page_size, Some(LIST_PAGE_SIZE));
    }
}
