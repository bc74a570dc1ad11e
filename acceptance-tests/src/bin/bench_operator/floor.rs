//! The floor: what converging N InferenceServices costs without an operator.
//!
//! A plain client creates the same N objects (with the same concurrency as the operator phase's creates) and, as each
//! is created, applies exactly the children the operator would: `model_fleet_api::render::render_inference` with the
//! same `--default-gateway`, `spec.replicas` from the same replica plan, sent through the operator's own
//! `controller::apply::apply` (field manager `model-fleet-operator`, force, `fieldValidation=Strict`, the
//! applied-hash annotation), then writes one status with the operator's status writer. It reads nothing: no GETs of
//! live children, no prune LISTs, no discovery, no Events. At most `--concurrency` objects are worked on at once, the
//! operator's `--max-concurrent-reconciles` in the operator phase.

use std::time::Instant;

use anyhow::Context as _;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::Api;
use model_fleet_api::InferenceService;
use model_fleet_api::render::{self, RenderConfig, RenderedInference, replica_plan};
use model_fleet_api::status::inference::{self as status, Observed, RouteState, ScalingState};
use model_fleet_operator::controller::apply::{self, Child, Live};
use model_fleet_operator::controller::children::ChildCaches;
use model_fleet_operator::controller::reconcile::Owner;
use model_fleet_operator::controller::status::write_draft;
use model_fleet_operator::controller::written::StatusWrites;
use serde::Serialize;

use crate::operator_phase::convergence_timeout;
use crate::tracker::Tracker;
use crate::{Args, workload};

/// What the floor measured for one N.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FloorFigures {
    /// From the first create to the last child and status seen by the watches (seconds), measured as in the operator
    /// phase.
    pub seconds: f64,
    /// From the first create to the client's last status write returning (seconds).
    pub last_write_seconds: f64,
    /// Write requests the floor sent per object (creates of the InferenceServices not counted).
    pub writes_per_object: f64,
    /// How long deleting the namespace took (seconds).
    pub delete_seconds: f64,
}

/// Runs the floor of `n` in a fresh namespace, deleted (and waited for) afterwards.
///
/// Errors: a request failed, or the watches did not see convergence in time.
pub async fn run(
    cluster: &acceptance_tests::Cluster,
    args: &Args,
    n: usize,
) -> anyhow::Result<FloorFigures> {
    let client = cluster.client().await?;
    let ns = workload::namespace(&client, "floor", n).await?;
    eprintln!("-- floor in namespace {ns}");
    let result = measure(&client, args, n, &ns).await;
    let deleted = workload::delete_namespace(&client, &ns).await;
    let mut figures = result?;
    figures.delete_seconds = deleted?.as_secs_f64();
    Ok(figures)
}

async fn measure(
    client: &kube::Client,
    args: &Args,
    n: usize,
    ns: &str,
) -> anyhow::Result<FloorFigures> {
    let config = RenderConfig {
        default_gateway: Some(workload::default_gateway(ns)?),
        ..RenderConfig::default()
    };
    let tracker = Tracker::start(client, ns).await?;
    let limit = args.limit();
    let (created, to_apply) = futures::channel::mpsc::unbounded();
    let started = Instant::now();
    let creates = workload::create_all(client, ns, n, limit, Some(created));
    let applies = to_apply
        .map(|isvc| reconcile(client, &config, isvc))
        .buffer_unordered(limit)
        .fold(anyhow::Ok(0usize), |total, writes| async move {
            Ok(total? + writes?)
        });
    let (created, writes) = tokio::join!(creates, applies);
    created?;
    let writes: usize = writes?;
    let last_write_seconds = started.elapsed().as_secs_f64();
    let done = tracker.wait_converged(n, convergence_timeout(n)).await?;
    let seconds = done.duration_since(started).as_secs_f64();
    eprintln!("   floor converged in {seconds:.1} s");
    Ok(FloorFigures {
        seconds,
        last_write_seconds,
        writes_per_object: writes as f64 / n.max(1) as f64,
        delete_seconds: 0.0,
    })
}

/// The minimum an operator must send for one new InferenceService: apply each rendered child, write the status.
/// Returns the number of write requests sent.
async fn reconcile(
    client: &kube::Client,
    config: &RenderConfig,
    isvc: InferenceService,
) -> anyhow::Result<usize> {
    let owner = Owner::of(&isvc)?;
    let RenderedInference { facts, children } = render::render_inference(&isvc, config);
    let children = children.map_err(|refusal| anyhow::anyhow!("render refused: {refusal}"))?;
    let mut deployment = children.deployment.clone();
    if let Some(spec) = deployment.spec.as_mut() {
        spec.replicas = replica_plan(&facts, None).applied();
    }
    // No child caches and no status writes to remember: the floor watches nothing and reconciles each object once.
    let (caches, status_writes) = (ChildCaches::default(), StatusWrites::default());
    let mut writes = 0;
    // Plain server-side applies: no read before, no precondition.
    let plain = || Live::Read(None);
    apply::apply(client, &caches, &Child::typed(&children.service)?, plain()).await?;
    let (_, live) = apply::apply(client, &caches, &Child::typed(&deployment)?, plain()).await?;
    writes += 2;
    let deployment: Deployment = serde_json::to_value(live)
        .and_then(serde_json::from_value)
        .context("the applied Deployment")?;
    let mut route_generation = None;
    if let Some(route) = &children.http_route {
        let (_, live) = apply::apply(client, &caches, &Child::typed(route)?, plain()).await?;
        route_generation = live.metadata.generation;
        writes += 1;
    }
    let parent = children
        .http_route
        .as_ref()
        .and_then(|r| r.spec.parent_refs.first())
        .map(|p| (p.namespace.as_str(), p.name.as_str()))
        .unwrap_or_default();
    let observed = Observed {
        deployment: Some(&deployment),
        unschedulable: None,
        stalled: None,
        missing: Vec::new(),
        route: RouteState::Applied {
            status: None,
            generation: route_generation,
            parent,
        },
        scaling: ScalingState::Fixed(facts.fixed_replicas.unwrap_or(0)),
        may_scale_to_zero: facts.may_scale_to_zero(),
    };
    let draft = status::desired(&isvc, &facts, &observed);
    let api: Api<InferenceService> = Api::namespaced(client.clone(), &owner.namespace);
    write_draft(&api, &status_writes, &owner, None, draft).await?;
    Ok(writes + 1)
}
