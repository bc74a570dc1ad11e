//! Issue 22, scheduled suspend: `spec.schedule.expiresAt` suspends an InferenceService (0 replicas) and a TrainingRun
//! (its Job suspended) at the time, with `Suspended=True, Expired`; `status.nextTransition` announces it before; a
//! later time resumes. Suspend after idle: `spec.schedule.suspendAfterIdleSeconds` suspends a service whose KEDA
//! ScaledObject reports no active trigger for that long (`Suspended=True, Idle`), until its spec changes. The spec is
//! never rewritten. Short durations (8 to 15 s) on the local control plane; the test writes the ScaledObject's status
//! as KEDA would (no KEDA runs here).

use acceptance_tests::inference::{api as dynamic_api, scaled_object_resource};
use acceptance_tests::modelfleet::{self, create, wait_for_object};
use acceptance_tests::{Cluster, OperatorProcess, TestNamespace};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

/// RFC 3339 `seconds` from now, whole seconds (as the status echoes it).
fn in_seconds(seconds: i64) -> String {
    Timestamp::from_second(Timestamp::now().as_second() + seconds)
        .expect("a valid time")
        .to_string()
}

/// `(status, reason)` of the condition of `type_`.
fn condition(object: &Value, type_: &str) -> (String, String) {
    let c = modelfleet::condition(object, type_);
    let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
    (text("status"), text("reason"))
}

/// A namespace, an admin client, an operator for it, and `object` created there with `spec.schedule.expiresAt` 15 s
/// from now (returned).
async fn start(
    prefix: &str,
    mut object: Value,
) -> anyhow::Result<(TestNamespace, kube::Client, OperatorProcess, String)> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace(prefix).await?;
    let client = cluster.client().await?;
    let operator = OperatorProcess::for_namespace(&cluster, ns.name(), &[])?;
    let expires_at = in_seconds(15);
    object["spec"]["schedule"] = json!({"expiresAt": expires_at});
    create(&client, ns.name(), object).await?;
    Ok((ns, client, operator, expires_at))
}

#[tokio::test]
async fn a_service_is_suspended_at_its_expiry_and_resumes_with_a_later_one() -> anyhow::Result<()> {
    let (ns, client, operator, expires_at) = start(
        "expiry-isvc",
        json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService", "metadata": {"name": "chat"},
            "spec": {"model": {"name": "m"}, "container": {"image": "hashicorp/http-echo:1.0"}}}),
    )
    .await?;
    let before = wait_for_object(
        &client,
        ns.name(),
        "InferenceService",
        "chat",
        "Ready before the expiry",
        &operator,
        |o| condition(o, "Ready") == ("True".into(), "AsExpected".into()),
    )
    .await?;
    assert_eq!(
        before["status"]["nextTransition"],
        json!({"at": expires_at, "intent": "suspended"}),
        "{before}"
    );
    let after = wait_for_object(
        &client,
        ns.name(),
        "InferenceService",
        "chat",
        "Suspended=True Expired",
        &operator,
        |o| condition(o, "Suspended") == ("True".into(), "Expired".into()),
    )
    .await?;
    assert!(after["status"].get("nextTransition").is_none(), "{after}");
    assert!(
        after["spec"].get("intent").is_none(),
        "the spec was rewritten: {after}"
    );
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    let replicas = deployments.get("chat").await?.spec.and_then(|s| s.replicas);
    assert_eq!(replicas, Some(0));

    let later = in_seconds(3600);
    let patch = json!({"spec": {"schedule": {"expiresAt": later}}});
    modelfleet::api(&client, ns.name(), "InferenceService")
        .patch("chat", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    let resumed = wait_for_object(
        &client,
        ns.name(),
        "InferenceService",
        "chat",
        "Ready again",
        &operator,
        |o| condition(o, "Ready") == ("True".into(), "AsExpected".into()),
    )
    .await?;
    assert_eq!(condition(&resumed, "Suspended").0, "False");
    assert_eq!(resumed["status"]["nextTransition"]["at"], json!(later));
    Ok(())
}

#[tokio::test]
async fn a_run_is_suspended_at_its_expiry() -> anyhow::Result<()> {
    let (ns, client, operator, expires_at) = start(
        "expiry-run",
        json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun", "metadata": {"name": "ft"},
            "spec": {"container": {"image": "modelfleet.local/sim:never"}}}),
    )
    .await?;
    let running = wait_for_object(
        &client,
        ns.name(),
        "TrainingRun",
        "ft",
        "Running",
        &operator,
        |o| o["status"]["phase"] == "Running",
    )
    .await?;
    assert_eq!(running["status"]["nextTransition"]["at"], json!(expires_at));
    let suspended = wait_for_object(
        &client,
        ns.name(),
        "TrainingRun",
        "ft",
        "Suspended at expiry",
        &operator,
        |o| {
            o["status"]["phase"] == "Suspended"
                && condition(o, "Suspended") == ("True".into(), "Expired".into())
        },
    )
    .await?;
    assert!(
        suspended["status"].get("nextTransition").is_none(),
        "{suspended}"
    );
    let jobs: Api<Job> = Api::namespaced(client, ns.name());
    assert_eq!(
        jobs.get("ft").await?.spec.and_then(|s| s.suspend),
        Some(true)
    );
    Ok(())
}

/// Writes the ScaledObject's status as KEDA would: `Active` with `active`, last active an hour ago.
async fn keda_says(
    client: &kube::Client,
    ns: &str,
    name: &str,
    active: bool,
) -> anyhow::Result<()> {
    let flag = if active { "True" } else { "False" };
    let status = json!({"status": {"lastActiveTime": in_seconds(-3600), "conditions": [
        {"type": "Ready", "status": "True", "reason": "ScaledObjectReady", "message": "ready"},
        {"type": "Active", "status": flag, "reason": "ScalerActivity", "message": "test"}]}});
    dynamic_api(client, ns, &scaled_object_resource())
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_service_idle_past_its_limit_is_suspended_until_its_spec_changes() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("idle-isvc").await?;
    let client = cluster.client().await?;
    let operator = OperatorProcess::for_namespace(&cluster, ns.name(), &[])?;
    create(&client, ns.name(), json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
        "metadata": {"name": "chat"},
        "spec": {"model": {"name": "m"}, "container": {"image": "hashicorp/http-echo:1.0"},
            "replicas": {"min": 1, "max": 2},
            "scaling": {"triggers": [{"type": "kafka", "metadata": {"topic": "requests", "lagThreshold": "5"}}]},
            "schedule": {"suspendAfterIdleSeconds": 8}}})).await?;
    let scaled_objects = dynamic_api(&client, ns.name(), &scaled_object_resource());
    acceptance_tests::wait_for(
        "the ScaledObject",
        std::time::Duration::from_secs(60),
        || async { Ok(scaled_objects.get_opt("chat").await?.map(|_| ())) },
    )
    .await?;
    // KEDA has written nothing: nothing is counted yet.
    keda_says(&client, ns.name(), "chat", false).await?;
    let counting = wait_for_object(
        &client,
        ns.name(),
        "InferenceService",
        "chat",
        "the idle count",
        &operator,
        |o| {
            o["status"]["idle"]["since"].is_string()
                && o["status"]["nextTransition"]["intent"] == "suspended"
        },
    )
    .await?;
    let since: Timestamp = counting["status"]["idle"]["since"]
        .as_str()
        .unwrap_or_default()
        .parse()?;
    assert!(
        since.as_second() > Timestamp::now().as_second() - 600,
        "the count starts at the operator's first look, not at KEDA's lastActiveTime an hour ago: {counting}"
    );
    let idle = wait_for_object(
        &client,
        ns.name(),
        "InferenceService",
        "chat",
        "Suspended=True Idle",
        &operator,
        |o| condition(o, "Suspended") == ("True".into(), "Idle".into()),
    )
    .await?;
    assert!(idle["status"]["idle"]["suspendedAt"].is_string(), "{idle}");
    assert!(
        idle["spec"].get("intent").is_none(),
        "the spec was rewritten: {idle}"
    );
    let paused = wait_for_object(
        &client,
        ns.name(),
        "InferenceService",
        "chat",
        "Ready=False Suspended",
        &operator,
        |o| condition(o, "Ready").1 == "Suspended" && o["status"].get("nextTransition").is_none(),
    );
    paused.await?;
    let so = scaled_objects.get("chat").await?;
    assert_eq!(
        so.metadata
            .annotations
            .unwrap_or_default()
            .get("autoscaling.keda.sh/paused-replicas")
            .map(String::as_str),
        Some("0"),
        "KEDA is paused at 0"
    );
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    assert_eq!(
        deployments.get("chat").await?.spec.and_then(|s| s.replicas),
        Some(0)
    );
    let events = modelfleet::events(&client, ns.name(), "chat").await?;
    assert!(
        events.iter().any(|(reason, _)| reason == "IdleSuspended"),
        "{events:?}"
    );

    // Still idle by KEDA's record, but a spec change resumes it and restarts the count.
    modelfleet::api(&client, ns.name(), "InferenceService")
        .patch(
            "chat",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"intent": "automatic"}})),
        )
        .await?;
    let resumed = wait_for_object(
        &client,
        ns.name(),
        "InferenceService",
        "chat",
        "resumed",
        &operator,
        |o| {
            condition(o, "Suspended").0 == "False"
                && o["status"]["observedGeneration"] == o["metadata"]["generation"]
        },
    )
    .await?;
    assert!(
        resumed["status"]["idle"].get("suspendedAt").is_none(),
        "{resumed}"
    );
    assert_eq!(
        resumed["status"]["nextTransition"]["intent"], "suspended",
        "{resumed}"
    );
    let so = scaled_objects.get("chat").await?;
    assert!(
        !so.metadata
            .annotations
            .unwrap_or_default()
            .contains_key("autoscaling.keda.sh/paused-replicas"),
        "KEDA is unpaused"
    );
    // Active: the count stops.
    keda_says(&client, ns.name(), "chat", true).await?;
    wait_for_object(
        &client,
        ns.name(),
        "InferenceService",
        "chat",
        "the count cleared while active",
        &operator,
        |o| {
            o["status"]["idle"].get("since").is_none()
                && o["status"].get("nextTransition").is_none()
        },
    )
    .await?;
    let events = modelfleet::events(&client, ns.name(), "chat").await?;
    assert!(
        events.iter().any(|(reason, _)| reason == "IdleResumed"),
        "{events:?}"
    );
    Ok(())
}
