//! The TrainingRun controller (issue 5; DESIGN.md sections 3 and 5).
//!
//! One reconcile is the pipeline **fetch -> validate -> render -> apply/prune -> status**:
//! - fetch: the run's Job (a fresh GET, not the cache) and the Datasets of its namespace;
//! - render ([`model_fleet_api::render::render_training`], pure): the Job, the headless Service of Indexed runs, the dataset
//!   checks (`DatasetsReady`; a refusal creates no Job);
//! - apply: the Job is **created once**, after a fresh read confirms the run is still the one read from the cache
//!   (`Owner::confirm_current`: a Job starts pods, so none is created for a deleted or re-created run), and never
//!   applied again with its full template (a Job template is immutable, and a changed built-in default must never
//!   touch an existing Job, case O-05). Afterwards only `spec.suspend` is toggled, through its own field manager [`SUSPEND_FIELD_MANAGER`] (`intent: suspended`, `cancel`). A Job the TTL
//!   controller removed after the run finished is never created again (`status::training::may_create_job`);
//! - prune: owned Jobs and Services that are not rendered (selected by owner UID);
//! - observe: while the run is `Pending` (no pod ready), its pods (and, when none is live, the Job's
//!   `FailedCreate` Events), so `Ready` says why they do not run (best effort);
//! - status: `phase` derived from the live Job every time (`model_fleet_api::status::training`), counts, times,
//!   conditions, from render's facts (never recomputed here).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, DeserializeGuard};
use kube::runtime::WatchStreamExt as _;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};
use model_fleet_api::conditions::{self, ConditionType, Reason};
use model_fleet_api::names::label_value;
use model_fleet_api::render::{
    self, LABEL_TRAINING, RenderedTraining, TrainingChildren, TrainingFacts,
};
use model_fleet_api::schedule::{ScheduleState, Scheduled};
use model_fleet_api::status::Draft;
use model_fleet_api::status::training::{self as status, job_outcome, may_create_job};
use model_fleet_api::{Dataset, TrainingPhase, TrainingRun, TrainingRunStatus};

use super::apply::{self, Child, Live, PruneOwner};
use super::context::Context;
use super::dataset;
use super::error::{Error, Result};
use super::events;
use super::reconcile::{Owner, Reconcile, error_policy, reconcile, report_stream_item};
use super::recreate;
use super::runtime::{
    ControllerSpec, StopSignal, mark_synced_when_ready, primary_watch, watch_config,
};
use super::status::write_draft;

mod observe;

/// Kind label of this controller's metrics and logs.
pub const KIND: &str = "TrainingRun";

/// Field manager that owns a Job's `spec.suspend` after creation (DESIGN.md section 5): toggling it never repeats the
/// full-template apply of [`render::FIELD_MANAGER`].
pub const SUSPEND_FIELD_MANAGER: &str = "model-fleet-operator-suspend";

/// Requeue period while a run waits for its pods (seconds: 10): scheduling states do not change the Job.
pub const PENDING_REQUEUE: Duration = Duration::from_secs(10);

/// The controller as the runtime starts it.
pub fn controller() -> ControllerSpec {
    ControllerSpec {
        kind: KIND,
        run: Box::new(|ctx, stop| Box::pin(run(ctx, stop))),
    }
}

/// Watches TrainingRuns (through `DeserializeGuard`), their Jobs and Services, and the Datasets they reference (a
/// run refused for a missing or closed Dataset is retried when the Dataset changes), until `stop` fires.
pub async fn run(ctx: Arc<Context>, stop: StopSignal) {
    let (runs, changes) = primary_watch(
        ctx.watched_api::<DeserializeGuard<TrainingRun>>(),
        watch_config().any_semantic(),
    );
    let mut controller = Controller::for_stream(changes.applied_objects(), runs)
        .with_config(ctx.controller_config());
    for resource in child_kinds() {
        let children = ctx.watch_children(&resource, LABEL_TRAINING);
        controller = controller.owns_stream_with(children, resource);
    }
    let runs = controller.store();
    let controller = controller.watches(
        ctx.watched_api::<DeserializeGuard<Dataset>>(),
        watch_config(),
        move |dataset| runs_referencing(&runs, &dataset),
    );
    mark_synced_when_ready(&ctx, controller.store(), KIND);
    controller
        .graceful_shutdown_on(stop.stopped())
        .run(reconcile::<TrainingRun>, error_policy::<TrainingRun>, ctx)
        .for_each(|item| report_stream_item(KIND, item))
        .await;
}

/// The runs in `dataset`'s namespace that reference it by name (the mapper of the Dataset watch).
fn runs_referencing(
    runs: &Store<DeserializeGuard<TrainingRun>>,
    dataset: &DeserializeGuard<Dataset>,
) -> Vec<ObjectRef<DeserializeGuard<TrainingRun>>> {
    let name = dataset.name_any();
    let namespace = dataset.namespace();
    runs.state()
        .iter()
        .filter(|guard| guard.namespace() == namespace)
        .filter(|guard| {
            guard
                .0
                .as_ref()
                .is_ok_and(|run| run.spec.datasets.iter().flatten().any(|r| r.name == name))
        })
        .map(|guard| ObjectRef::from_obj(guard.as_ref()))
        .collect()
}

impl Reconcile for TrainingRun {
    const KIND: &'static str = KIND;
    const SKIP_DELETING: bool = true;

    fn pipeline(&self, ctx: &Context) -> impl Future<Output = Result<Action>> + Send {
        pipeline(self, ctx)
    }

    fn report_error(&self, ctx: &Context, error: &Error) -> impl Future<Output = ()> + Send {
        report_error(ctx, self, error)
    }
}

async fn pipeline(run: &TrainingRun, ctx: &Context) -> Result<Action> {
    let owner = Owner::of(run)?;
    // Scheduled suspend: every step below sees the effective intent; the spec's own is kept for the status.
    let own_intent = run.spec.intent;
    let schedule = ScheduleState::of(run.expires_at(), Timestamp::now());
    let effective = schedule.effective(run);
    let run = effective.as_ref();
    let fetched = fetch(ctx, run, &owner).await?;
    let RenderedTraining { facts, children } =
        render::render_training(run, &fetched.datasets, &ctx.config.render);
    let may_create = may_create_job(facts.cancelled, run.status.as_ref());
    let created_now = fetched.job.is_none();
    let job = match (fetched.job, &children) {
        (Some(job), _) => {
            if let Ok(children) = &children {
                sync_service(ctx, run, children).await?;
            }
            Some(set_suspend(ctx, run, &owner, &facts, job).await?)
        }
        (None, Ok(children)) if may_create => {
            sync_service(ctx, run, children).await?;
            Some(create_job(ctx, run, &owner, children).await?)
        }
        (None, _) => None,
    };
    if let (Some(job), Ok(children)) = (&job, &children) {
        prune_children(ctx, run, &owner, children, &job.name_any()).await?;
    }
    let scan = match &job {
        Some(job) if status::needs_pod_scan(job, facts.cancelled, created_now) => {
            observe::scan_pods(ctx, job).await
        }
        _ => observe::PodScan::default(),
    };
    let refusal = children.as_ref().err();
    let mut draft = status::desired(run, &facts, refusal, job.as_ref(), scan.findings());
    status::with_schedule(&mut draft, &schedule, own_intent, facts.cancelled);
    let awaiting = draft.status.phase == Some(TrainingPhase::Pending)
        || job
            .as_ref()
            .is_some_and(|job| status::awaits_pods(job, facts.cancelled));
    write(ctx, run, &owner, draft).await?;
    match refusal {
        Some(refusal) if job.is_none() && may_create => {
            ctx.count_error(KIND, &Error::Render(refusal.clone()));
            Ok(Action::requeue(ctx.config.resync))
        }
        _ => Ok(Action::requeue(
            schedule.requeue_within(requeue_after(ctx, awaiting)),
        )),
    }
}

/// What fetch read.
#[derive(Debug)]
struct Fetched {
    /// The live Job, when it exists (and is ours).
    job: Option<Job>,
    /// The Datasets of the run's namespace (empty when the run references none).
    datasets: Vec<Dataset>,
}

/// fetch: the run's Job (listed by the run's label and selected by owner UID, so it is found whatever name an
/// operator version gave it, and a foreign Job is never adopted), and the Datasets of the run's namespace when it
/// references any or mounts a claim.
async fn fetch(ctx: &Context, run: &TrainingRun, owner: &Owner) -> Result<Fetched> {
    let jobs: Api<Job> = Api::namespaced(ctx.client.clone(), &owner.namespace);
    let selector = format!("{LABEL_TRAINING}={}", label_value(&owner.name));
    let job = jobs
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::fetch(format!("Jobs of {}/{}", owner.namespace, owner.name), e))?
        .items
        .into_iter()
        .filter(|job| job.metadata.deletion_timestamp.is_none())
        .find(|job| owner.owns(&job.metadata));
    // A volume may mount a Dataset's claim: render refuses it unless the run references that Dataset.
    let references = run.spec.datasets.iter().flatten().next().is_some();
    let datasets = if references || render::mounts_a_claim(run.spec.volumes.as_deref()) {
        dataset::list_in(ctx, &owner.namespace).await?
    } else {
        Vec::new()
    };
    Ok(Fetched { job, datasets })
}

/// apply: the headless Service of an Indexed run (a plain apply, skipped when unchanged).
async fn sync_service(ctx: &Context, run: &TrainingRun, children: &TrainingChildren) -> Result<()> {
    let Some(service) = &children.headless_service else {
        return Ok(());
    };
    let child = Child::typed(service)?;
    let live = apply::read(&ctx.client, &ctx.children, LABEL_TRAINING, &child).await?;
    let created = live.is_absent();
    let (outcome, _) = apply::apply(&ctx.client, &ctx.children, &child, live).await?;
    if outcome == apply::ApplyOutcome::Recreated {
        recreate::announce(&ctx.recorder, &run.object_ref(&()), &child).await;
    }
    if created {
        announce(
            ctx,
            run,
            "Created",
            "Apply",
            format!("created {}", child.display()),
        )
        .await;
    }
    Ok(())
}

/// apply: creates the Job (server-side apply by [`render::FIELD_MANAGER`]) as rendered with this process's built-in
/// defaults. Called only when no Job exists; the template is never applied again. The run is first confirmed current
/// by a fresh read ([`Owner::confirm_current`]): a Job starts pods, so a reconcile from an outdated cache must not
/// create one for a run that was deleted (its Job already collected) or re-created meanwhile.
///
/// # Errors
/// [`Error::Outdated`] (retried on fresh data), and those of [`apply::apply`].
async fn create_job(
    ctx: &Context,
    run: &TrainingRun,
    owner: &Owner,
    children: &TrainingChildren,
) -> Result<Job> {
    let child = Child::typed(&children.job)?;
    owner.confirm_current::<TrainingRun>(&ctx.client).await?;
    // Created by a create-only apply, with no read of the Job first: a Job of this name that the fetch did not select
    // (another owner's, or a deleted run's still terminating) is refused, never adopted.
    let (_, object) = apply::apply(&ctx.client, &ctx.children, &child, Live::Unseen).await?;
    announce(
        ctx,
        run,
        "Created",
        "Apply",
        format!("created {}", child.display()),
    )
    .await;
    serde_json::to_value(object)
        .and_then(serde_json::from_value)
        .map_err(|source| Error::apply(child.display(), source))
}

/// apply: toggles `spec.suspend` of an unfinished Job through [`SUSPEND_FIELD_MANAGER`] when it differs from render's
/// `suspend` fact; returns the live Job (patched or not). A finished Job is left alone.
async fn set_suspend(
    ctx: &Context,
    run: &TrainingRun,
    owner: &Owner,
    facts: &TrainingFacts,
    job: Job,
) -> Result<Job> {
    let desired = facts.suspend;
    let live = job.spec.as_ref().and_then(|s| s.suspend) == Some(true);
    if live == desired || job_outcome(&job).is_some() {
        return Ok(job);
    }
    let name = job.name_any();
    let body = serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": owner.namespace},
        "spec": {"suspend": desired},
    });
    let jobs: Api<Job> = Api::namespaced(ctx.client.clone(), &owner.namespace);
    let params = PatchParams::apply(SUSPEND_FIELD_MANAGER).force();
    let patched = jobs
        .patch(&name, &params, &Patch::Apply(&body))
        .await
        .map_err(|e| Error::apply(format!("Job/{name} spec.suspend"), e))?;
    let (reason, what) = match (desired, facts.cancelled) {
        (true, true) => ("Cancelled", "cancelled: Job suspended and kept"),
        (true, false) => ("Suspended", "suspended: Job pods stop, the Job is kept"),
        (false, _) => ("Resumed", "resumed: Job pods start again"),
    };
    tracing::info!(job = %name, namespace = %owner.namespace, suspend = desired, "toggled Job suspend");
    announce(ctx, run, reason, "Suspend", format!("Job/{name} {what}")).await;
    Ok(patched)
}

/// The kinds of a TrainingRun's children (its Job and headless Service): what the controller watches and what prune
/// looks through.
fn child_kinds() -> [ApiResource; 2] {
    [
        ApiResource::erase::<Job>(&()),
        ApiResource::erase::<Service>(&()),
    ]
}

/// prune: owned Jobs and Services that are not rendered, keeping the live Job `job_name` whatever its name (the set
/// of a run is fixed by its immutable spec, so this removes only leftovers such as a second Job).
async fn prune_children(
    ctx: &Context,
    run: &TrainingRun,
    owner: &Owner,
    children: &TrainingChildren,
    job_name: &str,
) -> Result<()> {
    let mut keep = BTreeSet::new();
    keep.insert(("Job".to_owned(), job_name.to_owned()));
    if let Some(service) = &children.headless_service {
        keep.insert(("Service".to_owned(), service.name_any()));
    }
    let kinds = child_kinds();
    let label = label_value(&owner.name);
    let prune_owner = PruneOwner {
        namespace: &owner.namespace,
        uid: &owner.uid,
        label: (LABEL_TRAINING, &label),
    };
    let deleted = apply::prune(&ctx.client, &ctx.children, prune_owner, &kinds, &keep).await?;
    for child in deleted {
        announce(
            ctx,
            run,
            "Deleted",
            "Prune",
            format!("deleted {child}: no longer rendered"),
        )
        .await;
    }
    Ok(())
}

/// status: merge conditions (keeping transition times), write only a difference, and announce a new phase or a new
/// refusal.
async fn write(
    ctx: &Context,
    run: &TrainingRun,
    owner: &Owner,
    draft: Draft<TrainingRunStatus>,
) -> Result<()> {
    let current = run.status.as_ref();
    let degraded_before = current
        .and_then(|s| s.conditions.as_deref())
        .and_then(|c| conditions::find(c, ConditionType::Degraded))
        .map(|c| c.reason.clone());
    let refusal = draft
        .conditions
        .iter()
        .find(|c| c.type_ == ConditionType::Degraded && c.is_true())
        .filter(|c| c.reason != Reason::Failed)
        .cloned();
    let api: Api<TrainingRun> = Api::namespaced(ctx.client.clone(), &owner.namespace);
    let Some(status) = write_draft(&api, &ctx.status_writes, owner, current, draft).await? else {
        return Ok(());
    };
    if let Some(refusal) = refusal.filter(|r| degraded_before.as_deref() != Some(r.reason.as_str()))
    {
        let regarding = run.object_ref(&());
        // A render refusal, or what observing the Job's pods found: pods refused by the API server, or a stall.
        let action = if matches!(refusal.reason, Reason::PodsRefused | Reason::NeedsAttention) {
            "ObservePods"
        } else {
            "Render"
        };
        events::warning(
            &ctx.recorder,
            &regarding,
            refusal.reason.as_str(),
            action,
            refusal.message,
        )
        .await;
    }
    let before = current.and_then(|s| s.phase);
    if before != status.phase
        && let Some(phase) = status.phase
    {
        let note = match &status.reason {
            Some(reason) => format!("phase {phase:?} ({reason})"),
            None => format!("phase {phase:?}"),
        };
        if phase == TrainingPhase::Failed {
            events::warning(
                &ctx.recorder,
                &run.object_ref(&()),
                "Failed",
                "Reconcile",
                note,
            )
            .await;
        } else {
            announce(ctx, run, &format!("{phase:?}"), "Reconcile", note).await;
        }
    }
    Ok(())
}

async fn announce(ctx: &Context, run: &TrainingRun, reason: &str, action: &str, note: String) {
    events::normal(&ctx.recorder, &run.object_ref(&()), reason, action, note).await;
}

/// Requeue soon while pods are awaited (a `Pending` run, or one with fewer pods than its Job wants:
/// [`status::awaits_pods`]; the Job controller's retries change nothing the Job watch sees), else at the resync
/// period (the Job watch brings every change).
fn requeue_after(ctx: &Context, awaiting: bool) -> Duration {
    if awaiting {
        PENDING_REQUEUE
    } else {
        ctx.config.resync
    }
}

/// After a failed step: `Ready=False, ReconcileError` with the error, other conditions kept (best effort: the error
/// itself is what the caller returns). A run that never reconciled gets the phase and capacity class render's facts
/// give (`Pending`, or `Cancelled`: [`status::derive`] without a Job), so kubectl's columns are never empty; recorded
/// ones are kept.
async fn report_error(ctx: &Context, run: &TrainingRun, error: &Error) {
    let Ok(owner) = Owner::of(run) else { return };
    let previous = run.status.clone().unwrap_or_default();
    let facts = render::render_training(run, &[], &ctx.config.render).facts;
    let draft = Draft {
        conditions: conditions::after_error(
            previous.conditions.as_deref().unwrap_or_default(),
            error.reason(),
            error,
        ),
        status: TrainingRunStatus {
            observed_generation: run.meta().generation,
            phase: previous
                .phase
                .or(Some(status::derive(facts.cancelled, None, None).phase)),
            capacity_class: (previous.capacity_class.clone())
                .or_else(|| facts.capacity_class().map(str::to_owned)),
            ..previous
        },
    };
    if let Err(write_error) = write(ctx, run, &owner, draft).await {
        tracing::debug!(error = %write_error, "could not record the reconcile error in the status");
    }
}
