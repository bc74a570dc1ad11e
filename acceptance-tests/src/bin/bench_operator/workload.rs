//! The benchmark's workload: N InferenceServices of one shape, the namespace they live in, and creating them with
//! bounded concurrency.
//!
//! Shape: the echo example's spec (`examples/inference-kind.yaml`: Deployment + Service, and an HTTPRoute because it
//! names a gateway hostname), each with its own hostname, and `intent: suspended`. Suspended renders the Deployment
//! with 0 replicas, so kube-controller-manager creates one empty ReplicaSet per Deployment and no pods: N pods (and
//! the scheduler's and kwok's work on them) would compete with the operator for the machine's 2 cores and measure
//! the cluster rather than the operator. A suspended service is also "settled" for the operator (`Ready=False,
//! Suspended`), so it is requeued at the resync period, not every 10 s as a rollout in progress would be.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use model_fleet_api::InferenceService;
use model_fleet_api::render::GatewayRef;
use serde_json::{Value, json};

/// Name of the Gateway every route attaches to (the operator's `--default-gateway NAMESPACE/shared`).
pub const GATEWAY: &str = "shared";

/// Name of InferenceService `i`.
pub fn name(i: usize) -> String {
    format!("m{i:05}")
}

/// The spec of InferenceService `i`: the echo example, suspended, with hostname `m<i>.bench.local`.
pub fn spec(i: usize) -> Value {
    let mut spec = acceptance_tests::inference::echo_spec();
    spec["intent"] = json!("suspended");
    spec["gateway"]["hostnames"] = json!([format!("{}.bench.local", name(i))]);
    spec
}

/// The `--default-gateway` of namespace `ns`.
pub fn default_gateway(ns: &str) -> anyhow::Result<GatewayRef> {
    format!("{ns}/{GATEWAY}")
        .parse()
        .map_err(anyhow::Error::msg)
}

/// InferenceService `i` in `ns`, ready to create.
fn object(ns: &str, i: usize) -> anyhow::Result<InferenceService> {
    let body = json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
        "metadata": {"name": name(i), "namespace": ns}, "spec": spec(i),
    });
    serde_json::from_value(body).context("the benchmark's InferenceService does not deserialize")
}

/// A fresh namespace `bench-<phase>-n<N>-<time>` (labelled as test namespaces are, so leftovers are easy to find)
/// holding the Gateway `shared` (no controller serves it; the operator finds it, so routes wait for acceptance
/// instead of reporting `GatewayNotFound`). [`delete_namespace`] removes it.
pub async fn namespace(client: &kube::Client, phase: &str, n: usize) -> anyhow::Result<String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis()
        % 1_000_000;
    let name = format!("bench-{phase}-n{n}-{stamp}");
    let namespace: Namespace = serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {acceptance_tests::namespace::TEST_LABEL: "true"}}
    }))?;
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .with_context(|| format!("creating namespace {name}"))?;
    acceptance_tests::inference::create_gateway(client, &name).await?;
    Ok(name)
}

/// Deletes namespace `ns` and waits until it is gone (garbage collection of N objects and their children).
pub async fn delete_namespace(client: &kube::Client, ns: &str) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    match namespaces.delete(ns, &DeleteParams::background()).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 404 => return Ok(started.elapsed()),
        Err(e) => return Err(e).context("deleting the benchmark namespace"),
    }
    acceptance_tests::wait_for(
        &format!("namespace {ns} deleted"),
        Duration::from_secs(900),
        || async { Ok(namespaces.get_opt(ns).await?.is_none().then_some(())) },
    )
    .await?;
    Ok(started.elapsed())
}

/// Creates InferenceServices `0..n` in `ns` with at most `limit` requests in flight, handing each created object
/// (with its uid and generation) to `created` (the floor applies its children as they come). Returns when all are
/// created.
///
/// Errors: the first create the API server refuses.
pub async fn create_all(
    client: &kube::Client,
    ns: &str,
    n: usize,
    limit: usize,
    created: Option<futures::channel::mpsc::UnboundedSender<InferenceService>>,
) -> anyhow::Result<()> {
    let api: Api<InferenceService> = Api::namespaced(client.clone(), ns);
    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            let created = created.clone();
            async move {
                let object = api
                    .create(&PostParams::default(), &object(ns, i)?)
                    .await
                    .with_context(|| format!("creating InferenceService {}", name(i)))?;
                if let Some(created) = created {
                    // The receiver is gone only when the floor already failed; its error is reported there.
                    let _ = created.unbounded_send(object);
                }
                anyhow::Ok(())
            }
        })
        .buffer_unordered(limit)
        .try_collect::<()>()
        .await
}

/// `count` indices spread evenly over `0..n` (the objects the latency phase changes).
pub fn spread(n: usize, count: usize) -> Vec<usize> {
    let count = count.min(n);
    (0..count).map(|k| k * n / count).collect()
}
