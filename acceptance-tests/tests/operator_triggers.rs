//! Issue 17's event filters, on the control plane: the operator skips the watch events of its own writes (its status
//! writes: `controller/inference/trigger.rs`; its child writes: `controller/children.rs`), and works from its own
//! status write while the cache lags (`controller/written.rs`). What those filters must never swallow is checked
//! here, with a resync period (600 s) far longer than any wait, so only a watch event can start each reconcile:
//! - a new service's first reconcile publishes one Event, `Created`, carrying its first Ready state;
//! - a child changed by someone else is repaired, a Service server-side apply cannot mend by creating it again;
//! - an InferenceService deleted and created again under its name with the same spec, after its children were
//!   collected, gets children of its own (nothing but its own creation event can start that reconcile: the
//!   filter must tell it from its predecessor by UID);
//! - nothing in it is a conflict or an error (no reconcile met a 409 from its own earlier write), but for the
//!   Service repair an admission policy refuses on purpose.

use std::time::Duration;

use acceptance_tests::inference::{api, apply, echo_spec, isvc_resource, metric};
use acceptance_tests::modelfleet::events;
use acceptance_tests::process::{OperatorProcess, operator_kubeconfig};
use acceptance_tests::{Cluster, wait_for};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(30);

/// The echo example without its route (no Gateway here), suspended: a settled service is requeued only at the
/// resync period, so no requeue of the deleted service (the queue knows objects by namespace and name) can stand in
/// for the watch event of its successor.
fn spec() -> Value {
    let mut spec = echo_spec();
    spec.as_object_mut().unwrap().remove("gateway");
    spec["intent"] = json!("suspended");
    spec
}

/// The Deployment `name` once its controller owner has UID `uid`.
async fn deployment_owned_by(
    deployments: &Api<Deployment>,
    name: &str,
    uid: &str,
) -> anyhow::Result<Option<Deployment>> {
    Ok(deployments.get_opt(name).await?.filter(|d| {
        d.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.uid == uid)
    }))
}

fn image(deployment: &Deployment) -> Option<String> {
    deployment.spec.as_ref()?.template.spec.as_ref()?.containers[0]
        .image
        .clone()
}

/// A ValidatingAdmissionPolicy (and its binding) refusing every Service with port `port` in namespace `ns`, as a
/// manifest file.
fn policy_refusing_port(ns: &str, port: i64) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    let manifest = format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: {ns}-no-port\n\
         spec:\n  failurePolicy: Fail\n  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"\"]\n      \
         apiVersions: [v1]\n      operations: [CREATE, UPDATE]\n      resources: [services]\n  validations:\n  \
         - expression: \"!object.spec.ports.exists(p, p.port == {port})\"\n    message: port {port} is not allowed here\n\
         ---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata:\n  \
         name: {ns}-no-port\nspec:\n  policyName: {ns}-no-port\n  validationActions: [Deny]\n  matchResources:\n    \
         namespaceSelector:\n      matchLabels:\n        kubernetes.io/metadata.name: {ns}\n"
    );
    std::fs::write(file.path(), manifest).unwrap();
    file
}

#[tokio::test]
async fn changes_by_others_and_a_service_created_again_under_its_name_each_start_a_reconcile()
-> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("triggers").await?;
    let client = cluster.client().await?;
    let operator = OperatorProcess::start(
        &cluster,
        &operator_kubeconfig(&cluster)?,
        ns.name(),
        "fleet",
        &["--resync-seconds", "600"],
        &[],
    )?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    let services: Api<Service> = Api::namespaced(client.clone(), ns.name());
    let context = |e: anyhow::Error| e.context(operator.log_tail());

    apply(&isvcs, "svc", spec()).await?;
    let first = isvcs.get("svc").await?.metadata.uid.unwrap_or_default();
    let ours = wait_for("the first Deployment", TIMEOUT, || {
        deployment_owned_by(&deployments, "svc", &first)
    })
    .await
    .map_err(context)?;
    let rendered = image(&ours);

    // A new service's first reconcile publishes one Event: `Created`, naming its children and its first Ready state
    // (one write instead of two: `controller/inference/announce.rs`).
    let announced = wait_for("the Event of the first Ready state", TIMEOUT, || async {
        let events = events(&client, ns.name(), "svc").await?;
        Ok(events
            .iter()
            .any(|(_, note)| note.contains("Ready is"))
            .then_some(events))
    })
    .await
    .map_err(context)?;
    let [(reason, note)] = &announced[..] else {
        panic!("one Event expected: {announced:?}");
    };
    assert_eq!(reason, "Created");
    for part in ["Service/svc", "Deployment/svc", "; Ready is False: "] {
        assert!(note.contains(part), "{part} in {note}");
    }

    // Someone else changes a field the operator set: the child's watch event (not an own write) repairs it.
    let tamper = json!([{"op": "replace", "path": "/spec/template/spec/containers/0/image",
        "value": "example.com/tampered:1"}]);
    deployments
        .patch(
            "svc",
            &PatchParams::default(),
            &Patch::Json::<()>(serde_json::from_value(tamper)?),
        )
        .await?;
    wait_for("the Deployment repaired", TIMEOUT, || async {
        let live = deployments.get("svc").await?;
        Ok((image(&live) == rendered).then_some(()))
    })
    .await
    .map_err(context)?;

    // A hunt's finding: a Service whose ports another manager replaced (one named `http` on another port) cannot be
    // mended by server-side apply (our port joins theirs: a duplicate name, 422 at every retry). The operator deletes
    // it and creates it again.
    let ports =
        |service: &Service| serde_json::to_value(&service.spec.as_ref().unwrap().ports).unwrap();
    let original = services.get("svc").await?;
    let rendered_ports = ports(&original);
    let port = rendered_ports[0]["port"].as_i64().unwrap();
    let mut tampered = rendered_ports.clone();
    tampered[0]["port"] = json!(port + 1);
    // First while an admission policy refuses the rendering itself (a review's finding: a child a policy refused was
    // deleted and could not be created again): the running Service stays and the error is reported.
    let policy = policy_refusing_port(ns.name(), port);
    cluster.kubectl_ok(&["apply", "-f", policy.path().to_str().unwrap()])?;
    wait_for("the policy in force", TIMEOUT, || async {
        let mut probe: Service = serde_json::from_value(json!({"metadata": {"name": "probe"},
            "spec": {"ports": [{"port": port}]}}))?;
        probe.metadata.namespace = Some(ns.name().to_owned());
        let dry = kube::api::PostParams {
            dry_run: true,
            ..Default::default()
        };
        Ok(services.create(&dry, &probe).await.is_err().then_some(()))
    })
    .await?;
    let set_ports = |ports: &serde_json::Value| {
        let patch = json!({"spec": {"ports": ports}});
        let services = services.clone();
        async move {
            services
                .patch("svc", &PatchParams::default(), &Patch::Merge(patch))
                .await
        }
    };
    let tamper_ports = || set_ports(&tampered);
    tamper_ports().await?;
    wait_for("the refused repair reported", TIMEOUT, || async {
        let isvc = isvcs.get("svc").await?;
        Ok((acceptance_tests::inference::condition(&isvc, "Ready")
            == Some(("False".into(), "ReconcileError".into())))
        .then_some(()))
    })
    .await
    .map_err(context)?;
    let kept = services.get("svc").await?;
    assert_eq!(
        kept.metadata.uid, original.metadata.uid,
        "the running Service is kept"
    );
    cluster.kubectl_ok(&["delete", "-f", policy.path().to_str().unwrap()])?;
    wait_for("the Service repaired", TIMEOUT, || async {
        let live = services.get("svc").await?;
        Ok((ports(&live) == rendered_ports).then_some(()))
    })
    .await
    .map_err(context)?;
    // The re-create is told as a Warning Event on the service, not only in the log.
    let told = wait_for("the Recreated Event", TIMEOUT, || async {
        let events = events(&client, ns.name(), "svc").await?;
        Ok(events.into_iter().find(|(reason, _)| reason == "Recreated"))
    })
    .await
    .map_err(context)?;
    assert!(told.1.contains("Service/svc"), "{}", told.1);
    // Another manager that puts its change back (a GitOps fight) gets the error, not a new Service at every
    // reconcile: a child is re-created at most once per 10 minutes.
    let recreated = services.get("svc").await?;
    tamper_ports().await?;
    let message = wait_for("the second repair refused", TIMEOUT, || async {
        let isvc = isvcs.get("svc").await?;
        let message = acceptance_tests::inference::condition_message(&isvc, "Ready");
        Ok(message
            .contains("another manager keeps changing it")
            .then_some(message))
    })
    .await
    .map_err(context)?;
    assert!(message.contains("Service/svc"), "{message}");
    assert_eq!(
        services.get("svc").await?.metadata.uid,
        recreated.metadata.uid,
        "not re-created twice"
    );
    // The other manager gives up (puts our ports back): the retries end, and the service reconciles again.
    set_ports(&rendered_ports).await?;
    wait_for("the fight over", TIMEOUT, || async {
        let isvc = isvcs.get("svc").await?;
        Ok(
            (acceptance_tests::inference::condition(&isvc, "Ready").map(|c| c.1)
                != Some("ReconcileError".into()))
            .then_some(()),
        )
    })
    .await
    .map_err(context)?;
    // The refused repairs are the only errors of this test.
    let refused_repairs = metric(&operator, "model_fleet_reconcile_errors_total")?;
    assert!(refused_repairs >= 1.0);

    // Deleted, its children collected, then created again with the same spec (so the same generation, labels and
    // annotations): only the new UID tells the two apart.
    isvcs.delete("svc", &DeleteParams::background()).await?;
    wait_for("the service and its children gone", TIMEOUT, || async {
        let gone = isvcs.get_opt("svc").await?.is_none()
            && deployments.get_opt("svc").await?.is_none()
            && services.get_opt("svc").await?.is_none();
        Ok(gone.then_some(()))
    })
    .await
    .map_err(context)?;
    apply(&isvcs, "svc", spec()).await?;
    let second = isvcs.get("svc").await?.metadata.uid.unwrap_or_default();
    assert_ne!(first, second);
    wait_for("the second service's own Deployment", TIMEOUT, || {
        deployment_owned_by(&deployments, "svc", &second)
    })
    .await
    .map_err(context)?;
    wait_for("the second service's status", TIMEOUT, || async {
        let object = isvcs.get("svc").await?;
        Ok(object
            .data
            .pointer("/status/observedGeneration")
            .is_some()
            .then_some(()))
    })
    .await
    .map_err(context)?;
    // Its Service is another object than the one re-created above (a review's finding: the cooldown was keyed by name,
    // and this Service was never repaired): it is re-created too.
    let before = services.get("svc").await?;
    tamper_ports().await?;
    wait_for("the second service's Service repaired", TIMEOUT, || async {
        let live = services.get("svc").await?;
        Ok(
            (live.metadata.uid != before.metadata.uid && ports(&live) == rendered_ports)
                .then_some(()),
        )
    })
    .await
    .map_err(context)?;

    let conflicts = metric(&operator, "model_fleet_reconcile_conflicts_total")?;
    let errors = metric(&operator, "model_fleet_reconcile_errors_total")?;
    assert_eq!(
        (conflicts, errors),
        (0.0, refused_repairs),
        "conflicts and errors\n{}",
        operator.log_tail()
    );
    Ok(())
}
