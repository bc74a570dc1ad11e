//! Issue 22, HTTP wake-from-zero: `scaling.http` on an InferenceService becomes, on the local control plane with the
//! KEDA HTTP add-on's own CRDs (v0.15.0, from its Go module; see upstream-crds.sh), an `InterceptorRoute` the real API
//! server accepts against the add-on's schema, an `external-push` trigger on the ScaledObject, an HTTPRoute to the
//! add-on's interceptor with the route header, and a ReferenceGrant in the add-on's namespace (here the test's own,
//! through `--http-add-on-namespace`). Resyncs write nothing; removing `scaling.http` prunes the route, points the
//! HTTPRoute back at the Service and, at the next sweep, deletes the grant. No add-on runs here: the traffic path
//! itself (interceptor -> Service while KEDA scales 0 -> 1) is the add-on's and is not exercised. With
//! `--http-add-on=disabled` (the chart without `httpAddOn.enabled`) the same service says `DependencyMissing` naming
//! the chart value, and nothing of the add-on's is written.

use std::time::Duration;

use acceptance_tests::inference::{
    api, apply, condition, condition_message, create_gateway, echo_spec, isvc_resource, operator,
    resource, route_resource, scaled_object_resource, wait_condition,
};
use acceptance_tests::{Cluster, wait_for};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::DynamicObject;
use serde_json::{Value, json};

/// The operator sweeps grants every 30 s: allow two sweeps.
const SWEEP_TIMEOUT: Duration = Duration::from_secs(75);
const TIMEOUT: Duration = Duration::from_secs(60);

fn interceptor_routes() -> kube::core::ApiResource {
    resource(
        "http.keda.sh",
        "v1beta1",
        "InterceptorRoute",
        "interceptorroutes",
    )
}

fn reference_grants() -> kube::core::ApiResource {
    resource(
        "gateway.networking.k8s.io",
        "v1beta1",
        "ReferenceGrant",
        "referencegrants",
    )
}

/// The echo service from 0 to 2 replicas, woken by HTTP requests only (`scaling.http`).
fn http_only_spec() -> Value {
    let mut spec = echo_spec();
    spec["replicas"] = json!({"min": 0, "max": 2});
    spec["scaling"] = json!({"http": {"targetConcurrency": 4}});
    spec
}

fn json_of(object: &DynamicObject) -> Value {
    serde_json::to_value(object).expect("objects serialize")
}

#[tokio::test]
async fn scaling_http_wires_the_keda_http_add_on_and_unwires_it() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("http-wake").await?;
    let ns = ns.name();
    let client = cluster.client().await?;
    let operator = operator(&cluster, ns, &["--http-add-on-namespace", ns])?;
    create_gateway(&client, ns).await?;
    let mut spec = echo_spec();
    spec["replicas"] = json!({"min": 0, "max": 2});
    // A cpu trigger alone could never wake a service at 0 (ScaleToZeroUnwakeable); with http it can.
    let cpu = json!({"type": "cpu", "metricType": "Utilization", "metadata": {"value": "80"}});
    spec["scaling"] = json!({"triggers": [cpu.clone()],
        "http": {"targetConcurrency": 4, "coldStartTimeoutSeconds": 900}});
    spec["gateway"] =
        json!({"hostnames": ["chat.example.test"], "pathPrefix": "/chat", "stripPathPrefix": true});
    let isvcs = api(&client, ns, &isvc_resource());
    apply(&isvcs, "chat", spec.clone()).await?;

    let routes = api(&client, ns, &interceptor_routes());
    let grants = api(&client, ns, &reference_grants());
    let grant_name = format!("model-fleet-{ns}");
    let route = wait_for("the InterceptorRoute", TIMEOUT, || async {
        Ok(routes.get_opt("chat").await?)
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    assert_eq!(
        json_of(&route)["spec"],
        json!({
            "target": {"service": "chat", "port": 80},
            "rules": [{"headers": [{"name": "x-model-fleet-route", "value": format!("{ns}/chat")}]}],
            "scalingMetric": {"concurrency": {"targetValue": 4}},
            "timeouts": {"readiness": "900s"},
        })
    );
    let grant = wait_for("the ReferenceGrant", TIMEOUT, || async {
        Ok(grants.get_opt(&grant_name).await?)
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    assert_eq!(
        json_of(&grant)["spec"],
        json!({
            "from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": ns}],
            "to": [{"group": "", "kind": "Service", "name": "keda-add-ons-http-interceptor-proxy"}],
        })
    );
    let scaled = json_of(
        &api(&client, ns, &scaled_object_resource())
            .get("chat")
            .await?,
    );
    assert_eq!(scaled["spec"]["minReplicaCount"], 0);
    assert_eq!(
        scaled["spec"]["triggers"],
        json!([cpu, {"type": "external-push", "name": "http", "metadata": {
            // Derived from --http-add-on-namespace.
            "scalerAddress": format!("keda-add-ons-http-external-scaler.{ns}:9090"), "interceptorRoute": "chat"}}])
    );
    let http_routes = api(&client, ns, &route_resource());
    let rule = json_of(&http_routes.get("chat").await?)["spec"]["rules"][0].clone();
    assert_eq!(
        rule["backendRefs"][0]["name"],
        "keda-add-ons-http-interceptor-proxy"
    );
    assert_eq!(rule["backendRefs"][0]["namespace"], ns);
    assert_eq!(rule["backendRefs"][0]["port"], 8080);
    // No Gateway deadline of its own: the interceptor holds the request for the cold start.
    assert_eq!(rule["timeouts"], json!({"request": "0s"}));
    assert_eq!(
        rule["filters"][1]["requestHeaderModifier"]["set"][0]["value"],
        format!("{ns}/chat")
    );
    // A scale-to-zero service whose only other trigger is cpu is not warned about: HTTP wakes it.
    let scaling_ready = wait_for("ScalingReady", TIMEOUT, || async {
        let isvc = isvcs.get("chat").await?;
        Ok(acceptance_tests::inference::condition(
            &isvc,
            "ScalingReady",
        ))
    })
    .await?;
    assert_ne!(scaling_ready.1, "ScaleToZeroUnwakeable");

    // Resyncs (every 2 s) leave the route and the grant alone.
    let (route_version, grant_version) = (
        route.metadata.resource_version,
        grant.metadata.resource_version,
    );
    tokio::time::sleep(Duration::from_secs(7)).await;
    assert_eq!(
        routes.get("chat").await?.metadata.resource_version,
        route_version
    );
    assert_eq!(
        grants.get(&grant_name).await?.metadata.resource_version,
        grant_version
    );

    // Without scaling.http: the route is pruned, the HTTPRoute goes to the Service, the grant is swept.
    spec["scaling"] = json!({"triggers": [{"type": "redis",
        "metadata": {"address": "redis.ml.svc:6379", "listName": "q", "listLength": "5"}}]});
    apply(&isvcs, "chat", spec).await?;
    wait_for("the InterceptorRoute pruned", TIMEOUT, || async {
        Ok(routes.get_opt("chat").await?.is_none().then_some(()))
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    let rule = json_of(&http_routes.get("chat").await?)["spec"]["rules"][0].clone();
    let backend = &rule["backendRefs"][0];
    assert_eq!(
        (&backend["name"], &backend["port"]),
        (&json!("chat"), &json!(80))
    );
    assert!(backend.get("namespace").is_none(), "{backend}");
    assert!(rule.get("timeouts").is_none(), "{rule}");
    let scaled = json_of(
        &api(&client, ns, &scaled_object_resource())
            .get("chat")
            .await?,
    );
    assert_eq!(scaled["spec"]["triggers"].as_array().map(Vec::len), Some(1));
    wait_for("the ReferenceGrant swept", SWEEP_TIMEOUT, || async {
        Ok(grants.get_opt(&grant_name).await?.is_none().then_some(()))
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    Ok(())
}

/// `--http-add-on=disabled` (what the chart passes unless `httpAddOn.enabled`): the add-on's CRDs are installed but
/// the operator has no Role in its namespace, so a service with `scaling.http` says `Ready=False DependencyMissing`
/// naming the chart value (not a Forbidden error on the ReferenceGrant); its Deployment is still applied, and no
/// InterceptorRoute or ReferenceGrant is.
#[tokio::test]
async fn with_the_add_on_disabled_scaling_http_says_dependency_missing() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("http-off").await?;
    let ns = ns.name();
    let client = cluster.client().await?;
    let operator = operator(
        &cluster,
        ns,
        &["--http-add-on=disabled", "--http-add-on-namespace", ns],
    )?;
    create_gateway(&client, ns).await?;
    let spec = http_only_spec();
    let isvcs = api(&client, ns, &isvc_resource());
    apply(&isvcs, "chat", spec).await?;

    let object = wait_condition(
        &isvcs,
        "chat",
        "Ready",
        "False",
        Some("DependencyMissing"),
        TIMEOUT,
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    let message = condition_message(&object, "Ready");
    assert!(
        message.contains("--http-add-on=disabled") && message.contains("httpAddOn.enabled=true"),
        "{message}"
    );
    let deployments: kube::Api<Deployment> = kube::Api::namespaced(client.clone(), ns);
    assert!(deployments.get_opt("chat").await?.is_some());
    assert!(
        api(&client, ns, &interceptor_routes())
            .get_opt("chat")
            .await?
            .is_none()
    );
    let grant = format!("model-fleet-{ns}");
    assert!(
        api(&client, ns, &reference_grants())
            .get_opt(&grant)
            .await?
            .is_none()
    );
    let log = std::fs::read_to_string(&operator.log)?;
    assert!(!log.contains("Forbidden"), "{}", operator.log_tail());
    Ok(())
}

/// A hunt's finding: with `--http-add-on-namespace` naming a namespace that does not exist, the reconcile error said
/// only `namespaces "..." not found`. It now names the flag and the chart value that chose the namespace.
#[tokio::test]
async fn a_missing_add_on_namespace_is_named_with_its_flag() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("http-wake-ns").await?;
    let ns = ns.name();
    let client = cluster.client().await?;
    let missing = format!("{ns}-absent");
    let operator = operator(&cluster, ns, &["--http-add-on-namespace", &missing])?;
    create_gateway(&client, ns).await?;
    let spec = http_only_spec();
    let isvcs = api(&client, ns, &isvc_resource());
    apply(&isvcs, "chat", spec).await?;

    // The first reconcile failed: `status.observedGeneration` is not written yet, only `Ready`.
    let message = wait_for("chat Ready=False ReconcileError", TIMEOUT, || async {
        let object = isvcs.get("chat").await?;
        Ok(
            (condition(&object, "Ready").map(|c| c.1).as_deref() == Some("ReconcileError"))
                .then(|| condition_message(&object, "Ready")),
        )
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    assert!(
        message.contains(&format!("in namespace {missing}"))
            && message.contains("--http-add-on-namespace")
            && message.contains("not found"),
        "{message}"
    );
    Ok(())
}
