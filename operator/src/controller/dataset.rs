//! The Dataset controller (issue 5; DESIGN.md section 3, Dataset).
//!
//! Pipeline per Dataset: **fetch** (the TrainingRuns of its namespace, its PersistentVolumeClaim) -> **decide** (pure,
//! `model_fleet_api::status::dataset`: `usedBy`, the finalizer change, `Ready` / `PVCBound`) -> **finalizer** (the
//! apply step of this kind: add [`usage::FINALIZER`] while
//! an unfinished run uses it, never on an object being deleted; remove it when no unfinished run does, which lets a
//! pending deletion proceed) -> **status** (zero writes when unchanged).
//!
//! kube's `finalizer` helper is not used: it adds its finalizer to every object and can only hold a deletion by
//! failing the cleanup (an error per reconcile); here the finalizer exists only while a run needs it.
//!
//! TrainingRuns are watched so a run that starts or finishes requeues the Datasets it references; claims are
//! watched so `PVCBound` follows them.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::core::DeserializeGuard;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};

use model_fleet_api::conditions::{self, ConditionType, DesiredCondition, Reason};
use model_fleet_api::render::holds_claim;
use model_fleet_api::status::Draft;
use model_fleet_api::status::dataset::{self as usage, FinalizerChange};
use model_fleet_api::{Dataset, DatasetStatus, TrainingRun};

use super::context::Context;
use super::error::{Error, Result};
use super::events;
use super::reconcile::{Owner, Reconcile, error_policy, reconcile, report_stream_item};
use super::runtime::{
    ControllerSpec, StopSignal, mark_synced_when_ready, primary_watch, watch_config,
};
use super::status::write_draft;

/// Kind label of this controller's metrics and logs.
pub const KIND: &str = "Dataset";

/// Requeue period while the claim is not Bound (seconds: 10), in addition to the claim watch.
pub const CLAIM_REQUEUE: Duration = Duration::from_secs(10);

/// The controller as the runtime starts it.
pub fn controller() -> ControllerSpec {
    ControllerSpec {
        kind: KIND,
        run: Box::new(|ctx, stop| Box::pin(run(ctx, stop))),
    }
}

/// The Datasets of `namespace`, listed fresh (not from a cache): what a run's references and a workload's claim
/// mounts are checked against ([`model_fleet_api::render::check_datasets`],
/// [`model_fleet_api::render::refuse_service_dataset_claims`]).
///
/// # Errors
/// [`Error`] naming the namespace when the list fails.
pub(super) async fn list_in(ctx: &Context, namespace: &str) -> Result<Vec<Dataset>> {
    let api: Api<Dataset> = Api::namespaced(ctx.client.clone(), namespace);
    Ok(api
        .list(&ListParams::default())
        .await
        .map_err(|e| Error::fetch(format!("Datasets of namespace {namespace}"), e))?
        .items)
}

/// Watches Datasets, the TrainingRuns that reference them and their claims, until `stop` fires.
pub async fn run(ctx: Arc<Context>, stop: StopSignal) {
    let (datasets, changes) = primary_watch(
        ctx.watched_api::<DeserializeGuard<Dataset>>(),
        watch_config().any_semantic(),
    );
    let controller = Controller::for_stream(changes.applied_objects(), datasets)
        .with_config(ctx.controller_config())
        .watches(
            ctx.watched_api::<DeserializeGuard<TrainingRun>>(),
            watch_config(),
            |run| datasets_of(&run),
        );
    let datasets = controller.store();
    let controller = controller.watches(
        ctx.watched_api::<PersistentVolumeClaim>(),
        watch_config(),
        move |claim| datasets_on_claim(&datasets, &claim),
    );
    mark_synced_when_ready(&ctx, controller.store(), KIND);
    controller
        .graceful_shutdown_on(stop.stopped())
        .run(reconcile::<Dataset>, error_policy::<Dataset>, ctx)
        .for_each(|item| report_stream_item(KIND, item))
        .await;
}

/// The Datasets a run references in its own namespace (the mapper of the TrainingRun watch).
fn datasets_of(run: &DeserializeGuard<TrainingRun>) -> Vec<ObjectRef<DeserializeGuard<Dataset>>> {
    let (Ok(run), Some(namespace)) = (&run.0, run.namespace()) else {
        return Vec::new();
    };
    run.spec
        .datasets
        .iter()
        .flatten()
        .filter(|r| r.namespace.as_deref().is_none_or(|ns| ns == namespace))
        .map(|r| ObjectRef::new(&r.name).within(&namespace))
        .collect()
}

/// The Datasets naming `claim` (the mapper of the claim watch).
fn datasets_on_claim(
    datasets: &Store<DeserializeGuard<Dataset>>,
    claim: &PersistentVolumeClaim,
) -> Vec<ObjectRef<DeserializeGuard<Dataset>>> {
    let name = claim.name_any();
    datasets
        .state()
        .iter()
        .filter(|guard| guard.namespace() == claim.namespace())
        .filter(|guard| guard.0.as_ref().is_ok_and(|d| holds_claim(d, &name)))
        .map(|guard| ObjectRef::from_obj(guard.as_ref()))
        .collect()
}

impl Reconcile for Dataset {
    const KIND: &'static str = KIND;
    const SKIP_DELETING: bool = false;

    fn pipeline(&self, ctx: &Context) -> impl Future<Output = Result<Action>> + Send {
        pipeline(self, ctx)
    }
}

async fn pipeline(dataset: &Dataset, ctx: &Context) -> Result<Action> {
    let owner = Owner::of(dataset)?;
    let namespace = owner.namespace.clone();
    let fetched = fetch(ctx, dataset, &namespace).await?;
    let runs: Vec<&TrainingRun> = fetched
        .runs
        .iter()
        .filter_map(|g| g.0.as_ref().ok())
        .collect();
    let used_by = usage::used_by(&runs, dataset);
    let deleting = dataset.meta().deletion_timestamp.is_some();
    let has_finalizer = dataset.finalizers().iter().any(|f| f == usage::FINALIZER);
    let change = usage::finalizer_change(has_finalizer, deleting, !used_by.is_empty());
    update_finalizer(ctx, dataset, &namespace, change, &used_by).await?;
    if deleting && change == FinalizerChange::Remove {
        // The deletion proceeds now: nothing left to report on.
        return Ok(Action::await_change());
    }
    if deleting && !has_finalizer {
        return Ok(Action::await_change());
    }

    let pvc = dataset
        .spec
        .pvc
        .as_ref()
        .map(|p| usage::pvc_bound(&p.claim_name, fetched.claim.as_ref()));
    let ready = usage::ready(pvc.as_ref(), deleting, &used_by);
    let settled = ready.is_true() || deleting;
    let mut list = vec![ready];
    list.extend(pvc);
    write(ctx, dataset, &owner, list, used_by).await?;
    Ok(if settled {
        Action::requeue(ctx.config.resync)
    } else {
        Action::requeue(CLAIM_REQUEUE)
    })
}

/// What fetch read.
struct Fetched {
    /// Every TrainingRun of the Dataset's namespace (invalid ones are skipped by the caller).
    runs: Vec<DeserializeGuard<TrainingRun>>,
    /// The named claim, when the Dataset names one and it exists.
    claim: Option<PersistentVolumeClaim>,
}

/// fetch: the runs of the namespace (a fresh list, so a run that just started is seen before the deletion goes on)
/// and the claim.
async fn fetch(ctx: &Context, dataset: &Dataset, namespace: &str) -> Result<Fetched> {
    let runs: Api<DeserializeGuard<TrainingRun>> = Api::namespaced(ctx.client.clone(), namespace);
    let runs = runs
        .list(&ListParams::default())
        .await
        .map_err(|e| Error::fetch(format!("TrainingRuns of namespace {namespace}"), e))?
        .items;
    let claim = match &dataset.spec.pvc {
        Some(pvc) => {
            let claims: Api<PersistentVolumeClaim> = Api::namespaced(ctx.client.clone(), namespace);
            claims.get_opt(&pvc.claim_name).await.map_err(|e| {
                Error::fetch(
                    format!("PersistentVolumeClaim {namespace}/{}", pvc.claim_name),
                    e,
                )
            })?
        }
        None => None,
    };
    Ok(Fetched { runs, claim })
}

/// finalizer: adds or removes [`usage::FINALIZER`] with a merge patch guarded by the read `resourceVersion` (a
/// concurrent change makes it fail with 409 and the reconcile is retried on fresh data).
async fn update_finalizer(
    ctx: &Context,
    dataset: &Dataset,
    namespace: &str,
    change: FinalizerChange,
    used_by: &[String],
) -> Result<()> {
    let mut finalizers: Vec<String> = dataset.finalizers().to_vec();
    match change {
        FinalizerChange::Keep => return Ok(()),
        FinalizerChange::Add => finalizers.push(usage::FINALIZER.to_owned()),
        FinalizerChange::Remove => finalizers.retain(|f| f != usage::FINALIZER),
    }
    let patch = serde_json::json!({
        "metadata": {
            "finalizers": finalizers,
            "resourceVersion": dataset.resource_version(),
        }
    });
    let api: Api<Dataset> = Api::namespaced(ctx.client.clone(), namespace);
    match api
        .patch(
            &dataset.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
        Err(error) => {
            return Err(Error::apply(
                format!("Dataset/{} finalizers", dataset.name_any()),
                error,
            ));
        }
    }
    let note = match change {
        FinalizerChange::Add => format!(
            "in use by {}: deletion is held until they finish",
            used_by.join(", ")
        ),
        _ => "no unfinished run uses it: deletion is no longer held".to_owned(),
    };
    tracing::info!(dataset = %dataset.name_any(), %namespace, ?change, "updated the in-use finalizer");
    events::normal(
        &ctx.recorder,
        &dataset.object_ref(&()),
        "InUse",
        "Finalizer",
        note,
    )
    .await;
    Ok(())
}

/// status: conditions merged (keeping transition times), `usedBy` (absent when unused), `observedGeneration`;
/// written only on a difference; a change of `Ready` is announced.
async fn write(
    ctx: &Context,
    dataset: &Dataset,
    owner: &Owner,
    desired: Vec<DesiredCondition>,
    used_by: Vec<String>,
) -> Result<()> {
    let current = dataset.status.as_ref();
    let before = conditions::find(
        current
            .and_then(|s| s.conditions.as_deref())
            .unwrap_or_default(),
        ConditionType::Ready,
    )
    .cloned();
    let ready = desired
        .iter()
        .find(|c| c.type_ == ConditionType::Ready)
        .cloned();
    let draft = Draft {
        status: DatasetStatus {
            conditions: None,
            observed_generation: owner.generation,
            // Absent rather than `[]` when unused (the IN USE column then stays empty).
            used_by: (!used_by.is_empty()).then_some(used_by),
        },
        conditions: desired,
    };
    let api: Api<Dataset> = Api::namespaced(ctx.client.clone(), &owner.namespace);
    if write_draft(&api, &ctx.status_writes, owner, current, draft)
        .await?
        .is_none()
    {
        return Ok(());
    }
    if let Some(ready) = ready
        && before
            .is_none_or(|b| b.status != ready.status.as_str() || b.reason != ready.reason.as_str())
    {
        let note = format!("Ready is {}: {}", ready.status.as_str(), ready.message);
        // A claim that is missing or lost needs someone (a Warning); one still binding, or a deletion waiting for its
        // runs, is news (Normal).
        let (regarding, reason) = (dataset.object_ref(&()), ready.reason.as_str());
        if matches!(ready.reason, Reason::ClaimNotFound | Reason::ClaimLost) {
            events::warning(&ctx.recorder, &regarding, reason, "Reconcile", note).await;
        } else {
            events::normal(&ctx.recorder, &regarding, reason, "Reconcile", note).await;
        }
    }
    Ok(())
}
