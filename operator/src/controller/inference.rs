//! The InferenceService controller (issue 4; DESIGN.md sections 3 and 5).
//!
//! One reconcile is the pipeline **fetch -> validate -> render -> apply/prune -> status**, each a short function
//! below; the pure parts live in `model_fleet_api::render` (children and facts) and `model_fleet_api::status`
//! (status and conditions from the facts and the live children). Rules implemented here:
//! - children are applied with [`apply`](crate::controller::apply) (zero writes when unchanged), pruned by owner UID;
//! - fixed -> autoscaled hand-over: before the first apply that omits `spec.replicas`, the current value is handed to
//!   a separate field manager; autoscaled -> fixed is a forced apply (DESIGN.md section 3, case O-04);
//! - `suspended` is rendered as KEDA `paused-replicas: "0"` (or 0 fixed replicas);
//! - the KEDA / Gateway API / KEDA HTTP add-on CRDs may be absent: those children are skipped and the status says
//!   `DependencyMissing`;
//! - `scaling.http`: the InterceptorRoute is an owned child; the ReferenceGrant in the add-on's namespace is kept by
//!   [`wake`];
//! - an object that does not deserialize is reported with a Warning Event and never breaks the watch.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;
use kube::Resource;
use kube::api::{Api, DynamicObject};
use kube::core::ApiResource;
use kube::runtime::controller::Action;
use model_fleet_api::conditions::{self, ConditionType};
use model_fleet_api::names::label_value;
use model_fleet_api::render::{
    self, InferenceChildren, InferenceFacts, LABEL_INFERENCE, RenderError, RenderedInference,
};
use model_fleet_api::routing::Conflict;
use model_fleet_api::schedule::{ScheduleState, Scheduled, idle as schedule_idle};
use model_fleet_api::status::Draft;
use model_fleet_api::status::inference as status;
use model_fleet_api::{InferenceService, InferenceServiceStatus};

use super::apply::{self, ApplyOutcome, Child, Live, PruneOwner};
use super::context::Context;
use super::discovery::{
    Dependencies, http_route_resource, interceptor_route_resource, scaled_object_resource,
};
use super::error::{Error, Result};
use super::events;
use super::recreate;

mod announce;
mod idle;
mod observe;
mod replicas;
pub(crate) mod routes;
mod trigger;
pub mod wake;
mod watches;

use self::observe::observe_children;
use self::replicas::{deployment_with_replicas, parse};
use super::failpoint::{self, Failpoint};
use super::reconcile::{Owner, Reconcile};
use super::runtime::ControllerSpec;
use super::status::write_draft;

/// Kind label of this controller's metrics and logs.
pub const KIND: &str = "InferenceService";

/// Requeue while a rollout is under way, pods wait for a node or a hostname is held by another service (seconds: 10),
/// to notice pod scheduling states that do not change the Deployment (`OperatorConfig::progress_requeue`).
pub const PROGRESS_REQUEUE: Duration = Duration::from_secs(10);

/// The controller as the runtime starts it.
pub fn controller() -> ControllerSpec {
    ControllerSpec {
        kind: KIND,
        run: Box::new(|ctx, stop| Box::pin(watches::run(ctx, stop))),
    }
}

impl Reconcile for InferenceService {
    const KIND: &'static str = KIND;
    const SKIP_DELETING: bool = true;

    fn pipeline(&self, ctx: &Context) -> impl Future<Output = Result<Action>> + Send {
        pipeline(self, ctx)
    }

    fn report_error(&self, ctx: &Context, error: &Error) -> impl Future<Output = ()> + Send {
        report_error(ctx, self, error)
    }
}

async fn pipeline(isvc: &InferenceService, ctx: &Context) -> Result<Action> {
    let owner = Owner::of(isvc)?;
    let deps = fetch(ctx).await?;
    // Scheduled suspend: every step below sees the effective intent; the spec's own is kept for the status.
    let own_intent = isvc.spec.intent;
    let now = Timestamp::now();
    let schedule = ScheduleState::of(isvc.expires_at(), now);
    let effective = schedule_idle::effective_view(isvc, &schedule);
    let isvc = effective.as_ref();
    let RenderedInference { facts, children } = render::render_inference(isvc, &ctx.config.render);
    let children = match children {
        Ok(children) => dataset_claims(ctx, isvc, &owner).await?.map(|()| children),
        refused => refused,
    };
    let children = match children {
        Ok(children) => children,
        Err(refusal) => return refuse(ctx, isvc, &owner, &facts, refusal).await,
    };
    let conflict = match (&children.http_route, deps.gateway_api) {
        (Some(_), true) => ctx.route_claims.conflict(isvc, &ctx.config.render).await,
        _ => None,
    };
    let applied = apply_children(ctx, isvc, &owner, &children, &facts, deps, conflict).await?;
    let converged = async {
        prune_children(ctx, isvc, &owner, &applied, deps).await?;
        let observed =
            observe_children(ctx, isvc, &owner, &children, &facts, &applied, deps).await?;
        let mut draft = status::desired(isvc, &facts, &observed.view(&applied));
        if applied.conflict.is_some() {
            // Not served: no URL to announce.
            draft.status.url = None;
        }
        schedule.annotate(own_intent, &mut draft.conditions);
        draft.status.next_transition = schedule.next_transition(own_intent);
        let idle = idle::evaluate(isvc, facts.intent, applied.scaled_object.as_ref(), now);
        idle::annotate(isvc, &idle, own_intent, &mut draft);
        // A service in a hostname conflict is retried soon: the holder may drop the claim without a change that the
        // contenders watch can attribute to this service.
        let settled = applied.conflict.is_none()
            && draft
                .conditions
                .iter()
                .find(|c| c.type_ == ConditionType::Ready)
                .is_some_and(status::settled);
        write(ctx, isvc, &owner, draft, &applied.created).await?;
        idle::announce(ctx, isvc, &idle).await;
        let requeue = schedule.requeue_within(requeue_after(ctx, settled));
        Ok(Action::requeue(idle::requeue_within(&idle, now, requeue)))
    }
    .await;
    if converged.is_err() {
        // The status write that would have carried them did not happen: the created children are news anyway.
        announce::publish(ctx, isvc, &applied.created, &[], &[]).await;
    }
    converged
}

/// fetch and check a spec render accepted: its volumes of Datasets' claims
/// ([`render::refuse_service_dataset_claims`]). The namespace's Datasets are listed only when a volume mounts a claim.
///
/// # Errors
/// The list's failure; the inner `Err` is the refusal.
async fn dataset_claims(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
) -> Result<std::result::Result<(), RenderError>> {
    if !render::mounts_a_claim(isvc.spec.volumes.as_deref()) {
        return Ok(Ok(()));
    }
    let datasets = super::dataset::list_in(ctx, &owner.namespace).await?;
    Ok(render::refuse_service_dataset_claims(isvc, &datasets))
}

/// fetch: which optional CRDs the controller watches ([`DependencyCache::for_reconcile`](super::discovery::DependencyCache::for_reconcile)).
async fn fetch(ctx: &Context) -> Result<Dependencies> {
    ctx.dependencies.for_reconcile().await
}

/// What the apply step did.
#[derive(Debug, Default)]
struct Applied {
    /// The live Deployment after apply.
    deployment: Option<Deployment>,
    /// Whether this apply created the Deployment (so no pod of it exists yet).
    deployment_created: bool,
    /// The live ScaledObject after apply (when rendered and KEDA is installed).
    scaled_object: Option<DynamicObject>,
    /// The live HTTPRoute after apply (when rendered and Gateway API is installed).
    http_route: Option<DynamicObject>,
    /// `(kind, name)` of every child that should exist: what prune keeps.
    keep: BTreeSet<(String, String)>,
    /// The hostname and path an older service holds ([`routes::RouteClaims::conflict`]): no HTTPRoute was applied.
    conflict: Option<Conflict>,
    /// `Kind/name` of each child this apply created, announced in one `Created` Event (one write, not one per child).
    /// The first is created after a fresh read confirmed the service current ([`Owner::confirm_current`]).
    created: Vec<String>,
}

/// apply: Service, Deployment (with the replica hand-over), ScaledObject, HTTPRoute, each skipped when unchanged;
/// the HTTPRoute also when another service holds its hostname and path (prune then deletes ours).
async fn apply_children(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
    children: &InferenceChildren,
    facts: &InferenceFacts,
    deps: Dependencies,
    conflict: Option<Conflict>,
) -> Result<Applied> {
    let mut applied = Applied {
        conflict,
        ..Applied::default()
    };

    let service = Child::typed(&children.service)?;
    let live = apply::read(&ctx.client, &ctx.children, LABEL_INFERENCE, &service).await?;
    if apply_child(ctx, owner, &service, live, &mut applied)
        .await?
        .0
        == ApplyOutcome::Recreated
    {
        recreate::announce(&ctx.recorder, &isvc.object_ref(&()), &service).await;
    }

    let (deployment, live) = deployment_with_replicas(ctx, isvc, owner, children, facts).await?;
    applied.deployment_created = live.is_absent();
    let (outcome, object) = apply_child(ctx, owner, &deployment, live, &mut applied).await?;
    if outcome == ApplyOutcome::Applied {
        failpoint::hit(ctx.config.failpoint, Failpoint::AfterDeploymentApply);
    }
    applied.deployment = Some(parse(&deployment, object)?);

    if let (Some(route), true) = (&children.interceptor_route, deps.http_add_on) {
        apply_one(ctx, owner, &Child::typed(route)?, &mut applied).await?;
    }
    if let (Some(scaled_object), true) = (&children.scaled_object, deps.keda) {
        let child = Child::typed(scaled_object)?;
        applied.scaled_object = Some(apply_one(ctx, owner, &child, &mut applied).await?);
    }
    if let (Some(grant), true, true) = (
        &children.reference_grant,
        deps.gateway_api,
        deps.http_add_on,
    ) {
        ctx.wake_grants
            .ensure(ctx, grant, ctx.config.resync)
            .await?;
    }
    if let (Some(route), true, None) = (&children.http_route, deps.gateway_api, &applied.conflict) {
        let child = Child::typed(route)?;
        applied.http_route = Some(apply_one(ctx, owner, &child, &mut applied).await?);
    }
    Ok(applied)
}

async fn apply_one(
    ctx: &Context,
    owner: &Owner,
    child: &Child,
    applied: &mut Applied,
) -> Result<DynamicObject> {
    let live = apply::read(&ctx.client, &ctx.children, LABEL_INFERENCE, child).await?;
    Ok(apply_child(ctx, owner, child, live, applied).await?.1)
}

/// Applies one child ([`apply::apply`]) and records it in `applied`. Before the first child this reconcile creates,
/// the service is confirmed current by a fresh read ([`Owner::confirm_current`]): a Deployment starts pods and an
/// HTTPRoute claims a hostname, so a reconcile from an outdated cache creates nothing for a service deleted (its
/// children already collected) or re-created meanwhile. Updates of existing children need no such read: they carry
/// the owner's UID, and an object of a deleted owner is collected anyway.
///
/// # Errors
/// [`Error::Outdated`] (retried on fresh data), and those of [`apply::apply`].
async fn apply_child(
    ctx: &Context,
    owner: &Owner,
    child: &Child,
    live: Live,
    applied: &mut Applied,
) -> Result<(ApplyOutcome, DynamicObject)> {
    let created = live.is_absent();
    // Only the first child this reconcile creates waits for the read; the later ones follow a confirmed one.
    if created && applied.created.is_empty() {
        owner
            .confirm_current::<InferenceService>(&ctx.client)
            .await?;
    }
    let (outcome, object) = apply::apply(&ctx.client, &ctx.children, child, live).await?;
    applied
        .keep
        .insert((child.resource.kind.clone(), child.name.clone()));
    if created {
        applied.created.push(child.display());
    }
    Ok((outcome, object))
}

/// The kinds an InferenceService's children can have with the installed dependencies: what the controller watches
/// and what prune looks through.
fn child_kinds(deps: Dependencies) -> Vec<ApiResource> {
    let mut kinds = vec![
        ApiResource::erase::<Deployment>(&()),
        ApiResource::erase::<Service>(&()),
    ];
    kinds.extend(deps.keda.then(scaled_object_resource));
    kinds.extend(deps.http_add_on.then(interceptor_route_resource));
    kinds.extend(deps.gateway_api.then(http_route_resource));
    kinds
}

/// prune: delete owned children that were not applied this time (e.g. the ScaledObject after triggers are removed,
/// the HTTPRoute after `gateway` is removed).
async fn prune_children(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
    applied: &Applied,
    deps: Dependencies,
) -> Result<()> {
    let kinds = child_kinds(deps);
    let label = label_value(&owner.name);
    let prune_owner = PruneOwner {
        namespace: &owner.namespace,
        uid: &owner.uid,
        label: (LABEL_INFERENCE, &label),
    };
    let deleted = apply::prune(
        &ctx.client,
        &ctx.children,
        prune_owner,
        &kinds,
        &applied.keep,
    )
    .await?;
    for child in deleted {
        let note = match &applied.conflict {
            Some(conflict) if child.starts_with("HTTPRoute/") => conflict.route_removed(&child),
            _ => format!("deleted {child}: no longer rendered"),
        };
        events::normal(
            &ctx.recorder,
            &isvc.object_ref(&()),
            "Deleted",
            "Prune",
            note,
        )
        .await;
    }
    Ok(())
}

/// status: merge conditions (keeping transition times), write through the status subresource only on a difference;
/// then the Events ([`announce`]) of the children `created` by this reconcile and of the `Ready` or warning
/// conditions that changed. Nothing is published when the write fails.
async fn write(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
    draft: Draft<InferenceServiceStatus>,
    created: &[String],
) -> Result<()> {
    let current = isvc.status.as_ref();
    let before: Vec<Condition> = current
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let after = draft.conditions.clone();
    let api: Api<InferenceService> = Api::namespaced(ctx.client.clone(), &owner.namespace);
    let written = write_draft(&api, &ctx.status_writes, owner, current, draft).await?;
    let after = if written.is_some() { &after[..] } else { &[] };
    announce::publish(ctx, isvc, created, &before, after).await;
    Ok(())
}

/// Requeue soon while not settled (pods may be waiting for a node; [`PROGRESS_REQUEUE`] unless a test sets it), else
/// at the resync period.
fn requeue_after(ctx: &Context, settled: bool) -> Duration {
    if settled {
        ctx.config.resync
    } else {
        ctx.config.progress_requeue
    }
}

/// render refused the spec (fit too large, no gateway): nothing is applied or pruned; the status says why, with the
/// replica counts of the Deployment the last accepted spec left running (one read: its watch reconciles the service
/// when they change), and the object waits for a change.
async fn refuse(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
    facts: &InferenceFacts,
    refusal: RenderError,
) -> Result<Action> {
    let deployments: Api<Deployment> = Api::namespaced(ctx.client.clone(), &owner.namespace);
    let running = deployments
        .get_opt(&owner.name)
        .await
        .map_err(|e| Error::fetch(format!("Deployment {}/{}", owner.namespace, owner.name), e))?
        .filter(|d| owner.owns(&d.metadata));
    let draft = status::refused(isvc, facts, &refusal, running.as_ref());
    ctx.count_error(KIND, &Error::Render(refusal));
    write(ctx, isvc, owner, draft, &[]).await?;
    Ok(Action::await_change())
}

/// After a failed step: `Ready=False, ReconcileError` with the error, other conditions kept (best effort: the error
/// itself is what the caller returns). A service that never reconciled gets its `status.effective` from render's
/// facts, so the `Intent` printer column is never empty; an earlier one is kept (it describes the last reconcile that
/// succeeded; this one may have applied some children before it failed).
async fn report_error(ctx: &Context, isvc: &InferenceService, error: &Error) {
    let Ok(owner) = Owner::of(isvc) else { return };
    let previous = isvc.status.clone().unwrap_or_default();
    let effective = previous.effective.clone().or_else(|| {
        let view = schedule_idle::effective_view(
            isvc,
            &ScheduleState::of(isvc.expires_at(), Timestamp::now()),
        );
        Some(
            render::render_inference(&view, &ctx.config.render)
                .facts
                .effective,
        )
    });
    let draft = Draft {
        conditions: conditions::after_error(
            previous.conditions.as_deref().unwrap_or_default(),
            error.reason(),
            error,
        ),
        status: InferenceServiceStatus {
            effective,
            ..previous
        },
    };
    if let Err(write_error) = write(ctx, isvc, &owner, draft, &[]).await {
        tracing::debug!(error = %write_error, "could not record the reconcile error in the status");
    }
}
