//! InferenceService helpers for control-plane tests: the dynamic APIs of the kind and its children, a server-side
//! apply as a user makes it, waiting for a condition of the current generation, the operator a test starts, and
//! writing child status the way a Gateway controller would (there is none in the test cluster).

use std::time::Duration;

use kube::Api;
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

use crate::process::operator_kubeconfig;
use crate::{Cluster, OperatorProcess, wait_for};

/// The API resource of `group/version` `kind` (`plural`).
pub fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// `modelfleet.io/v1alpha1` InferenceService.
pub fn isvc_resource() -> ApiResource {
    resource(
        "modelfleet.io",
        "v1alpha1",
        "InferenceService",
        "inferenceservices",
    )
}

/// Gateway API v1 HTTPRoute.
pub fn route_resource() -> ApiResource {
    resource("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes")
}

/// KEDA v1alpha1 ScaledObject.
pub fn scaled_object_resource() -> ApiResource {
    resource("keda.sh", "v1alpha1", "ScaledObject", "scaledobjects")
}

/// The dynamic API of `ar` in `ns`.
pub fn api(client: &kube::Client, ns: &str, ar: &ApiResource) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, ar)
}

/// Starts an operator for `ns` with a short resync so zero-write checks see several reconciles.
pub fn operator(cluster: &Cluster, ns: &str, extra: &[&str]) -> anyhow::Result<OperatorProcess> {
    let kubeconfig = operator_kubeconfig(cluster)?;
    let gateway = format!("{ns}/shared");
    let mut flags = vec!["--default-gateway", &gateway, "--resync-seconds", "2"];
    flags.extend_from_slice(extra);
    OperatorProcess::start(cluster, &kubeconfig, ns, "fleet", &flags, &[])
}

/// Server-side applies an InferenceService as a user would (`kubectl apply --server-side`).
pub async fn apply(api: &Api<DynamicObject>, name: &str, spec: Value) -> anyhow::Result<()> {
    let body = json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
        "metadata": {"name": name}, "spec": spec,
    });
    api.patch(
        name,
        &PatchParams::apply("acceptance-tests").force(),
        &Patch::Apply(&body),
    )
    .await?;
    Ok(())
}

/// The message of the condition `type_` of a Model Fleet object (empty when it has none).
pub fn condition_message(object: &DynamicObject, type_: &str) -> String {
    object
        .data
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .and_then(|c| c["message"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// `(status, reason)` of the condition `type_` of a Model Fleet object.
pub fn condition(object: &DynamicObject, type_: &str) -> Option<(String, String)> {
    object
        .data
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find_map(|c| {
            (c.get("type")?.as_str()? == type_).then(|| {
                (
                    c["status"].as_str().unwrap_or_default().to_owned(),
                    c["reason"].as_str().unwrap_or_default().to_owned(),
                )
            })
        })
}

/// Whether the status describes the object's current generation.
pub fn observed_current_generation(object: &DynamicObject) -> bool {
    object
        .data
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64)
        == object.metadata.generation
}

/// Waits until the operator has reconciled the current generation (a Ready condition exists, True
/// or False: on a fast machine the echo service may already be Ready at the first look).
pub async fn wait_reconciled(isvcs: &Api<DynamicObject>, name: &str) -> anyhow::Result<()> {
    wait_for(
        &format!("{name} reconciled"),
        Duration::from_secs(20),
        || async {
            let object = isvcs.get(name).await?;
            let done =
                observed_current_generation(&object) && condition(&object, "Ready").is_some();
            Ok(done.then_some(()))
        },
    )
    .await
}

/// Waits until condition `type_` has `status` (and `reason`, when given) for the current generation; returns the
/// object. Errors: the timeout, naming what the condition was.
pub async fn wait_condition(
    isvcs: &Api<DynamicObject>,
    name: &str,
    type_: &str,
    status: &str,
    reason: Option<&str>,
    timeout: Duration,
) -> anyhow::Result<DynamicObject> {
    wait_for(
        &format!("{name} {type_}={status} {reason:?}"),
        timeout,
        || async {
            let object = isvcs.get(name).await?;
            let found = condition(&object, type_);
            let ok = observed_current_generation(&object)
                && found
                    .as_ref()
                    .is_some_and(|(s, r)| s == status && reason.is_none_or(|want| want == r));
            if ok {
                Ok(Some(object))
            } else {
                anyhow::bail!("{type_} is {found:?}")
            }
        },
    )
    .await
}

/// Sum of the operator's `/metrics` lines starting with `line_prefix`.
pub fn metric(operator: &OperatorProcess, line_prefix: &str) -> anyhow::Result<f64> {
    let (_, body) = operator.http_get("/metrics")?;
    Ok(body
        .lines()
        .filter(|l| l.starts_with(line_prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}

/// The spec of `examples/inference-kind.yaml`.
pub fn echo_spec() -> Value {
    let text =
        std::fs::read_to_string(crate::cluster::repo_root().join("examples/inference-kind.yaml"))
            .expect("examples/inference-kind.yaml");
    let manifest: Value = serde_yaml::from_str(&text).expect("example is YAML");
    manifest["spec"].clone()
}

/// Writes the route's status the way a Gateway controller would after accepting generation 1 of it.
pub async fn accept_route(client: &kube::Client, ns: &str, name: &str) -> anyhow::Result<()> {
    gateway_says(client, ns, name, "True", "Accepted", 1).await
}

/// Writes the route's status as a Gateway controller (`ns/shared`) would: `Accepted` with `status` and `reason` for
/// the route's generation `generation`.
pub async fn gateway_says(
    client: &kube::Client,
    ns: &str,
    name: &str,
    status: &str,
    reason: &str,
    generation: i64,
) -> anyhow::Result<()> {
    let status = json!({"status": {"parents": [{
        "parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "shared", "namespace": ns},
        "controllerName": "example.com/test-gateway",
        "conditions": [{"type": "Accepted", "status": status, "reason": reason, "message": reason,
                        "observedGeneration": generation, "lastTransitionTime": "2026-01-01T00:00:00Z"}]
    }]}});
    api(client, ns, &route_resource())
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    Ok(())
}

/// Creates the Gateway `ns/shared` the test operator's `--default-gateway` names (no controller serves it).
pub async fn create_gateway(client: &kube::Client, ns: &str) -> anyhow::Result<()> {
    let gateway = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
        "metadata": {"name": "shared"},
        "spec": {"gatewayClassName": "test", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}});
    api(
        client,
        ns,
        &resource("gateway.networking.k8s.io", "v1", "Gateway", "gateways"),
    )
    .patch(
        "shared",
        &PatchParams::apply("acceptance-tests"),
        &Patch::Apply(&gateway),
    )
    .await?;
    Ok(())
}
