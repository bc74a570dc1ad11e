//! Issue 18, bad input: an update that would be invalid leaves what runs untouched. A running InferenceService gets
//! (a) updates the API server refuses (CEL rules: `replicas.min` above `replicas.max`, two env entries of one name,
//!     a reserved volume name, a toleration with an empty key that is not `Exists`): 422 naming the field, the
//!     object keeps its generation;
//! (b) an update the API server accepts but the operator cannot render (a fit no capacity class holds): `Ready=False`
//!     and `Degraded=True, FitTooLarge` naming the fit, while nothing is applied or pruned.
//! In both, the Deployment, Service and HTTPRoute keep their resourceVersion: not one write reached them.
//! (c) While refused, the status' replica counts follow the Deployment that still runs.

use std::time::Duration;

use acceptance_tests::Cluster;
use acceptance_tests::inference::{
    api, apply, condition, create_gateway, echo_spec, isvc_resource, operator, route_resource,
    wait_condition,
};
use acceptance_tests::wait::wait_for;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::json;

/// The resourceVersions of the service's Deployment, Service and HTTPRoute.
async fn children_versions(
    client: &kube::Client,
    ns: &str,
    name: &str,
) -> anyhow::Result<Vec<String>> {
    let deployment = Api::<Deployment>::namespaced(client.clone(), ns)
        .get(name)
        .await?;
    let service = Api::<Service>::namespaced(client.clone(), ns)
        .get(name)
        .await?;
    let route = api(client, ns, &route_resource()).get(name).await?;
    Ok([deployment.metadata, service.metadata, route.metadata]
        .into_iter()
        .map(|m| m.resource_version.unwrap_or_default())
        .collect())
}

#[tokio::test]
async fn invalid_updates_leave_the_running_children_untouched() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("bad-update").await?;
    let client = cluster.client().await?;
    create_gateway(&client, ns.name()).await?;
    let operator = operator(&cluster, ns.name(), &[])?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    apply(&isvcs, "echo", echo_spec()).await?;
    wait_condition(
        &isvcs,
        "echo",
        "Ready",
        "True",
        None,
        Duration::from_secs(60),
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    let before = children_versions(&client, ns.name(), "echo").await?;
    let generation = isvcs.get("echo").await?.metadata.generation;

    // (a) Refused by the API server, on the field: a cross-field rule, and (a new-user trial) pod rules the API server
    // used to check only on the rendered Deployment, where the operator failed with ReconcileError forever.
    let refusals = [
        (
            "/replicas",
            json!({"min": 3, "max": 2}),
            "spec.replicas.min",
            "must not exceed replicas.max",
        ),
        (
            "/container/env",
            json!([{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]),
            "spec.container.env",
            "two entries have the same name",
        ),
        (
            "/volumes",
            json!([{"name": "dshm", "mountPath": "/scratch", "emptyDir": {}}]),
            "spec.volumes[0].name",
            "reserved for the operator's volumes",
        ),
        (
            "/gpu",
            json!({"count": 0, "tolerations": [{"operator": "Equal", "value": "x"}]}),
            "spec.gpu.tolerations[0].operator",
            "operator must be Exists when key is empty",
        ),
    ];
    for (pointer, value, path, fragment) in refusals {
        let mut refused = echo_spec();
        let (parent, field) = pointer.rsplit_once('/').unwrap();
        refused
            .pointer_mut(parent)
            .and_then(|p| p.as_object_mut())
            .unwrap_or_else(|| panic!("echo_spec has {parent:?}"))
            .insert(field.to_string(), value);
        let error = apply(&isvcs, "echo", refused)
            .await
            .expect_err("the update is refused");
        let message = format!("{error:#}");
        assert!(
            message.contains(path) && message.contains(fragment),
            "{message}"
        );
        assert_eq!(isvcs.get("echo").await?.metadata.generation, generation);
    }

    // (b) Accepted by the API server, refused by render: the status says why, the children stay as they were.
    let mut too_large = echo_spec();
    too_large["gpu"] = json!({"count": 1, "fit": {"modules": [{"name": "weights", "weightsGiB": 900, "placement": "replicated"}]}});
    let refused = || async {
        apply(&isvcs, "echo", too_large.clone()).await?;
        wait_condition(
            &isvcs,
            "echo",
            "Ready",
            "False",
            Some("FitTooLarge"),
            Duration::from_secs(30),
        )
        .await
        .map_err(|e| e.context(operator.log_tail()))
    };
    let object = refused().await?;
    assert_eq!(
        condition(&object, "Degraded"),
        Some(("True".into(), "FitTooLarge".into()))
    );
    // Several resyncs (every 2 s) later, still not one write to a child.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(children_versions(&client, ns.name(), "echo").await?, before);

    // Back to a valid spec: served as before, with no change to the children either.
    apply(&isvcs, "echo", echo_spec()).await?;
    wait_condition(
        &isvcs,
        "echo",
        "Ready",
        "True",
        None,
        Duration::from_secs(60),
    )
    .await?;
    assert_eq!(children_versions(&client, ns.name(), "echo").await?, before);

    // (c) While refused, the status counts what the Deployment of the last accepted spec runs: a replica added by
    // hand (as someone on call might) shows in `readyReplicas` instead of the count recorded before the refusal.
    refused().await?;
    Api::<Deployment>::namespaced(client.clone(), ns.name())
        .patch(
            "echo",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await?;
    wait_for(
        "readyReplicas 2 on the refused service",
        Duration::from_secs(60),
        || async {
            let status = isvcs.get("echo").await?.data["status"].clone();
            Ok((status["readyReplicas"] == 2 && status["replicas"] == 2).then_some(()))
        },
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    Ok(())
}
