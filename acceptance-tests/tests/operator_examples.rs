//! Every InferenceService example under `examples/` reconciled by the operator on the control
//! plane (issue 4): the children it should have, where its pods land, and its conditions.

use std::time::Duration;

use acceptance_tests::modelfleet::{api, create, example};
use acceptance_tests::process::operator_kubeconfig;
use acceptance_tests::{Cluster, OperatorProcess, wait_for};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DynamicObject, ListParams};
use kube::{Api, ResourceExt};
use serde_json::Value;

const TIMEOUT: Duration = Duration::from_secs(60);

/// What an example must become.
struct Expect {
    file: &'static str,
    /// Kinds of the children owned by the InferenceService, sorted.
    children: &'static [&'static str],
    /// Prefix of the node every pod runs on (the scheduler spreads replicas over the CPU nodes).
    node_prefix: &'static str,
    capacity_class: Option<&'static str>,
    per_gpu_memory_gib: Option<i64>,
    /// `status.kvCache` (module, total MiB, per-GPU MiB) for a KV cache sized from the model's shape.
    kv_cache: Option<(&'static str, i64, i64)>,
    /// `(type, status, reason)` of conditions to reach.
    conditions: &'static [(&'static str, &'static str, &'static str)],
    /// A scale-to-zero service is born at 0: scale it to 1 as KEDA would on queue work (no KEDA runs here), then
    /// expect Ready and its pods' placement.
    wake_as_keda: bool,
    /// Uses `scaling.http`: the operator is told the KEDA HTTP add-on runs in the test's namespace
    /// (`--http-add-on-namespace`), where its ReferenceGrant then goes.
    http_add_on: bool,
}

fn condition(object: &DynamicObject, type_: &str) -> Option<(String, String)> {
    object.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (text("status"), text("reason"))
        })
}

async fn owned_kinds(cluster: &Cluster, ns: &str, uid: &str) -> anyhow::Result<Vec<String>> {
    let listed = cluster.kubectl_ok(&[
        "get",
        "deployments,services,scaledobjects,httproutes,interceptorroutes,jobs",
        "-n",
        ns,
        "-o",
        "json",
    ])?;
    let listed: Value = serde_json::from_str(&listed)?;
    let mut kinds: Vec<String> = listed["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| {
            o["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|refs| refs.iter().any(|r| r["uid"] == uid))
        })
        .map(|o| o["kind"].as_str().unwrap_or_default().to_owned())
        .collect();
    kinds.sort();
    Ok(kinds)
}

async fn check(expect: Expect) -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("examples").await?;
    let client = cluster.client().await?;
    let gateway = format!("{}/shared", ns.name());
    let mut flags = vec!["--default-gateway", &gateway];
    if expect.http_add_on {
        flags.extend(["--http-add-on-namespace", ns.name()]);
    }
    let operator = OperatorProcess::start(
        &cluster,
        &operator_kubeconfig(&cluster)?,
        ns.name(),
        "fleet",
        &flags,
        &[],
    )?;
    let mut name = String::new();
    for doc in example(expect.file, ns.name())? {
        name = create(&client, ns.name(), doc).await?.name_any();
    }
    let isvcs = api(&client, ns.name(), "InferenceService");
    let isvc = wait_for(
        &format!("{}: conditions {:?}", expect.file, expect.conditions),
        TIMEOUT,
        || async {
            let isvc = isvcs.get(&name).await?;
            let reached = expect.conditions.iter().all(|(t, status, reason)| {
                condition(&isvc, t) == Some(((*status).to_owned(), (*reason).to_owned()))
            });
            let current =
                isvc.data["status"]["observedGeneration"].as_i64() == isvc.metadata.generation;
            Ok((reached && current).then_some(isvc))
        },
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;

    let uid = isvc.uid().expect("uid");
    assert_eq!(
        owned_kinds(&cluster, ns.name(), &uid).await?,
        expect.children,
        "{}",
        expect.file
    );
    assert_eq!(
        isvc.data["status"]["capacityClass"].as_str(),
        expect.capacity_class
    );
    assert_eq!(
        isvc.data["status"]["perGpuMemoryGiB"].as_i64(),
        expect.per_gpu_memory_gib
    );
    let kv_cache = expect.kv_cache.map(|(module, total, per_gpu)| {
        serde_json::json!([{"module": module, "totalMiB": total, "perGpuMiB": per_gpu}])
    });
    assert_eq!(
        isvc.data["status"].get("kvCache"),
        kv_cache.as_ref(),
        "{}",
        expect.file
    );

    if expect.wake_as_keda {
        cluster.kubectl_ok(&[
            "-n",
            ns.name(),
            "scale",
            &format!("deployment/{name}"),
            "--replicas=1",
        ])?;
        wait_for(&format!("{name} Ready once woken"), TIMEOUT, || async {
            let isvc = isvcs.get(&name).await?;
            Ok(
                (condition(&isvc, "Ready") == Some(("True".into(), "AsExpected".into())))
                    .then_some(()),
            )
        })
        .await
        .map_err(|e| e.context(operator.log_tail()))?;
    }
    let pods: Api<Pod> = Api::namespaced(client, ns.name());
    let nodes = wait_for("pods placed and running", TIMEOUT, || async {
        let pods = pods.list(&ListParams::default()).await?;
        let running = !pods.items.is_empty()
            && pods
                .items
                .iter()
                .all(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"));
        Ok(running.then(|| {
            pods.items
                .iter()
                .map(|p| {
                    p.spec
                        .as_ref()
                        .and_then(|s| s.node_name.clone())
                        .unwrap_or_default()
                })
                .collect::<Vec<_>>()
        }))
    })
    .await?;
    assert!(
        nodes.iter().all(|n| n.starts_with(expect.node_prefix)),
        "{}: pods on {nodes:?}",
        expect.file
    );
    Ok(())
}

#[tokio::test]
async fn echo_example_runs_on_cpu_nodes_with_a_route() -> anyhow::Result<()> {
    check(Expect {
        file: "inference-kind.yaml",
        children: &["Deployment", "HTTPRoute", "Service"],
        node_prefix: "kwok-cpu-",
        capacity_class: None,
        per_gpu_memory_gib: None,
        kv_cache: None,
        // No Gateway exists in the namespace: the route waits for it, serving is unaffected.
        conditions: &[
            ("Ready", "True", "AsExpected"),
            ("RouteReady", "False", "GatewayNotFound"),
        ],
        wake_as_keda: false,
        http_add_on: false,
    })
    .await
}

#[tokio::test]
async fn vllm_example_gets_a_scaled_object_a_route_and_a_24gi_gpu() -> anyhow::Result<()> {
    check(Expect {
        file: "inference-vllm.yaml",
        children: &["Deployment", "HTTPRoute", "ScaledObject", "Service"],
        node_prefix: "kwok-gpu-24gi",
        capacity_class: Some("24gi"),
        per_gpu_memory_gib: Some(22),
        kv_cache: None,
        // Born at 0 (its floor: min 0, a queue trigger): no GPU is held until the queue has work.
        conditions: &[
            ("Ready", "False", "ScaledToZero"),
            ("ScalingReady", "True", "AsExpected"),
        ],
        wake_as_keda: true,
        http_add_on: false,
    })
    .await
}

#[tokio::test]
async fn multi_gpu_fit_example_lands_on_the_80gi_node() -> anyhow::Result<()> {
    check(Expect {
        file: "inference-multi-gpu-fit.yaml",
        children: &["Deployment", "Service"],
        node_prefix: "kwok-gpu-80gi",
        capacity_class: Some("80gi"),
        per_gpu_memory_gib: Some(54),
        kv_cache: None,
        conditions: &[("Ready", "True", "AsExpected")],
        wake_as_keda: false,
        http_add_on: false,
    })
    .await
}

// Issue 22: a KV cache sized from the model's shape (Qwen2.5-7B-Instruct, 14 GiB over 2 GPUs by KV head) is in the
// status, and the budget it gives (17.71 GiB per GPU) places the pod on the 24gi node.
#[tokio::test]
async fn kv_from_shape_example_reports_its_cache_and_lands_on_the_24gi_node() -> anyhow::Result<()>
{
    check(Expect {
        file: "inference-kv-from-shape.yaml",
        children: &["Deployment", "Service"],
        node_prefix: "kwok-gpu-24gi",
        capacity_class: Some("24gi"),
        per_gpu_memory_gib: Some(18),
        kv_cache: Some(("qwen2.5-7b-instruct", 14 * 1024, 7 * 1024)),
        conditions: &[
            ("Ready", "True", "AsExpected"),
            ("Degraded", "False", "AsExpected"),
        ],
        wake_as_keda: false,
        http_add_on: false,
    })
    .await
}

// Issue 22: wake from zero on HTTP requests. Born at 0 with no warning (HTTP traffic wakes it), an InterceptorRoute
// beside the usual children and its ReferenceGrant in the add-on's namespace; woken as KEDA would on the first request,
// it lands on the 24gi node.
#[tokio::test]
async fn wake_from_zero_example_gets_an_interceptor_route_and_holds_no_gpu_at_rest()
-> anyhow::Result<()> {
    check(Expect {
        file: "inference-wake-from-zero.yaml",
        children: &[
            "Deployment",
            "HTTPRoute",
            "InterceptorRoute",
            "ScaledObject",
            "Service",
        ],
        node_prefix: "kwok-gpu-24gi",
        capacity_class: Some("24gi"),
        per_gpu_memory_gib: Some(22),
        kv_cache: None,
        conditions: &[
            ("Ready", "False", "ScaledToZero"),
            ("ScalingReady", "True", "AsExpected"),
        ],
        wake_as_keda: true,
        http_add_on: true,
    })
    .await
}
