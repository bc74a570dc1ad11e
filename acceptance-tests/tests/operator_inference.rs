//! The InferenceService controller against the control plane with simulated nodes (issue 4): the echo example
//! becomes Ready and an unchanged object then costs zero writes; replicas are handed over between fixed and autoscaled
//! both ways (case O-04); deleted objects go without reconcile errors (case O-03); Ready never trusts stale data and
//! says Unschedulable (case O-02); long names give valid, distinct, stable child names (case O-01); a crash right
//! after the Deployment is applied converges on restart (crash safety); without the KEDA and Gateway API CRDs the
//! affected objects say DependencyMissing and the others are served, and KEDA installed later is watched.
//!
//! One operator process per test, watching only the test's namespace, running as the chart's ClusterRole.

use std::time::Duration;

use acceptance_tests::OperatorProcess;
use acceptance_tests::cluster::PrivateCluster;
use acceptance_tests::inference::{
    accept_route, api, apply, condition, condition_message, create_gateway, echo_spec,
    isvc_resource, metric, observed_current_generation, operator, resource, route_resource,
    scaled_object_resource, wait_condition, wait_reconciled,
};
use acceptance_tests::process::{OPERATOR_USER, operator_kubeconfig};
use acceptance_tests::{Cluster, wait_for};
use k8s_openapi::api::apps::v1::Deployment;
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

#[tokio::test]
async fn echo_example_becomes_ready_then_an_unchanged_object_costs_zero_writes()
-> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("op-echo").await?;
    let client = cluster.client().await?;
    let operator = operator(&cluster, ns.name(), &[])?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    apply(&isvcs, "echo", echo_spec()).await?;

    // The first reconcile already says Ready=False for the current generation (case O-02).
    let first = wait_for("a first status", Duration::from_secs(20), || async {
        let object = isvcs.get("echo").await?;
        Ok(
            (observed_current_generation(&object) && condition(&object, "Ready").is_some())
                .then_some(object),
        )
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    assert_eq!(
        condition(&first, "RouteReady").map(|c| c.1).as_deref(),
        Some("GatewayNotFound")
    );

    let ready = wait_condition(
        &isvcs,
        "echo",
        "Ready",
        "True",
        None,
        Duration::from_secs(60),
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    assert_eq!(ready.data["status"]["url"], "http://model.localhost/");
    assert_eq!(ready.data["status"]["readyReplicas"], 1);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    assert!(deployments.get_opt("echo").await?.is_some());
    assert!(
        api(&client, ns.name(), &route_resource())
            .get_opt("echo")
            .await?
            .is_some()
    );

    // The Gateway exists and accepts the route: RouteReady follows the route's status.
    let gateway = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
        "metadata": {"name": "shared"},
        "spec": {"gatewayClassName": "test", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}});
    api(
        &client,
        ns.name(),
        &resource("gateway.networking.k8s.io", "v1", "Gateway", "gateways"),
    )
    .patch(
        "shared",
        &PatchParams::apply("acceptance-tests"),
        &Patch::Apply(&gateway),
    )
    .await?;
    accept_route(&client, ns.name(), "echo").await?;
    wait_condition(
        &isvcs,
        "echo",
        "RouteReady",
        "True",
        Some("Accepted"),
        Duration::from_secs(20),
    )
    .await?;

    // Zero writes: over several resync periods (2 s) the operator reconciles but writes nothing except its Lease.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = metric(
        &operator,
        "model_fleet_reconciles_total{kind=\"InferenceService\"}",
    )?;
    let mark = cluster.audit_log().mark()?;
    tokio::time::sleep(Duration::from_secs(8)).await;
    let writes: Vec<String> = mark
        .writes_by(OPERATOR_USER)?
        .into_iter()
        // Other tests run operators as the same user: count only this namespace, and not the Lease renewals.
        .filter(|e| {
            e.request_u_r_i
                .contains(&format!("/namespaces/{}/", ns.name()))
        })
        .filter(|e| !e.request_u_r_i.contains("/leases/"))
        .map(|e| format!("{} {}", e.verb, e.request_u_r_i))
        .collect();
    let after = metric(
        &operator,
        "model_fleet_reconciles_total{kind=\"InferenceService\"}",
    )?;
    assert!(
        after - before >= 3.0,
        "expected resync reconciles, got {before} -> {after}"
    );
    assert!(
        writes.is_empty(),
        "unchanged object caused writes: {writes:#?}"
    );
    Ok(())
}

#[tokio::test]
async fn o04_replicas_are_handed_over_between_fixed_and_autoscaled_both_ways() -> anyhow::Result<()>
{
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("op-o04").await?;
    let client = cluster.client().await?;
    let mut operator = operator(&cluster, ns.name(), &[])?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    let replicas = |deployments: Api<Deployment>| async move {
        let d = deployments.get_opt("llm").await?;
        Ok::<_, anyhow::Error>(d.and_then(|d| d.spec).and_then(|s| s.replicas))
    };
    let mut spec = echo_spec();
    spec.as_object_mut().unwrap().remove("gateway");

    // Fixed at 2.
    spec["replicas"] = json!({"min": 2, "max": 2});
    apply(&isvcs, "llm", spec.clone()).await?;
    wait_for("2 fixed replicas", Duration::from_secs(20), || async {
        Ok((replicas(deployments.clone()).await? == Some(2)).then_some(()))
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;

    // Fixed -> autoscaled: the ScaledObject appears, the count is not reset, and we stop owning spec.replicas.
    spec["replicas"] = json!({"min": 1, "max": 5});
    spec["scaling"] = json!({"triggers": [{"type": "rabbitmq", "metadata": {"queueName": "q", "hostFromEnv": "AMQP"}}]});
    apply(&isvcs, "llm", spec.clone()).await?;
    wait_for("a ScaledObject", Duration::from_secs(20), || async {
        Ok(api(&client, ns.name(), &scaled_object_resource())
            .get_opt("llm")
            .await?
            .map(|_| ()))
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        replicas(deployments.clone()).await?,
        Some(2),
        "hand-over kept the count"
    );
    let owns_replicas = |d: &Deployment| {
        d.metadata.managed_fields.iter().flatten().any(|m| {
            m.manager.as_deref() == Some("model-fleet-operator")
                && m.fields_v1
                    .as_ref()
                    .is_some_and(|f| f.0.pointer("/f:spec/f:replicas").is_some())
        })
    };
    assert!(!owns_replicas(&deployments.get("llm").await?));

    // The autoscaler (here: kubectl scale) sets 4; an unrelated edit and an operator restart keep it.
    cluster.kubectl_ok(&["-n", ns.name(), "scale", "deployment/llm", "--replicas=4"])?;
    cluster.kubectl_ok(&[
        "-n",
        ns.name(),
        "annotate",
        "inferenceservices.modelfleet.io/llm",
        "touched=yes",
    ])?;
    operator.terminate(Duration::from_secs(20))?;
    let operator = self::operator(&cluster, ns.name(), &[])?;
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        replicas(deployments.clone()).await?,
        Some(4),
        "{}",
        operator.log_tail()
    );
    assert!(!owns_replicas(&deployments.get("llm").await?));

    // Autoscaled -> fixed at 2: a forced apply takes the count back and the ScaledObject is pruned.
    spec.as_object_mut().unwrap().remove("scaling");
    spec["replicas"] = json!({"min": 2, "max": 2});
    apply(&isvcs, "llm", spec).await?;
    wait_for(
        "2 fixed replicas again, no ScaledObject",
        Duration::from_secs(20),
        || async {
            let gone = api(&client, ns.name(), &scaled_object_resource())
                .get_opt("llm")
                .await?
                .is_none();
            Ok((gone && replicas(deployments.clone()).await? == Some(2)).then_some(()))
        },
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    assert!(owns_replicas(&deployments.get("llm").await?));
    Ok(())
}

#[tokio::test]
async fn o03_deleted_objects_go_without_reconcile_errors_or_finalizers() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("op-o03").await?;
    let client = cluster.client().await?;
    let operator = operator(&cluster, ns.name(), &[])?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let errors = || metric(&operator, "model_fleet_reconcile_errors_total");
    let before = errors()?;

    apply(&isvcs, "short-lived", echo_spec()).await?;
    wait_reconciled(&isvcs, "short-lived").await?;
    isvcs
        .delete("short-lived", &DeleteParams::default())
        .await?;

    let mut spec = echo_spec();
    apply(&isvcs, "updated", spec.clone()).await?;
    wait_reconciled(&isvcs, "updated").await?;
    spec["replicas"] = json!({"min": 2, "max": 2});
    apply(&isvcs, "updated", spec).await?;
    isvcs.delete("updated", &DeleteParams::default()).await?;

    for name in ["short-lived", "updated"] {
        let object = isvcs.get_opt(name).await?;
        if let Some(object) = object {
            assert!(object.metadata.finalizers.unwrap_or_default().is_empty());
        }
    }
    wait_for("both gone", Duration::from_secs(10), || async {
        let left = isvcs.list(&ListParams::default()).await?.items.len();
        Ok((left == 0).then_some(()))
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(errors()?, before, "{}", operator.log_tail());
    Ok(())
}

#[tokio::test]
async fn o02_ready_waits_for_the_rollout_and_reports_unschedulable() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("op-o02").await?;
    let client = cluster.client().await?;
    let operator = operator(&cluster, ns.name(), &[])?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let mut spec = echo_spec();
    spec.as_object_mut().unwrap().remove("gateway");
    apply(&isvcs, "o2", spec.clone()).await?;
    wait_condition(&isvcs, "o2", "Ready", "True", None, Duration::from_secs(60))
        .await
        .map_err(|e| e.context(operator.log_tail()))?;

    // A budget only a 141gi card fits: no simulated node has one.
    spec["gpu"] = json!({"count": 1, "fit": {"modules": [
        {"name": "weights", "weightsGiB": 110, "kvCacheGiB": 8, "placement": "sharded"}]}});
    apply(&isvcs, "o2", spec).await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    let mut saw_unschedulable = false;
    while std::time::Instant::now() < deadline && !saw_unschedulable {
        let object = isvcs.get("o2").await?;
        if observed_current_generation(&object) {
            let (status, reason) = condition(&object, "Ready").unwrap_or_default();
            assert_eq!(
                status, "False",
                "Ready on stale data: {:?}",
                object.data["status"]
            );
            assert!(
                reason == "Progressing" || reason == "Unschedulable",
                "{reason}"
            );
            saw_unschedulable = reason == "Unschedulable";
            assert_eq!(object.data["status"]["capacityClass"], "141gi");
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(saw_unschedulable, "{}", operator.log_tail());
    Ok(())
}

#[tokio::test]
async fn a_crash_after_the_deployment_apply_converges_on_restart() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("op-crash").await?;
    let client = cluster.client().await?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let mut crashing = operator(
        &cluster,
        ns.name(),
        &["--test-failpoint", "after-deployment-apply"],
    )?;
    apply(&isvcs, "crash", echo_spec()).await?;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !crashing.exited() {
        assert!(
            std::time::Instant::now() < deadline,
            "the failpoint did not end the operator:\n{}",
            crashing.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        crashing
            .log_tail()
            .contains("failpoint after-deployment-apply triggered")
    );
    assert!(
        deployments.get_opt("crash").await?.is_some(),
        "the Deployment was applied before the crash"
    );
    assert!(
        api(&client, ns.name(), &route_resource())
            .get_opt("crash")
            .await?
            .is_none()
    );

    // While the operator is down the user removes `gateway`; the restarted operator (same Lease, which must first
    // expire: the crash did not release it) converges with no duplicate and no orphan.
    let mut spec = echo_spec();
    spec.as_object_mut().unwrap().remove("gateway");
    apply(&isvcs, "crash", spec).await?;
    let operator = operator(&cluster, ns.name(), &[])?;
    wait_condition(
        &isvcs,
        "crash",
        "Ready",
        "True",
        None,
        Duration::from_secs(60),
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    wait_condition(
        &isvcs,
        "crash",
        "RouteReady",
        "False",
        Some("NotRequested"),
        Duration::from_secs(10),
    )
    .await?;
    let selector = "modelfleet.io/inference-service=crash";
    assert_eq!(
        deployments
            .list(&ListParams::default().labels(selector))
            .await?
            .items
            .len(),
        1
    );
    let services: Api<k8s_openapi::api::core::v1::Service> =
        Api::namespaced(client.clone(), ns.name());
    assert_eq!(
        services
            .list(&ListParams::default().labels(selector))
            .await?
            .items
            .len(),
        1
    );
    let routes = api(&client, ns.name(), &route_resource());
    assert!(routes.list(&ListParams::default()).await?.items.is_empty());
    Ok(())
}

fn dns1123_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
}

fn label_value_ok(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.is_empty()
        || (bytes.len() <= 63
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && bytes[0].is_ascii_alphanumeric()
            && bytes[bytes.len() - 1].is_ascii_alphanumeric())
}

/// `Kind/name` of every child owned by `uid`, checking each name and label value on the way.
async fn owned_children(client: &kube::Client, ns: &str, uid: &str) -> anyhow::Result<Vec<String>> {
    let kinds = [
        resource("apps", "v1", "Deployment", "deployments"),
        resource("", "v1", "Service", "services"),
        scaled_object_resource(),
        route_resource(),
    ];
    let mut children = Vec::new();
    for ar in &kinds {
        for object in api(client, ns, ar)
            .list(&ListParams::default())
            .await?
            .items
        {
            let owned = object
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.uid == uid);
            if !owned {
                continue;
            }
            let name = object.metadata.name.clone().unwrap_or_default();
            assert!(dns1123_label(&name), "{} name {name:?}", ar.kind);
            if ar.kind == "Service" {
                assert!(
                    name.as_bytes()[0].is_ascii_lowercase(),
                    "Service names are DNS-1035: {name:?}"
                );
            }
            for (key, value) in object.metadata.labels.iter().flatten() {
                assert!(label_value_ok(value), "{} label {key}={value:?}", ar.kind);
            }
            children.push(format!("{}/{name}", ar.kind));
        }
    }
    children.sort();
    Ok(children)
}

#[tokio::test]
async fn o01_long_names_get_valid_distinct_stable_child_names() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    // 31 characters + "-" + 8 random = a 40-character namespace.
    let ns = cluster.namespace("op-o01-namespace-with-long-name").await?;
    assert_eq!(ns.name().len(), 40);
    let client = cluster.client().await?;
    let mut operator = operator(&cluster, ns.name(), &[])?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let a = format!("{}{}", "a".repeat(63), "-model1"); // 70 characters
    let b = format!("{}{}", "a".repeat(63), "-another-model-xy"); // 80 characters, A's first 63
    let c = "7b-instruct".to_owned();
    assert_eq!((a.len(), b.len()), (70, 80));
    let mut spec = echo_spec();
    spec["replicas"] = json!({"min": 1, "max": 2});
    spec["scaling"] = json!({"triggers": [{"type": "rabbitmq", "metadata": {"queueName": "q", "hostFromEnv": "AMQP"}}]});
    // One hostname each: services sharing a hostname and path conflict (only the oldest gets an HTTPRoute).
    for (i, name) in [&a, &b, &c].into_iter().enumerate() {
        let mut spec = spec.clone();
        spec["gateway"]["hostnames"] = json!([format!("o01-{i}.localhost")]);
        apply(&isvcs, name, spec).await?;
    }

    let mut before = Vec::new();
    for name in [&a, &b, &c] {
        let object = isvcs.get(name).await?;
        let uid = object.metadata.uid.clone().unwrap_or_default();
        let children = wait_for(
            &format!("4 children of {name}"),
            Duration::from_secs(30),
            || async {
                let children = owned_children(&client, ns.name(), &uid).await?;
                Ok((children.len() == 4).then_some(children))
            },
        )
        .await
        .map_err(|e| e.context(operator.log_tail()))?;
        before.push(children);
    }
    assert_ne!(
        before[0], before[1],
        "A and B must get distinct child names"
    );

    // Pods of every Deployment are created (their names derive from the Deployment's).
    wait_for("pods for all three", Duration::from_secs(30), || async {
        let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), ns.name());
        Ok((pods.list(&ListParams::default()).await?.items.len() >= 3).then_some(()))
    })
    .await?;

    // Stable across restarts: same children, no new ones.
    operator.terminate(Duration::from_secs(20))?;
    let operator = self::operator(&cluster, ns.name(), &[])?;
    tokio::time::sleep(Duration::from_secs(6)).await;
    for (name, children) in [&a, &b, &c].into_iter().zip(&before) {
        let uid = isvcs.get(name).await?.metadata.uid.unwrap_or_default();
        assert_eq!(
            &owned_children(&client, ns.name(), &uid).await?,
            children,
            "{}",
            operator.log_tail()
        );
    }
    Ok(())
}

#[tokio::test]
async fn dependency_missing_is_reported_and_everything_else_keeps_serving() -> anyhow::Result<()> {
    // A second instance started without the KEDA and Gateway API CRDs, stopped when the test ends.
    let cluster = PrivateCluster::start("no-deps", &["--no-upstream-crds"])?;
    cluster.install_model_fleet_crds()?;
    let keda_crds = absent_crds(&cluster, &format!("{}/keda/", upstream_crds()?.display()))?;
    let keda_crds = keda_crds.as_str();
    let ns = cluster.namespace("op-deps").await?;
    let client = cluster.client().await?;
    // Nothing but a watch event or the controller's restart reconciles within the test's waits.
    let operator = operator_resyncing_every(&cluster, ns.name(), "3600")?;
    let isvcs = api(&client, ns.name(), &isvc_resource());

    // Wants a ScaledObject and an HTTPRoute, whose CRDs are absent.
    let mut wants_both = echo_spec();
    wants_both["replicas"] = json!({"min": 1, "max": 3});
    wants_both["scaling"] = json!({"triggers": [{"type": "rabbitmq", "metadata": {"queueName": "q", "hostFromEnv": "AMQP"}}],
        "http": {"targetConcurrency": 10}});
    apply(&isvcs, "needs-deps", wants_both).await?;
    // Wants neither: must become Ready as usual.
    let mut plain = echo_spec();
    plain.as_object_mut().unwrap().remove("gateway");
    apply(&isvcs, "plain", plain).await?;

    let object = wait_condition(
        &isvcs,
        "needs-deps",
        "Ready",
        "False",
        Some("DependencyMissing"),
        Duration::from_secs(30),
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    assert_eq!(
        condition(&object, "ScalingReady").map(|c| c.1).as_deref(),
        Some("KedaMissing")
    );
    // The message names each missing dependency, the KEDA HTTP add-on's CRD (scaling.http) included.
    let ready = condition_message(&object, "Ready");
    for name in [
        "ScaledObject",
        "HTTPRoute",
        "InterceptorRoute not installed",
    ] {
        assert!(ready.contains(name), "{name} in {ready}");
    }
    assert_eq!(
        condition(&object, "RouteReady").map(|c| c.1).as_deref(),
        Some("DependencyMissing")
    );
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    assert!(deployments.get_opt("needs-deps").await?.is_some());
    wait_condition(
        &isvcs,
        "plain",
        "Ready",
        "True",
        None,
        Duration::from_secs(60),
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    assert_eq!(operator.http_get("/healthz")?.0, 200);

    // KEDA installed after the operator started (a hunt's finding: its ScaledObjects were then created but never
    // watched until a restart). Discovery is asked again every 30 s; the controller is then built again with the
    // watch, which reconciles every service once: the ScaledObject appears (nothing else reconciles needs-deps
    // here), and one deleted comes back at once (the watch of the new kind).
    cluster.kubectl_ok(&["apply", "--server-side", "-f", keda_crds])?;
    // kubectl wait fails on a CRD whose status has no conditions yet: ask again.
    wait_for(
        "KEDA's CRDs established",
        Duration::from_secs(60),
        || async {
            cluster.kubectl_ok(&[
                "wait",
                "--for=condition=Established",
                "--timeout=10s",
                "crd/scaledobjects.keda.sh",
            ])?;
            Ok(Some(()))
        },
    )
    .await?;
    let scaled_objects = api(&client, ns.name(), &scaled_object_resource());
    let first = wait_for("the ScaledObject", Duration::from_secs(90), || async {
        Ok(scaled_objects.get_opt("needs-deps").await?)
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    scaled_objects
        .delete("needs-deps", &DeleteParams::default())
        .await?;
    wait_for(
        "the ScaledObject created again",
        Duration::from_secs(30),
        || async {
            let again = scaled_objects.get_opt("needs-deps").await?;
            Ok(again.filter(|o| o.metadata.uid != first.metadata.uid))
        },
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    assert!(
        std::fs::read_to_string(&operator.log)?.contains("optional CRDs changed"),
        "{}",
        operator.log_tail()
    );
    drop(operator);
    cluster.kubectl_ok(&["delete", "--ignore-not-found", "-f", keda_crds])?;
    drop(ns);
    Ok(())
}

/// Waits (60 s: process start, Lease and discovery on a slow machine) until the operator's log says discovery found
/// KEDA's CRDs served (`keda`) or not.
async fn discovered(operator: &OperatorProcess, keda: bool) -> anyhow::Result<()> {
    let wanted = format!("\"keda\":{keda}");
    wait_for(
        &format!("discovery with {wanted}"),
        Duration::from_secs(60),
        || async {
            let log = std::fs::read_to_string(&operator.log)?;
            Ok(log
                .lines()
                .any(|l| l.contains("optional CRDs discovered") && l.contains(&wanted))
                .then_some(()))
        },
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))
}

/// `path` (a file or a folder of CRDs), deleted first if present: a reused private instance may still have the CRDs
/// a test installs.
fn absent_crds(cluster: &Cluster, path: &str) -> anyhow::Result<String> {
    cluster.kubectl_ok(&["delete", "--ignore-not-found", "--wait", "-f", path])?;
    Ok(path.to_owned())
}

/// The test's operator (the chart's ClusterRole, watching `namespace`) with resync and requeue periods of `seconds`.
fn operator_resyncing_every(
    cluster: &Cluster,
    namespace: &str,
    seconds: &str,
) -> anyhow::Result<OperatorProcess> {
    let gateway = format!("{namespace}/shared");
    OperatorProcess::start(
        cluster,
        &operator_kubeconfig(cluster)?,
        namespace,
        "fleet",
        &[
            "--default-gateway",
            &gateway,
            "--resync-seconds",
            seconds,
            "--test-progress-requeue-seconds",
            seconds,
        ],
        &[],
    )
}

/// The directory of the upstream CRDs the control plane scripts fetch (`upstream-crds.sh` prints it; cached). Its
/// `keda` is a link to a folder, which kubectl reads only when named with a trailing slash (`keda/`).
fn upstream_crds() -> anyhow::Result<std::path::PathBuf> {
    let script = acceptance_tests::cluster::repo_root()
        .join("acceptance-tests/cluster/scripts/upstream-crds.sh");
    let out = std::process::Command::new("bash").arg(script).output()?;
    anyhow::ensure!(
        out.status.success(),
        "upstream-crds.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?.trim().into())
}

/// A review's finding: when discovery changed (here KEDA installed) while the InferenceService list still failed
/// (here its CRD is applied after the operator started, a GitOps ordering), the controller was built again before its
/// cache had listed, and kube's controller never finishes such a shutdown: nothing reconciled InferenceServices until
/// the operator restarted. The rebuild now waits for the list.
#[tokio::test]
async fn crds_installed_after_the_operator_started_are_served() -> anyhow::Result<()> {
    let cluster = PrivateCluster::start("late-crds", &["--no-upstream-crds"])?;
    let keda_crds = absent_crds(&cluster, &format!("{}/keda/", upstream_crds()?.display()))?;
    let keda_crds = keda_crds.as_str();
    let model_fleet_crds =
        acceptance_tests::cluster::repo_root().join("charts/model-fleet-operator/crds");
    absent_crds(&cluster, model_fleet_crds.to_str().expect("UTF-8 path"))?;
    let ns = cluster.namespace("late-crds").await?;
    let client = cluster.client().await?;
    let operator = operator_resyncing_every(&cluster, ns.name(), "300")?;

    // The first discovery must not see KEDA yet (a review's finding: on a slow machine it could, and the change this
    // test is about would never happen).
    discovered(&operator, false).await?;
    // KEDA first: the next discovery (within 30 s) sees it while InferenceServices cannot be listed yet.
    cluster.kubectl_ok(&["apply", "--server-side", "-f", keda_crds])?;
    discovered(&operator, true).await?;
    // Past the next discovery, so the change is seen before the list can succeed.
    tokio::time::sleep(Duration::from_secs(35)).await;
    cluster.install_model_fleet_crds()?;

    let isvcs = api(&client, ns.name(), &isvc_resource());
    let mut spec = echo_spec();
    spec.as_object_mut().unwrap().remove("gateway");
    spec["replicas"] = json!({"min": 1, "max": 3});
    spec["scaling"] = json!({"triggers": [{"type": "rabbitmq", "metadata": {"queueName": "q", "hostFromEnv": "AMQP"}}]});
    apply(&isvcs, "late", spec).await?;
    let scaled_objects = api(&client, ns.name(), &scaled_object_resource());
    wait_for("the ScaledObject", Duration::from_secs(120), || async {
        Ok(scaled_objects.get_opt("late").await?)
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    // Every controller's watch retries its failed list with a growing backoff (kube's, up to a minute apart).
    wait_for("/readyz", Duration::from_secs(120), || async {
        Ok((operator.http_get("/readyz")?.0 == 200).then_some(()))
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    // The restart waited for the list: not rescued by the drain's time limit (the second safeguard).
    let log = std::fs::read_to_string(&operator.log)?;
    assert!(
        log.contains("optional CRDs changed"),
        "{}",
        operator.log_tail()
    );
    assert!(
        !log.contains("reconciles did not finish in time"),
        "{}",
        operator.log_tail()
    );
    drop(operator);
    drop(ns);
    Ok(())
}

/// An aggregated API registered for KEDA's group version `keda.sh/v1alpha1` whose Service does not exist: the API
/// server answers its discovery with 503 (the classic broken metrics-server, here on the group the operator asks).
fn broken_keda_api_service() -> serde_json::Value {
    json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1alpha1.keda.sh"},
        "spec": {"group": "keda.sh", "version": "v1alpha1", "groupPriorityMinimum": 100, "versionPriority": 100,
            "insecureSkipTLSVerify": true,
            "service": {"namespace": "default", "name": "missing-keda-metrics", "port": 443}}})
}

/// Whether the operator's log has a line containing `words`.
fn logged(operator: &OperatorProcess, words: &str) -> anyhow::Result<bool> {
    Ok(std::fs::read_to_string(&operator.log)?.contains(words))
}

/// Discovery failing (a broken aggregated API on a group it asks): before its first answer no InferenceService is
/// reconciled (acting on a guess would report dependencies missing or write children of kinds not watched); once it
/// answered, a later failure keeps that answer: services keep their routes, new ones get theirs, nobody is told a
/// dependency is missing and the controller is not rebuilt (a review's finding: each service reported
/// `DependencyMissing`).
#[tokio::test]
async fn a_failing_discovery_keeps_its_last_answer() -> anyhow::Result<()> {
    let cluster = PrivateCluster::start("discovery-fails", &["--no-upstream-crds"])?;
    let upstream = upstream_crds()?;
    absent_crds(&cluster, &format!("{}/keda/", upstream.display()))?;
    cluster.kubectl_ok(&[
        "apply",
        "--server-side",
        "-f",
        &format!("{}/gateway-api/", upstream.display()),
    ])?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("discovery-fails").await?;
    let client = cluster.client().await?;
    create_gateway(&client, ns.name()).await?;
    let broken = broken_keda_api_service();
    cluster.kubectl_apply(&broken, &[])?;
    let operator = operator(&cluster, ns.name(), &[])?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let routes = api(&client, ns.name(), &route_resource());
    apply(&isvcs, "early", echo_spec()).await?;

    // Never answered: the service waits, nothing is written for it.
    wait_for(
        "discovery's first failure",
        Duration::from_secs(60),
        || async { Ok(logged(&operator, "discovery failed and never answered")?.then_some(())) },
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    assert!(deployments.get_opt("early").await?.is_none());
    assert!(isvcs.get("early").await?.data.get("status").is_none());

    // The first answer (the broken API gone: no KEDA, the Gateway API served) lets it be served.
    cluster.kubectl_ok(&["delete", "apiservice", "v1alpha1.keda.sh"])?;
    discovered(&operator, false).await?;
    let route = |name: &'static str| {
        let routes = routes.clone();
        async move { Ok(routes.get_opt(name).await?) }
    };
    wait_for("early's HTTPRoute", Duration::from_secs(60), || {
        route("early")
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;

    // Broken again after an answer: the controller keeps the watches and the answer it was built with.
    cluster.kubectl_apply(&broken, &[])?;
    wait_for("a failed rediscovery", Duration::from_secs(90), || async {
        Ok(logged(&operator, "discovery failed: keeping the watches")?.then_some(()))
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    let mut late = echo_spec();
    late["gateway"]["hostnames"] = json!(["late.localhost"]);
    apply(&isvcs, "late", late).await?;
    wait_for("late's HTTPRoute", Duration::from_secs(60), || {
        route("late")
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    for name in ["early", "late"] {
        let object = isvcs.get(name).await?;
        let reasons = serde_json::to_string(&object.data["status"]["conditions"])?;
        assert!(!reasons.contains("DependencyMissing"), "{name}: {reasons}");
    }
    assert!(
        !logged(&operator, "optional CRDs changed")?,
        "{}",
        operator.log_tail()
    );
    cluster.kubectl_ok(&["delete", "apiservice", "v1alpha1.keda.sh"])?;
    drop(operator);
    drop(ns);
    Ok(())
}
