//! The TrainingRun controller (issue 5; DESIGN.md sections 3 and 5).
//!
//! One reconcile is the pipeline **fetch -> validate -> render -> apply/prune -> status**:
//! - fetch: the run's Job (a fresh GET, not the cache) and the Datasets of its namespace;
//! - render ([`crate::render::render_training`], pure): the Job, the headless Service of Indexed runs, the dataset
//!   checks (`DatasetsReady`; a refusal creates no Job);
//! - apply: the Job is **created once** and never applied again with its full template (a Job template is immutable,
//!   and a changed built-in default must never touch an existing Job, case O-05). Afterwards only `spec.suspend` is
//!   toggled, through its own field manager [`SUSPEND_FIELD_MANAGER`] (`intent: suspended`, `cancel`). A Job the TTL
//!   controller removed after the run finished is never created again ([`phase::may_create_job`]);
//! - prune: owned Jobs and Services that are not rendered (selected by owner UID);
//! - status: `phase` derived from the live Job every time ([`phase::derive`]), counts, times, conditions.

pub mod defaults;
pub mod phase;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, DeserializeGuard};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};

use self::phase::RunFacts;
use super::apply::{self, Child};
use super::conditions::{self, DesiredCondition, reasons, types};
use super::context::Context;
use super::error::{Error, Result};
use super::events;
use super::reconcile::{Owner, Reconcile, error_policy, reconcile};
use super::runtime::{ControllerSpec, StopSignal, mark_synced_when_ready};
use super::status::write_with_conditions;
use crate::api::{Dataset, Intent, TrainingPhase, TrainingRun, TrainingRunStatus};
use crate::capacity;
use crate::names::label_value;
use crate::render::{self, LABEL_TRAINING, RenderConfig, RenderError, RenderedTraining};

/// Kind label of this controller's metrics and logs.
pub const KIND: &str = "TrainingRun";

/// Field manager that owns a Job's `spec.suspend` after creation (DESIGN.md section 5): toggling it never repeats the
/// full-template apply of [`apply::FIELD_MANAGER`].
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
    let children = watcher::Config::default().labels(LABEL_TRAINING);
    let controller = Controller::new(
        ctx.watched_api::<DeserializeGuard<TrainingRun>>(),
        watcher::Config::default().any_semantic(),
    )
    .owns(ctx.watched_api::<Job>(), children.clone())
    .owns(ctx.watched_api::<Service>(), children);
    let runs = controller.store();
    let controller = controller.watches(
        ctx.watched_api::<DeserializeGuard<Dataset>>(),
        watcher::Config::default(),
        move |dataset| runs_referencing(&runs, &dataset),
    );
    mark_synced_when_ready(&ctx, controller.store(), KIND);
    controller
        .graceful_shutdown_on(stop.stopped())
        .run(reconcile::<TrainingRun>, error_policy::<TrainingRun>, ctx)
        .for_each(|_| async {})
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
    let fetched = fetch(ctx, run, &owner).await?;
    let rendered = render(run, &fetched.datasets);
    let cancelled = run.spec.cancel == Some(true);
    let job = match fetched.job {
        Some(job) => {
            if let Ok(rendered) = &rendered {
                sync_service(ctx, run, rendered).await?;
            }
            Some(set_suspend(ctx, run, &owner, job).await?)
        }
        None if phase::may_create_job(cancelled, run.status.as_ref()) => match &rendered {
            Ok(rendered) => {
                sync_service(ctx, run, rendered).await?;
                Some(create_job(ctx, run, rendered).await?)
            }
            Err(refusal) => return refuse(ctx, run, &owner, refusal).await,
        },
        None => None,
    };
    if let (Some(job), Ok(rendered)) = (&job, &rendered) {
        prune_children(ctx, run, &owner, rendered, &job.name_any()).await?;
    }
    let facts = phase::derive(cancelled, job.as_ref(), run.status.as_ref());
    let draft = desired_status(run, &rendered, job.is_some(), &facts);
    write(ctx, run, &owner, draft).await?;
    Ok(next_action(ctx, facts.phase))
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
/// references any.
async fn fetch(ctx: &Context, run: &TrainingRun, owner: &Owner) -> Result<Fetched> {
    let jobs: Api<Job> = Api::namespaced(ctx.client.clone(), &owner.namespace);
    let selector = format!("{LABEL_TRAINING}={}", label_value(&owner.name));
    let job = jobs
        .list(&ListParams::default().labels(&selector))
        .await?
        .items
        .into_iter()
        .filter(|job| job.metadata.deletion_timestamp.is_none())
        .find(|job| job.owner_references().iter().any(|o| o.uid == owner.uid));
    let datasets = if run.spec.datasets.iter().flatten().next().is_some() {
        let api: Api<Dataset> = Api::namespaced(ctx.client.clone(), &owner.namespace);
        api.list(&ListParams::default()).await?.items
    } else {
        Vec::new()
    };
    Ok(Fetched { job, datasets })
}

/// render (pure): desired children and facts; a dataset refusal or an unrenderable spec is the error.
fn render(run: &TrainingRun, datasets: &[Dataset]) -> Result<RenderedTraining, RenderError> {
    render::render_training(run, datasets, &RenderConfig::default())
}

/// apply: the headless Service of an Indexed run (a plain apply, skipped when unchanged).
async fn sync_service(ctx: &Context, run: &TrainingRun, rendered: &RenderedTraining) -> Result<()> {
    let Some(service) = &rendered.children.headless_service else {
        return Ok(());
    };
    let child = Child::typed(service)?;
    let live = apply::get_live(&ctx.client, &child).await?;
    let created = live.is_none();
    apply::apply(&ctx.client, &child, live).await?;
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

/// apply: creates the Job (server-side apply by [`apply::FIELD_MANAGER`]), with the built-in defaults of this
/// process ([`defaults`]). Called only when no Job exists; the template is never applied again.
async fn create_job(ctx: &Context, run: &TrainingRun, rendered: &RenderedTraining) -> Result<Job> {
    let mut job = rendered.children.job.clone();
    let extra = std::env::var(defaults::DEFAULT_ENV_VAR).unwrap_or_default();
    defaults::inject_default_env(&mut job, &defaults::parse_default_env(&extra));
    let child = Child::typed(&job)?;
    let (_, object) = apply::apply(&ctx.client, &child, None).await?;
    announce(
        ctx,
        run,
        "Created",
        "Apply",
        format!("created {}", child.display()),
    )
    .await;
    from_dynamic(&child, object)
}

/// The `spec.suspend` the Job should have: `intent: suspended` or `cancel`.
fn wants_suspend(run: &TrainingRun) -> bool {
    run.spec.cancel == Some(true) || run.spec.intent.unwrap_or_default() == Intent::Suspended
}

/// apply: toggles `spec.suspend` of an unfinished Job through [`SUSPEND_FIELD_MANAGER`] when it differs from the
/// run's intent; returns the live Job (patched or not). A finished Job is left alone.
async fn set_suspend(ctx: &Context, run: &TrainingRun, owner: &Owner, job: Job) -> Result<Job> {
    let desired = wants_suspend(run);
    let live = job.spec.as_ref().and_then(|s| s.suspend) == Some(true);
    if live == desired || phase::job_outcome(&job).is_some() {
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
    let patched = jobs.patch(&name, &params, &Patch::Apply(&body)).await?;
    let (reason, what) = match (desired, run.spec.cancel == Some(true)) {
        (true, true) => ("Cancelled", "cancelled: Job suspended and kept"),
        (true, false) => ("Suspended", "suspended: Job pods stop, the Job is kept"),
        (false, _) => ("Resumed", "resumed: Job pods start again"),
    };
    tracing::info!(job = %name, namespace = %owner.namespace, suspend = desired, "toggled Job suspend");
    announce(ctx, run, reason, "Suspend", format!("Job/{name} {what}")).await;
    Ok(patched)
}

fn from_dynamic(child: &Child, object: kube::api::DynamicObject) -> Result<Job> {
    let value = serde_json::to_value(object).map_err(|source| Error::Serialization {
        what: child.display(),
        source,
    })?;
    serde_json::from_value(value).map_err(|source| Error::Serialization {
        what: child.display(),
        source,
    })
}

/// prune: owned Jobs and Services that are not rendered, keeping the live Job `job_name` whatever its name (the set
/// of a run is fixed by its immutable spec, so this removes only leftovers such as a second Job).
async fn prune_children(
    ctx: &Context,
    run: &TrainingRun,
    owner: &Owner,
    rendered: &RenderedTraining,
    job_name: &str,
) -> Result<()> {
    let mut keep = BTreeSet::new();
    keep.insert(("Job".to_owned(), job_name.to_owned()));
    if let Some(service) = &rendered.children.headless_service {
        keep.insert(("Service".to_owned(), service.name_any()));
    }
    let kinds = [
        ApiResource::erase::<Job>(&()),
        ApiResource::erase::<Service>(&()),
    ];
    let selector = format!("{LABEL_TRAINING}={}", label_value(&owner.name));
    let deleted = apply::prune(
        &ctx.client,
        &owner.namespace,
        &owner.uid,
        &selector,
        &kinds,
        &keep,
    )
    .await?;
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

/// A status without merged conditions, and the desired conditions.
#[derive(Debug)]
struct StatusDraft {
    conditions: Vec<DesiredCondition>,
    status: TrainingRunStatus,
}

/// The status the run should have (pure).
fn desired_status(
    run: &TrainingRun,
    rendered: &Result<RenderedTraining, RenderError>,
    has_job: bool,
    facts: &RunFacts,
) -> StatusDraft {
    let current = run
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let datasets = datasets_ready(run, rendered.as_ref().err(), has_job, current);
    StatusDraft {
        conditions: run_conditions(run, facts, datasets),
        status: facts_status(run, facts),
    }
}

/// The status fields other than conditions.
fn facts_status(run: &TrainingRun, facts: &RunFacts) -> TrainingRunStatus {
    let budget = run
        .spec
        .gpu
        .as_ref()
        .and_then(|gpu| capacity::plan(gpu).ok().flatten());
    TrainingRunStatus {
        conditions: None,
        observed_generation: run.meta().generation,
        phase: Some(facts.phase),
        reason: facts.reason.clone(),
        job_name: facts.job_name.clone(),
        start_time: facts.start_time.clone(),
        completion_time: facts.completion_time.clone(),
        active: Some(facts.counts.active),
        ready: Some(facts.counts.ready),
        succeeded: Some(facts.counts.succeeded),
        failed: Some(facts.counts.failed),
        capacity_class: budget.as_ref().map(|b| b.class().name.to_owned()),
        per_gpu_memory_gib: budget.as_ref().map(|b| b.per_gpu_memory_gib()),
    }
}

/// `DatasetsReady`: the dataset check of render. Once the Job exists its mounts are fixed, so the condition keeps
/// what it said when the Job was created (a Dataset deleted after the run finished is no news).
fn datasets_ready(
    run: &TrainingRun,
    refusal: Option<&RenderError>,
    has_job: bool,
    current: &[Condition],
) -> DesiredCondition {
    if has_job && let Some(previous) = conditions::find(current, types::DATASETS_READY) {
        return DesiredCondition::from(previous);
    }
    match refusal {
        Some(RenderError::Datasets(refusal)) => DesiredCondition::new(
            types::DATASETS_READY,
            false,
            refusal.reason.as_str(),
            refusal.message.clone(),
        ),
        _ => {
            let count = run.spec.datasets.iter().flatten().count();
            DesiredCondition::new(
                types::DATASETS_READY,
                true,
                reasons::AS_EXPECTED,
                format!("{count} dataset(s) resolved and allowed"),
            )
        }
    }
}

/// `Ready`, `Suspended`, `DatasetsReady`, `Degraded` for a run whose phase is known (pure).
fn run_conditions(
    run: &TrainingRun,
    facts: &RunFacts,
    datasets: DesiredCondition,
) -> Vec<DesiredCondition> {
    let cancelled = run.spec.cancel == Some(true);
    let ready = match facts.phase {
        TrainingPhase::Running | TrainingPhase::Succeeded => DesiredCondition::new(
            types::READY,
            true,
            reasons::AS_EXPECTED,
            format!("phase {:?}", facts.phase),
        ),
        TrainingPhase::Pending => DesiredCondition::new(
            types::READY,
            false,
            reasons::PROGRESSING,
            "waiting for a ready pod",
        ),
        TrainingPhase::Suspended | TrainingPhase::Cancelled => DesiredCondition::new(
            types::READY,
            false,
            reasons::SUSPENDED,
            format!("phase {:?}: the Job is suspended", facts.phase),
        ),
        TrainingPhase::Failed => DesiredCondition::new(
            types::READY,
            false,
            "Failed",
            format!(
                "the Job failed: {}",
                facts.reason.as_deref().unwrap_or("Failed")
            ),
        ),
    };
    let suspended = if cancelled {
        DesiredCondition::new(types::SUSPENDED, true, "Cancelled", "spec.cancel is true")
    } else if run.spec.intent.unwrap_or_default() == Intent::Suspended {
        DesiredCondition::new(
            types::SUSPENDED,
            true,
            reasons::SUSPENDED,
            "intent is suspended",
        )
    } else {
        DesiredCondition::new(types::SUSPENDED, false, reasons::AS_EXPECTED, "")
    };
    let degraded = if facts.phase == TrainingPhase::Failed {
        DesiredCondition::new(
            types::DEGRADED,
            true,
            facts.reason.as_deref().unwrap_or("Failed"),
            "the run failed: create a new TrainingRun to try again",
        )
    } else {
        DesiredCondition::new(types::DEGRADED, false, reasons::AS_EXPECTED, "")
    };
    vec![ready, suspended, datasets, degraded]
}

/// status: merge conditions (keeping transition times), write only a difference, and announce phase changes.
async fn write(ctx: &Context, run: &TrainingRun, owner: &Owner, draft: StatusDraft) -> Result<()> {
    let current = run.status.as_ref();
    let current_conditions = current
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let api: Api<TrainingRun> = Api::namespaced(ctx.client.clone(), &owner.namespace);
    let written = write_with_conditions(
        &api,
        owner,
        current,
        &current_conditions,
        &draft.conditions,
        |merged| TrainingRunStatus {
            conditions: Some(merged),
            ..draft.status
        },
    )
    .await?;
    let Some(status) = written else {
        return Ok(());
    };
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

/// Requeue soon while pods are awaited, else at the resync period (the Job watch brings every change).
fn next_action(ctx: &Context, phase: TrainingPhase) -> Action {
    match phase {
        TrainingPhase::Pending => Action::requeue(PENDING_REQUEUE),
        _ => Action::requeue(ctx.config.resync),
    }
}

/// render refused the run before its Job exists (a dataset refusal, a writable dataset mount, a fit too big): no Job
/// is created; the status says why (`DatasetsReady` / `Degraded`) and the run waits for a change (Dataset changes
/// requeue it through the Dataset watch).
async fn refuse(
    ctx: &Context,
    run: &TrainingRun,
    owner: &Owner,
    refusal: &RenderError,
) -> Result<Action> {
    ctx.metrics.reconcile_failed(KIND, "invalid_spec");
    let facts = phase::derive(run.spec.cancel == Some(true), None, run.status.as_ref());
    let datasets = datasets_ready(run, Some(refusal), false, &[]);
    let message = refusal.to_string();
    let mut list = run_conditions(run, &facts, datasets);
    list[0] = DesiredCondition::new(types::READY, false, refusal.reason(), message.clone());
    list[3] = DesiredCondition::new(types::DEGRADED, true, refusal.reason(), message.clone());
    let previous = run
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .and_then(|c| conditions::find(c, types::DEGRADED).map(|d| d.reason.clone()));
    write(
        ctx,
        run,
        owner,
        StatusDraft {
            conditions: list,
            status: facts_status(run, &facts),
        },
    )
    .await?;
    if previous.as_deref() != Some(refusal.reason()) {
        events::warning(
            &ctx.recorder,
            &run.object_ref(&()),
            refusal.reason(),
            "Render",
            message,
        )
        .await;
    }
    Ok(Action::requeue(ctx.config.resync))
}

/// After a failed step: `Ready=False, ReconcileError` with the error, other conditions kept (best effort: the error
/// itself is what the caller returns).
async fn report_error(ctx: &Context, run: &TrainingRun, error: &Error) {
    let Ok(owner) = Owner::of(run) else { return };
    let current = run
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let list = conditions::after_error(current, error);
    let status = TrainingRunStatus {
        observed_generation: run.meta().generation,
        ..run.status.clone().unwrap_or_default()
    };
    let draft = StatusDraft {
        conditions: list,
        status,
    };
    if let Err(write_error) = write(ctx, run, &owner, draft).await {
        tracing::debug!(error = %write_error, "could not record the reconcile error in the status");
    }
}
