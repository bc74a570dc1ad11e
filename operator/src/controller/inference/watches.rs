//! How the InferenceService controller is built and run: one watch of the services feeds the controller's cache, the
//! route-claim index and the contenders of hostname conflicts; the children of every kind discovery finds served are
//! watched as owned. Discovery is asked again every [`DEPENDENCY_TTL`]: when its answer changes (KEDA, the Gateway API
//! or the KEDA HTTP add-on installed or removed after the operator started, or a discovery that failed at start now
//! answering), the controller is stopped and built again with the watches of the new answer, which also reconciles
//! every service once. Before, children of kinds installed later were created, but their changes (a deleted
//! ScaledObject, KEDA's status) were seen only at the next resync. Reconciles act on the answer the running controller
//! was built with ([`DependencyCache::for_reconcile`]), so nothing is written of a kind before it is watched; the
//! restart waits until the controller's cache has listed (kube's controller cannot stop gracefully before), and gives
//! in-flight reconciles [`STOP_TIMEOUT`], as a shutdown does.
//!
//! [`DependencyCache::for_reconcile`]: crate::controller::discovery::DependencyCache::for_reconcile

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use futures::{StreamExt, TryStreamExt as _};
use kube::ResourceExt as _;
use kube::core::DeserializeGuard;
use kube::runtime::PredicateConfig;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt as _, watcher};
use model_fleet_api::render::{LABEL_INFERENCE, mounts_claim};
use model_fleet_api::{Dataset, InferenceService};

use super::routes::ServiceStore;
use super::{KIND, child_kinds, trigger, wake};
use crate::controller::context::Context;
use crate::controller::discovery::{DEPENDENCY_TTL, Dependencies};
use crate::controller::reconcile::{error_policy, reconcile, report_stream_item};
use crate::controller::runtime::{
    STOP_TIMEOUT, StopSignal, listed, mark_synced_once, primary_watch, watch_config,
};

/// Runs the controller until `stop` fires, built again with the watches of discovery's new answer each time it
/// changes ([`restart_on_change`]). A discovery that fails gives the last answer it gave; without one (it never
/// answered in this process) the controller waits for the first, asking every [`DISCOVERY_RETRY`]: no service is
/// reconciled meanwhile (readiness waits too), since none could be told truly what is installed.
pub async fn run(ctx: Arc<Context>, stop: StopSignal) {
    let synced = Arc::new(AtomicBool::new(false));
    loop {
        let Some(deps) = discover(&ctx, &stop).await else {
            return;
        };
        ctx.dependencies.built_with(deps);
        run_built(&ctx, deps, &stop, &synced).await;
        if stop.is_stopped() {
            return;
        }
        tracing::info!(
            kind = KIND,
            "optional CRDs changed: starting the controller again with the watches they need"
        );
    }
}

/// How often discovery is asked again while it has never answered (seconds: 5).
pub const DISCOVERY_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

/// Discovery's answer, else its last one, else the first it gives (asked every [`DISCOVERY_RETRY`]); `None` when
/// `stop` fires first.
async fn discover(ctx: &Context, stop: &StopSignal) -> Option<Dependencies> {
    loop {
        let error = match ctx.dependencies.get().await {
            Ok(deps) => return Some(deps),
            Err(error) => error,
        };
        if let Some(last) = ctx.dependencies.last_known() {
            tracing::warn!(%error, last_answer = ?last, "discovery failed: watching the kinds of its last answer");
            return Some(last);
        }
        tracing::warn!(%error, "discovery failed and never answered: InferenceServices wait for its first answer");
        tokio::select! {
            () = stop.clone().stopped() => return None,
            () = tokio::time::sleep(DISCOVERY_RETRY) => {}
        }
    }
}

/// Fires `restart` once `stop` fires, or once discovery's answer (asked every [`DEPENDENCY_TTL`]) differs from
/// `deps`, the answer the running controller was built with (a failed discovery changes nothing), and `store`, the
/// controller's cache, has listed: kube's controller never finishes a graceful shutdown before its cache is ready (a
/// review's finding: a restart while the InferenceService list still failed stopped the controller for good).
async fn restart_on_change(
    ctx: Arc<Context>,
    deps: Dependencies,
    store: ServiceStore,
    stop: StopSignal,
    restart: tokio::sync::watch::Sender<bool>,
) {
    let changed = async {
        loop {
            tokio::time::sleep(DEPENDENCY_TTL).await;
            match ctx.dependencies.get().await {
                Ok(now) if now != deps => break,
                Ok(_) => {}
                Err(error) => tracing::warn!(
                    %error,
                    built_with = ?deps,
                    "discovery failed: keeping the watches the controller was built with"
                ),
            }
        }
        listed(&store).await;
    };
    tokio::select! {
        () = stop.stopped() => {}
        () = changed => {}
    }
    let _ = restart.send(true);
}

/// Watches InferenceServices (through `DeserializeGuard`) and the children of the kinds `deps` says are served until
/// `stop` fires or discovery's answer changes ([`restart_on_change`]); then gives in-flight reconciles
/// [`STOP_TIMEOUT`] to finish, as a shutdown does, and drops the rest. The first build whose cache lists marks the
/// controller synced (`synced`: readiness counts it once per leadership).
async fn run_built(
    ctx: &Arc<Context>,
    deps: Dependencies,
    outer: &StopSignal,
    synced: &Arc<AtomicBool>,
) {
    let (restart, stop) = StopSignal::new();
    // The controller's own cache of InferenceServices ([`primary_watch`]) is filled from every change, without
    // managedFields (nothing reads them, and as JSON trees they were half of the cache's memory); only changes of a
    // reconcile's inputs ([`trigger::inputs`]) start one.
    // Every delivered version also retires the own status write it catches up with (`StatusWrites::seen`).
    // The same events keep the route-claim index and, with the Gateway API installed, name the services sharing a
    // claim with the one that changed: a change to one (deletion included) reconciles those (hostname conflicts),
    // from this one watch instead of a second watch and list of every InferenceService.
    let (services, changes) = primary_watch(
        ctx.watched_api::<DeserializeGuard<InferenceService>>(),
        watch_config().any_semantic(),
    );
    let seen = ctx.clone();
    let claims = ctx.clone();
    let (contenders, contended) = futures::channel::mpsc::unbounded();
    let contenders = deps.gateway_api.then_some(contenders);
    let config = ctx.config.render.clone();
    let changes = changes
        .inspect_ok(move |event| {
            // Those that shared a claim the change drops (a holder moving its hostname), then those sharing one
            // of its claims now; the controller runs a service queued twice once.
            let before = claims.route_claims.observe(event);
            if let (Some(contenders), Some(changed)) = (&contenders, touched(event)) {
                let now = claims.route_claims.contenders(changed, &config);
                for service in before.into_iter().chain(now) {
                    // The receiver is gone only when the controller stopped.
                    let _ = contenders.unbounded_send(service);
                }
            }
        })
        .applied_objects()
        .inspect_ok(move |changed| {
            if let Ok(isvc) = &changed.0 {
                seen.status_writes.seen(isvc);
            }
        })
        .predicate_filter(trigger::inputs, PredicateConfig::default());
    let mut controller =
        Controller::for_stream(changes, services).with_config(ctx.controller_config());
    for resource in child_kinds(deps) {
        let children = ctx.watch_children(&resource, LABEL_INFERENCE);
        controller = controller.owns_stream_with(children, resource);
    }
    let mounting = controller.store();
    controller = controller.watches(
        ctx.watched_api::<DeserializeGuard<Dataset>>(),
        watch_config(),
        move |dataset| services_mounting(&mounting, &dataset),
    );
    if deps.gateway_api {
        if deps.http_add_on {
            ctx.wake_grants.attach(controller.store());
            tokio::spawn(wake::sweep_until_stopped(ctx.clone(), stop.clone()));
        }
        ctx.route_claims
            .attach(controller.store(), &ctx.config.render);
        controller = controller.reconcile_on(contended);
    }
    let store = controller.store();
    mark_synced_once(ctx, store.clone(), KIND, synced.clone());
    let watching = tokio::spawn(restart_on_change(
        ctx.clone(),
        deps,
        store,
        outer.clone(),
        restart,
    ));
    drive(ctx, controller, stop).await;
    watching.abort();
}

/// The services in `dataset`'s namespace with a volume of its claim (the mapper of the Dataset watch): a service
/// refused by the Dataset's allowlist is reconciled again when the allowlist changes, and one that mounts it is
/// checked again when it does.
fn services_mounting(
    services: &ServiceStore,
    dataset: &DeserializeGuard<Dataset>,
) -> Vec<ObjectRef<DeserializeGuard<InferenceService>>> {
    let Some(claim) = dataset.0.as_ref().ok().and_then(|d| d.spec.pvc.as_ref()) else {
        return Vec::new();
    };
    let namespace = dataset.namespace();
    services
        .state()
        .iter()
        .filter(|guard| guard.namespace() == namespace)
        .filter(|guard| {
            (guard.0.as_ref())
                .is_ok_and(|isvc| mounts_claim(isvc.spec.volumes.as_deref(), &claim.claim_name))
        })
        .map(|guard| ObjectRef::from_obj(guard.as_ref()))
        .collect()
}

/// Runs `controller` until `stop` fires, then gives its in-flight reconciles [`STOP_TIMEOUT`] to finish, as a
/// shutdown does, and drops the rest.
async fn drive(
    ctx: &Arc<Context>,
    controller: Controller<DeserializeGuard<InferenceService>>,
    stop: StopSignal,
) {
    let running = controller
        .graceful_shutdown_on(stop.clone().stopped())
        .run(
            reconcile::<InferenceService>,
            error_policy::<InferenceService>,
            ctx.clone(),
        )
        .for_each(|item| report_stream_item(KIND, item));
    let drained = async {
        stop.stopped().await;
        tokio::time::sleep(STOP_TIMEOUT).await;
    };
    tokio::select! {
        () = running => {}
        () = drained => tracing::warn!(kind = KIND, "reconciles did not finish in time: dropping them"),
    }
}

/// The object of a watch event that created, changed or deleted one (kube's `touched_objects`): `None` for the
/// markers of a (re)list.
fn touched<K>(event: &watcher::Event<K>) -> Option<&K> {
    match event {
        watcher::Event::Apply(object)
        | watcher::Event::InitApply(object)
        | watcher::Event::Delete(object) => Some(object),
        watcher::Event::Init | watcher::Event::InitDone => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_names_created_changed_and_deleted_objects_only() {
        let object = || "o".to_owned();
        assert_eq!(touched(&watcher::Event::Apply(object())), Some(&object()));
        assert_eq!(
            touched(&watcher::Event::InitApply(object())),
            Some(&object())
        );
        assert_eq!(touched(&watcher::Event::Delete(object())), Some(&object()));
        assert_eq!(touched::<String>(&watcher::Event::Init), None);
        assert_eq!(touched::<String>(&watcher::Event::InitDone), None);
    }
}
