//! Issue 22, scheduled suspend: `spec.schedule.expiresAt` suspends an InferenceService (0 replicas) and a TrainingRun
//! (its Job suspended) at the time, with `Suspended=True, Expired`; `status.nextTransition` announces it before; a
//! later time resumes. The spec is never rewritten. Short durations (15 s) on the local control plane.

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
