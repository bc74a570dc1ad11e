//! `scaling.http` (issue 22, HTTP wake-from-zero): the ReferenceGrant that lets a namespace's HTTPRoutes use the
//! KEDA HTTP add-on's interceptor Service.
//!
//! The InterceptorRoute is an ordinary owned child (applied and pruned with the others). The grant lives in the
//! add-on's namespace and serves every such service of one namespace, so no service can own it: the reconcile of a
//! service with `scaling.http` ensures it ([`WakeGrants::ensure`], at most one read per namespace per resync period,
//! zero writes when it matches), and a sweep every [`GRANT_SWEEP`] deletes the grants of namespaces where no service
//! uses `scaling.http` any more ([`WakeGrants::sweep`]). One lock orders the two, and the sweep decides from the
//! controller's cache only after it is complete, so it never deletes a grant a concurrent reconcile needs. A grant of
//! that name that the operator did not create is never touched (`ForeignObject`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::ResourceExt;
use kube::api::{DeleteParams, ListParams, Preconditions};
use model_fleet_api::ownership::ForeignChild;
use model_fleet_api::render::wake::{LABEL_ROUTE_NAMESPACE, http_scaling};
use model_fleet_api::render::{MANAGED_BY, ReferenceGrant};

use super::routes::{AttachedStore, ServiceStore};
use crate::controller::apply::{self, Child, Live};
use crate::controller::context::Context;
use crate::controller::error::{Error, Result};
use crate::controller::runtime::StopSignal;

/// How often grants no longer needed are looked for (seconds: 30).
pub const GRANT_SWEEP: Duration = Duration::from_secs(30);

const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";

/// The grants the operator keeps, and when each namespace's grant was last found as rendered.
#[derive(Debug, Default)]
pub struct WakeGrants {
    store: AttachedStore,
    verified: Mutex<HashMap<String, Instant>>,
    order: tokio::sync::Mutex<()>,
}

impl WakeGrants {
    /// Attaches the controller's cache of InferenceServices ([`AttachedStore::attach`]).
    pub fn attach(&self, store: ServiceStore) {
        self.store.attach(store);
    }

    /// Creates or updates `grant` unless it was found as rendered within the last `fresh` (the resync period).
    ///
    /// # Errors
    /// [`Error::Foreign`] when an object of its name exists without the operator's `managed-by` label;
    /// [`Error::Fetch`] / [`Error::Apply`] from the API server.
    pub async fn ensure(
        &self,
        ctx: &Context,
        grant: &ReferenceGrant,
        fresh: Duration,
    ) -> Result<()> {
        let namespace = routes_namespace(grant);
        if self
            .verified()
            .get(&namespace)
            .is_some_and(|at| at.elapsed() < fresh)
        {
            return Ok(());
        }
        let child = Child::typed(grant)?;
        let _order = self.order.lock().await;
        let live = apply::get_live(&ctx.client, &child)
            .await
            .map_err(|e| in_add_on_namespace(e, ctx))?;
        if let Some(live) = &live
            && live.labels().get(MANAGED_BY_LABEL).map(String::as_str) != Some(MANAGED_BY)
        {
            return Err(Error::Foreign(ForeignChild {
                child: child.display(),
                owners: format!("not managed by {MANAGED_BY} (label {MANAGED_BY_LABEL})"),
            }));
        }
        apply::apply(&ctx.client, &ctx.children, &child, Live::Read(live))
            .await
            .map_err(|e| in_add_on_namespace(e, ctx))?;
        self.verified().insert(namespace, Instant::now());
        Ok(())
    }

    /// Deletes the grants (in the add-on's namespace, labelled as ours) of namespaces where no InferenceService
    /// uses `scaling.http` any more; with `--watch-namespace`, only that namespace's grant is considered. Returns
    /// the namespaces whose grant was deleted; nothing before the controller's cache is complete.
    ///
    /// # Errors
    /// [`Error::Prune`] when the list or a delete fails (a 404 or 409 on delete is fine: gone or changed).
    pub async fn sweep(&self, ctx: &Context) -> Result<Vec<String>> {
        let Some(store) = self.store.get() else {
            return Ok(Vec::new());
        };
        if store.wait_until_ready().await.is_err() {
            return Ok(Vec::new());
        }
        let _order = self.order.lock().await;
        let add_on = &ctx.config.render.http_add_on;
        let selector = match &ctx.config.watch_namespace {
            Some(ns) => format!("{MANAGED_BY_LABEL}={MANAGED_BY},{LABEL_ROUTE_NAMESPACE}={ns}"),
            None => format!("{MANAGED_BY_LABEL}={MANAGED_BY},{LABEL_ROUTE_NAMESPACE}"),
        };
        let api = kube::Api::<ReferenceGrant>::namespaced(ctx.client.clone(), &add_on.namespace);
        let grants = api
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| Error::prune("ReferenceGrant", e))?;
        let mut deleted = Vec::new();
        for grant in grants.items {
            let namespace = routes_namespace(&grant);
            if uses_http(&store, &namespace) {
                continue;
            }
            let params = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: grant.uid(),
                    resource_version: grant.resource_version(),
                }),
                ..DeleteParams::default()
            };
            match api.delete(&grant.name_any(), &params).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => continue,
                Err(e) => {
                    return Err(Error::prune(
                        format!("ReferenceGrant/{}", grant.name_any()),
                        e,
                    ));
                }
            }
            tracing::info!(grant = %grant.name_any(), %namespace,
                "deleted the ReferenceGrant of a namespace where no service uses scaling.http");
            self.verified().remove(&namespace);
            deleted.push(namespace);
        }
        Ok(deleted)
    }

    fn verified(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.verified.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether a service of `namespace` in the cache has `scaling.http` and is not being deleted.
fn uses_http(store: &ServiceStore, namespace: &str) -> bool {
    store
        .state()
        .iter()
        .filter_map(|s| s.0.as_ref().ok())
        .any(|isvc| {
            isvc.metadata.namespace.as_deref() == Some(namespace)
                && isvc.metadata.deletion_timestamp.is_none()
                && http_scaling(isvc).is_some()
        })
}

/// Runs [`WakeGrants::sweep`] every [`GRANT_SWEEP`] until `stop` fires (a failed sweep is logged and retried at the
/// next tick).
pub async fn sweep_until_stopped(ctx: Arc<Context>, stop: StopSignal) {
    let stopped = stop.stopped();
    tokio::pin!(stopped);
    loop {
        tokio::select! {
            () = &mut stopped => return,
            () = tokio::time::sleep(GRANT_SWEEP) => {}
        }
        if let Err(error) = ctx.wake_grants.sweep(&ctx).await {
            tracing::warn!(%error, "sweeping ReferenceGrants of the KEDA HTTP add-on failed");
        }
    }
}

/// A failed read or write of a grant names the flag that chose its namespace (a hunt's finding: "namespaces \"keda\"
/// not found" alone did not say where the name came from).
fn in_add_on_namespace(error: Error, ctx: &Context) -> Error {
    let namespace = &ctx.config.render.http_add_on.namespace;
    error.noting(&format!(
        " in namespace {namespace} (the KEDA HTTP add-on's: --http-add-on-namespace, chart value httpAddOn.namespace)"
    ))
}

/// The namespace a grant admits (its [`LABEL_ROUTE_NAMESPACE`] label).
fn routes_namespace(grant: &ReferenceGrant) -> String {
    grant
        .labels()
        .get(LABEL_ROUTE_NAMESPACE)
        .cloned()
        .unwrap_or_default()
}
