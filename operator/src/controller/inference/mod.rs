//! The InferenceService controller (issue 4; DESIGN.md sections 3 and 5).
//!
//! One reconcile is the pipeline **fetch -> validate -> render -> apply/prune -> status**, each a short function
//! below; the pure parts live in [`crate::render`] (children and facts) and [`observe`] (conditions from live
//! children). Rules implemented here:
//! - children are applied with [`apply`](crate::controller::apply) (zero writes when unchanged), pruned by owner UID;
//! - fixed -> autoscaled hand-over: before the first apply that omits `spec.replicas`, the current value is handed to
//!   a separate field manager; autoscaled -> fixed is a forced apply (DESIGN.md section 3, case O-04);
//! - `suspended` is rendered as KEDA `paused-replicas: "0"` (or 0 fixed replicas);
//! - the KEDA / Gateway API CRDs may be absent: those children are skipped and the status says `DependencyMissing`;
//! - an object that does not deserialize is reported with a Warning Event and never breaks the watch.

pub mod observe;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Service};
use kube::Resource;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, DeserializeGuard, GroupVersionKind};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;

use self::observe::{RouteState, ScalingState};
use super::apply::{self, ApplyOutcome, Child, FIELD_MANAGER};
use super::conditions::{self, DesiredCondition, reasons, types};
use super::context::Context;
use super::discovery::{Dependencies, http_route_resource, scaled_object_resource};
use super::error::{Error, Result};
use super::reconcile::{Owner, Reconcile, error_policy, reconcile};
use super::runtime::{ControllerSpec, StopSignal, mark_synced_when_ready};
use super::status::write_with_conditions;
use super::{events, failpoint};
use crate::api::{InferenceService, InferenceServiceStatus};
use crate::names::label_value;
use crate::render::{
    self, HTTPRoute, InferenceChildren, LABEL_INFERENCE, RenderConfig, RenderError,
    RenderedInference, ScaledObject,
};

/// Kind label of this controller's metrics and logs.
pub const KIND: &str = "InferenceService";

/// Requeue while a rollout is under way or pods wait for a node (seconds: 10), to notice pod scheduling states that
/// do not change the Deployment.
pub const PROGRESS_REQUEUE: Duration = Duration::from_secs(10);

/// The controller as the runtime starts it.
pub fn controller() -> ControllerSpec {
    ControllerSpec {
        kind: KIND,
        run: Box::new(|ctx, stop| Box::pin(run(ctx, stop))),
    }
}

/// Watches InferenceServices (through `DeserializeGuard`) and their children until `stop` fires. Children of kinds
/// whose CRDs are absent at start are not watched (their absence is reported per object).
pub async fn run(ctx: Arc<Context>, stop: StopSignal) {
    let deps = match ctx.dependencies.get().await {
        Ok(deps) => deps,
        Err(error) => {
            tracing::warn!(%error, "discovery failed: not watching ScaledObjects and HTTPRoutes");
            Dependencies {
                keda: false,
                gateway_api: false,
            }
        }
    };
    let children = watcher::Config::default().labels(LABEL_INFERENCE);
    let mut controller = Controller::new(
        ctx.watched_api::<DeserializeGuard<InferenceService>>(),
        watcher::Config::default().any_semantic(),
    )
    .owns(
        ctx.watched_api::<DeserializeGuard<Deployment>>(),
        children.clone(),
    )
    .owns(
        ctx.watched_api::<DeserializeGuard<Service>>(),
        children.clone(),
    );
    if deps.keda {
        controller = controller.owns(
            ctx.watched_api::<DeserializeGuard<ScaledObject>>(),
            children.clone(),
        );
    }
    if deps.gateway_api {
        controller = controller.owns(ctx.watched_api::<DeserializeGuard<HTTPRoute>>(), children);
    }
    mark_synced_when_ready(&ctx, controller.store(), KIND);
    controller
        .graceful_shutdown_on(stop.stopped())
        .run(
            reconcile::<InferenceService>,
            error_policy::<InferenceService>,
            ctx,
        )
        .for_each(|_| async {})
        .await;
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
    let rendered = match render(isvc, ctx) {
        Ok(rendered) => rendered,
        Err(refusal) => return refuse(ctx, isvc, &owner, refusal).await,
    };
    let applied = apply_children(ctx, isvc, &owner, &rendered.children, deps).await?;
    prune_children(ctx, isvc, &owner, &applied, deps).await?;
    let observed = observe_children(ctx, isvc, &owner, &rendered, &applied, deps).await?;
    let status = desired_status(isvc, &rendered, &applied, &observed);
    write(ctx, isvc, &owner, status).await?;
    Ok(next_action(ctx, &observed.ready))
}

/// fetch: which optional CRDs exist (cached discovery).
async fn fetch(ctx: &Context) -> Result<Dependencies> {
    ctx.dependencies.get().await
}

/// render (pure): desired children and status facts.
fn render(isvc: &InferenceService, ctx: &Context) -> Result<RenderedInference, RenderError> {
    let config = RenderConfig {
        default_gateway: ctx
            .config
            .default_gateway
            .as_ref()
            .map(|g| render::GatewayRef {
                namespace: g.namespace.clone(),
                name: g.name.clone(),
            }),
    };
    render::render_inference(isvc, &config)
}

/// What the apply step did.
#[derive(Debug, Default)]
struct Applied {
    /// The live Deployment after apply.
    deployment: Option<Deployment>,
    /// The live ScaledObject after apply (when rendered and KEDA is installed).
    scaled_object: Option<DynamicObject>,
    /// The live HTTPRoute after apply (when rendered and Gateway API is installed).
    http_route: Option<DynamicObject>,
    /// `(kind, name)` of every child that should exist: what prune keeps.
    keep: BTreeSet<(String, String)>,
}

/// apply: Service, Deployment (with the replica hand-over), ScaledObject, HTTPRoute, each skipped when unchanged.
async fn apply_children(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
    children: &InferenceChildren,
    deps: Dependencies,
) -> Result<Applied> {
    let mut applied = Applied::default();

    let service = Child::typed(&children.service)?;
    apply_one(ctx, isvc, &service, &mut applied).await?;

    let deployment = Child::typed(&children.deployment)?;
    let live = apply::get_live(&ctx.client, &deployment).await?;
    if let Some(live) = &live {
        hand_over_replicas_if_needed(ctx, isvc, owner, children, &deployment, live).await?;
    }
    let (outcome, object) = apply_child(ctx, isvc, &deployment, live, &mut applied).await?;
    if outcome == ApplyOutcome::Applied {
        failpoint::hit(failpoint::AFTER_DEPLOYMENT_APPLY);
    }
    applied.deployment = Some(parse(&deployment, object)?);

    if let (Some(scaled_object), true) = (&children.scaled_object, deps.keda) {
        let child = Child::typed(scaled_object)?;
        applied.scaled_object = Some(apply_one(ctx, isvc, &child, &mut applied).await?);
    }
    if let (Some(route), true) = (&children.http_route, deps.gateway_api) {
        let child = Child::typed(route)?;
        applied.http_route = Some(apply_one(ctx, isvc, &child, &mut applied).await?);
    }
    Ok(applied)
}

async fn apply_one(
    ctx: &Context,
    isvc: &InferenceService,
    child: &Child,
    applied: &mut Applied,
) -> Result<DynamicObject> {
    let live = apply::get_live(&ctx.client, child).await?;
    Ok(apply_child(ctx, isvc, child, live, applied).await?.1)
}

async fn apply_child(
    ctx: &Context,
    isvc: &InferenceService,
    child: &Child,
    live: Option<DynamicObject>,
    applied: &mut Applied,
) -> Result<(ApplyOutcome, DynamicObject)> {
    let created = live.is_none();
    let (outcome, object) = apply::apply(&ctx.client, child, live).await?;
    applied
        .keep
        .insert((child.resource.kind.clone(), child.name.clone()));
    if created {
        events::normal(
            &ctx.recorder,
            &isvc.object_ref(&()),
            "Created",
            "Apply",
            format!("created {}", child.display()),
        )
        .await;
    }
    Ok((outcome, object))
}

/// Fixed -> autoscaled (DESIGN.md section 3): when the rendered Deployment omits `spec.replicas` but our field manager
/// still owns it, first hand the live value to a separate manager so dropping it does not reset it to 1.
async fn hand_over_replicas_if_needed(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
    children: &InferenceChildren,
    child: &Child,
    live: &DynamicObject,
) -> Result<()> {
    let omits_replicas = children
        .deployment
        .spec
        .as_ref()
        .is_none_or(|s| s.replicas.is_none());
    if !omits_replicas || !apply::owns_spec_replicas(live, FIELD_MANAGER) {
        return Ok(());
    }
    let replicas = live
        .data
        .pointer("/spec/replicas")
        .and_then(|v| v.as_i64())
        .unwrap_or(1);
    apply::hand_over_replicas(
        &ctx.client,
        &child.resource,
        &owner.namespace,
        &child.name,
        replicas,
    )
    .await?;
    events::normal(
        &ctx.recorder,
        &isvc.object_ref(&()),
        "ReplicasHandedOver",
        "Autoscale",
        format!(
            "{} keeps {replicas} replicas while the autoscaler takes over",
            child.display()
        ),
    )
    .await;
    Ok(())
}

fn parse(child: &Child, object: DynamicObject) -> Result<Deployment> {
    let value = serde_json::to_value(object).map_err(|source| Error::Serialization {
        what: child.display(),
        source,
    })?;
    serde_json::from_value(value).map_err(|source| Error::Serialization {
        what: child.display(),
        source,
    })
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
    let mut kinds = vec![
        ApiResource::erase::<Deployment>(&()),
        ApiResource::erase::<Service>(&()),
    ];
    if deps.keda {
        kinds.push(scaled_object_resource());
    }
    if deps.gateway_api {
        kinds.push(http_route_resource());
    }
    let selector = format!("{LABEL_INFERENCE}={}", label_value(&owner.name));
    let deleted = apply::prune(
        &ctx.client,
        &owner.namespace,
        &owner.uid,
        &selector,
        &kinds,
        &applied.keep,
    )
    .await?;
    for child in deleted {
        events::normal(
            &ctx.recorder,
            &isvc.object_ref(&()),
            "Deleted",
            "Prune",
            format!("deleted {child}: no longer rendered"),
        )
        .await;
    }
    Ok(())
}

/// Conditions derived from the live children.
#[derive(Debug)]
struct Observed {
    ready: DesiredCondition,
    conditions: Vec<DesiredCondition>,
}

/// observe: read what the children report (pods for scheduling, the Gateway when a route is not accepted) and derive
/// the conditions with the pure functions of [`observe`].
async fn observe_children(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
    rendered: &RenderedInference,
    applied: &Applied,
    deps: Dependencies,
) -> Result<Observed> {
    let intent = isvc.spec.intent.unwrap_or_default();
    let deployment = applied.deployment.as_ref();
    let unschedulable = match deployment {
        Some(d) if !observe::rolled_out(d) => unschedulable_pods(ctx, owner).await?,
        _ => None,
    };

    let mut missing = Vec::new();
    let children = &rendered.children;
    if children.scaled_object.is_some() && !deps.keda {
        missing.push("KEDA (keda.sh/v1alpha1 ScaledObject)");
    }
    if children.http_route.is_some() && !deps.gateway_api {
        missing.push("Gateway API (gateway.networking.k8s.io/v1 HTTPRoute)");
    }

    let route = route_state(ctx, children, applied, deps).await?;
    let scaling = match (&children.scaled_object, &applied.scaled_object) {
        (None, _) => ScalingState::Fixed(rendered.facts.fixed_replicas.unwrap_or(0)),
        (Some(_), None) => ScalingState::KedaMissing,
        (Some(_), Some(live)) => ScalingState::Applied {
            status: live.data.get("status"),
            unreachable_from_zero: observe::scale_from_zero_unreachable(&isvc.spec),
        },
    };

    let ready = observe::ready(intent, deployment, unschedulable.as_deref(), &missing);
    let mut list = vec![
        ready.clone(),
        observe::progressing(deployment),
        observe::route_ready(&route),
        observe::scaling_ready(&scaling),
        observe::suspended(intent),
    ];
    list.push(degraded(&list));
    Ok(Observed {
        ready,
        conditions: list,
    })
}

/// `Degraded`: True when another condition is a warning a human must act on; the message lists them.
fn degraded(conditions: &[DesiredCondition]) -> DesiredCondition {
    let problems: Vec<String> = conditions
        .iter()
        .filter(|c| observe::is_warning(c))
        .map(|c| format!("{}: {}", c.type_, c.reason))
        .collect();
    if problems.is_empty() {
        DesiredCondition::new(types::DEGRADED, false, reasons::AS_EXPECTED, "")
    } else {
        DesiredCondition::new(types::DEGRADED, true, "NeedsAttention", problems.join("; "))
    }
}

async fn unschedulable_pods(ctx: &Context, owner: &Owner) -> Result<Option<String>> {
    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), &owner.namespace);
    let selector = format!("{LABEL_INFERENCE}={}", label_value(&owner.name));
    let list = pods.list(&ListParams::default().labels(&selector)).await?;
    Ok(observe::unschedulable_message(&list.items))
}

async fn route_state<'a>(
    ctx: &Context,
    children: &'a InferenceChildren,
    applied: &'a Applied,
    deps: Dependencies,
) -> Result<RouteState<'a>> {
    let Some(route) = &children.http_route else {
        return Ok(RouteState::NotRequested);
    };
    if !deps.gateway_api {
        return Ok(RouteState::CrdMissing);
    }
    let Some(parent) = route.spec.parent_refs.first() else {
        return Ok(RouteState::NoGateway);
    };
    let live_status = applied
        .http_route
        .as_ref()
        .and_then(|r| r.data.get("status"));
    let state = RouteState::Applied {
        status: live_status,
        parent: (&parent.namespace, &parent.name),
    };
    if observe::route_ready(&state).status == conditions::ConditionStatus::True {
        return Ok(state);
    }
    // Not accepted: say GatewayNotFound when the Gateway itself is missing (a read, never a write).
    let gateways: Api<DynamicObject> =
        Api::namespaced_with(ctx.client.clone(), &parent.namespace, &gateway_resource());
    if gateways.get_opt(&parent.name).await?.is_none() {
        return Ok(RouteState::GatewayNotFound(format!(
            "{}/{}",
            parent.namespace, parent.name
        )));
    }
    Ok(state)
}

fn gateway_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "Gateway"),
        "gateways",
    )
}

/// The status the object should have (pure given the observations). Conditions are merged later by [`write`].
fn desired_status(
    isvc: &InferenceService,
    rendered: &RenderedInference,
    applied: &Applied,
    observed: &Observed,
) -> StatusDraft {
    let deployment_status = applied.deployment.as_ref().and_then(|d| d.status.as_ref());
    StatusDraft {
        conditions: observed.conditions.clone(),
        status: InferenceServiceStatus {
            conditions: None,
            observed_generation: isvc.meta().generation,
            replicas: Some(deployment_status.and_then(|s| s.replicas).unwrap_or(0)),
            ready_replicas: Some(
                deployment_status
                    .and_then(|s| s.ready_replicas)
                    .unwrap_or(0),
            ),
            url: rendered.facts.url.clone(),
            capacity_class: rendered.facts.capacity_class().map(str::to_owned),
            per_gpu_memory_gib: rendered.facts.per_gpu_memory_gib(),
            effective: Some(rendered.facts.effective.clone()),
        },
    }
}

/// A status without merged conditions, and the desired conditions.
#[derive(Debug)]
struct StatusDraft {
    conditions: Vec<DesiredCondition>,
    status: InferenceServiceStatus,
}

/// status: merge conditions (keeping transition times), write through the status subresource only on a difference,
/// and publish an Event when `Ready` changes.
async fn write(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
    draft: StatusDraft,
) -> Result<()> {
    let current = isvc.status.as_ref();
    let current_conditions = current
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let api: Api<InferenceService> = Api::namespaced(ctx.client.clone(), &owner.namespace);
    let written = write_with_conditions(
        &api,
        owner,
        current,
        &current_conditions,
        &draft.conditions,
        |merged| InferenceServiceStatus {
            conditions: Some(merged),
            ..draft.status
        },
    )
    .await?;
    if written.is_none() {
        return Ok(());
    }
    announce_ready_change(ctx, isvc, &current_conditions, &draft.conditions).await;
    Ok(())
}

async fn announce_ready_change(
    ctx: &Context,
    isvc: &InferenceService,
    before: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition],
    after: &[DesiredCondition],
) {
    for want in after
        .iter()
        .filter(|c| c.type_ == types::READY || observe::is_warning(c))
    {
        let previous = conditions::find(before, &want.type_);
        let changed =
            previous.is_none_or(|p| p.status != want.status.as_str() || p.reason != want.reason);
        if !changed {
            continue;
        }
        let note = format!(
            "{} is {}: {}",
            want.type_,
            want.status.as_str(),
            want.message
        );
        if observe::is_warning(want) {
            events::warning(
                &ctx.recorder,
                &isvc.object_ref(&()),
                &want.reason,
                "Reconcile",
                note,
            )
            .await;
        } else {
            events::normal(
                &ctx.recorder,
                &isvc.object_ref(&()),
                &want.reason,
                "Reconcile",
                note,
            )
            .await;
        }
    }
}

/// Requeue soon while not ready (pods may be waiting for a node), else at the resync period.
fn next_action(ctx: &Context, ready: &DesiredCondition) -> Action {
    let settled = ready.status == conditions::ConditionStatus::True
        || matches!(
            ready.reason.as_str(),
            reasons::SUSPENDED | reasons::SCALED_TO_ZERO | reasons::DEPENDENCY_MISSING
        );
    if settled {
        Action::requeue(ctx.config.resync)
    } else {
        Action::requeue(PROGRESS_REQUEUE)
    }
}

/// render refused the spec (fit too large, no gateway): nothing is applied or pruned; the status says why and the
/// object waits for a spec change.
async fn refuse(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
    refusal: RenderError,
) -> Result<Action> {
    ctx.metrics.reconcile_failed(KIND, "invalid_spec");
    let message = refusal.to_string();
    let mut list = vec![DesiredCondition::new(
        types::READY,
        false,
        reasons::RECONCILE_ERROR,
        message.clone(),
    )];
    if matches!(refusal, RenderError::NoGateway) {
        list.push(observe::route_ready(&RouteState::NoGateway));
    }
    list.push(observe::suspended(isvc.spec.intent.unwrap_or_default()));
    list.push(DesiredCondition::new(
        types::DEGRADED,
        true,
        refusal.reason(),
        message,
    ));
    let status = InferenceServiceStatus {
        observed_generation: isvc.meta().generation,
        ..isvc.status.clone().unwrap_or_default()
    };
    write(
        ctx,
        isvc,
        owner,
        StatusDraft {
            conditions: list,
            status,
        },
    )
    .await?;
    Ok(Action::await_change())
}

/// After a failed step: `Ready=False, ReconcileError` with the error, other conditions kept (best effort: the error
/// itself is what the caller returns).
async fn report_error(ctx: &Context, isvc: &InferenceService, error: &Error) {
    let Ok(owner) = Owner::of(isvc) else { return };
    let observed = isvc
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let list = conditions::after_error(observed, error);
    let status = isvc.status.clone().unwrap_or_default();
    let draft = StatusDraft {
        conditions: list,
        status,
    };
    if let Err(write_error) = write(ctx, isvc, &owner, draft).await {
        tracing::debug!(error = %write_error, "could not record the reconcile error in the status");
    }
}
