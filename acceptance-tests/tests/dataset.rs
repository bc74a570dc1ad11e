//! Datasets and the runs that use them against the control plane (issue 5): dataset mounts are
//! read-only and a writable one is refused (case O-07); the allowlist cannot be used as a confused
//! deputy (case O-08); a Dataset's deletion waits for the unfinished run using it, then proceeds;
//! `PVCBound` follows the claim (ClaimNotFound, ClaimPending, Bound), and a run waits, Job-less, for a missing claim;
//! an InferenceService mounts a Dataset's claim only when the allowlist lets it, read-only.
//!
//! One operator process per watched namespace, running as the chart's ClusterRole.

use std::time::Duration;

use acceptance_tests::modelfleet::{
    self, bound_claim, condition, create, reconcile_errors, wait_for_object,
};
use acceptance_tests::{Cluster, OperatorProcess, TestNamespace, wait_for};
use k8s_openapi::api::batch::v1::Job;
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

async fn setup(prefix: &str) -> anyhow::Result<(Cluster, TestNamespace, kube::Client)> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace(prefix).await?;
    let client = cluster.client().await?;
    Ok((cluster, ns, client))
}

fn operator(cluster: &Cluster, ns: &str) -> anyhow::Result<OperatorProcess> {
    OperatorProcess::for_namespace(cluster, ns, &[])
}

fn dataset(name: &str, version: &str, extra: Value) -> Value {
    let mut spec =
        json!({"version": version, "source": {"uri": format!("s3://bucket/{name}/v{version}/")}});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "Dataset", "metadata": {"name": name}, "spec": spec})
}

fn run(name: &str, image: &str, extra: Value) -> Value {
    let mut spec = json!({"container": {"image": image}});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun", "metadata": {"name": name}, "spec": spec})
}

fn has_reason(type_: &'static str, reason: &'static str) -> impl Fn(&Value) -> bool {
    move |object| condition(object, type_)["reason"] == reason
}

/// Asserts that the message of `object`'s condition `type_` starts with `prefix`.
fn assert_message_starts(object: &Value, type_: &str, prefix: &str) {
    let message = condition(object, type_)["message"].clone();
    assert!(
        message.as_str().is_some_and(|m| m.starts_with(prefix)),
        "{type_}: {message}"
    );
}

/// Creates Dataset `corpus` version 3 on claim `data`, allowing `allowed`.
async fn corpus_on_claim(client: &kube::Client, ns: &str, allowed: &[&str]) -> anyhow::Result<()> {
    let spec = json!({"pvc": {"claimName": "data"}, "allowedServiceAccounts": allowed});
    create(client, ns, dataset("corpus", "3", spec)).await?;
    Ok(())
}

async fn jobs(client: &kube::Client, ns: &str) -> anyhow::Result<Vec<Job>> {
    Ok(Api::<Job>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await?
        .items)
}

fn dataset_ref(name: &str) -> Value {
    json!([{"name": name, "version": "3", "mountPath": "/data/corpus"}])
}

// Case O-07: Dataset `corpus` version 3 on a ReadOnlyMany claim: the Job's volume has
// persistentVolumeClaim.readOnly=true and every mount of it readOnly=true; a writable dataset mount
// is refused, on the reference (by the API server) and as a writable volume of the same claim (by
// the operator: no Job).
#[tokio::test]
async fn o07_dataset_mounts_are_read_only() -> anyhow::Result<()> {
    let (cluster, ns, client) = setup("mfds-o07").await?;
    let ns = ns.name();
    let operator = operator(&cluster, ns)?;
    bound_claim(&cluster, ns, "corpus-v3", "ReadOnlyMany")?;
    let allow = json!({"pvc": {"claimName": "corpus-v3"}, "allowedServiceAccounts": ["default"]});
    create(&client, ns, dataset("corpus", "3", allow)).await?;
    create(
        &client,
        ns,
        run(
            "reader",
            "trainer:1",
            json!({"datasets": dataset_ref("corpus"), "initContainers": [{"name": "fetch", "image": "fetch:1"}]}),
        ),
    )
    .await?;
    wait_for_object(
        &client,
        ns,
        "TrainingRun",
        "reader",
        "reader's Job",
        &operator,
        |r| r["status"]["jobName"] == "reader",
    )
    .await?;
    let job = Api::<Job>::namespaced(client.clone(), ns)
        .get("reader")
        .await?;
    let pod = job.spec.unwrap().template.spec.unwrap();
    let volume = pod
        .volumes
        .iter()
        .flatten()
        .find(|v| v.persistent_volume_claim.is_some())
        .expect("the claim is a volume")
        .clone();
    assert_eq!(
        volume.persistent_volume_claim.unwrap().read_only,
        Some(true)
    );
    let mut mounts = 0;
    for container in pod
        .containers
        .iter()
        .chain(pod.init_containers.iter().flatten())
    {
        for mount in container.volume_mounts.iter().flatten() {
            if mount.name == volume.name {
                assert_eq!(mount.read_only, Some(true), "{}: {mount:?}", container.name);
                mounts += 1;
            }
        }
    }
    assert_eq!(mounts, 2, "main and init container mount the dataset");

    // Writable on the reference: refused by the API server, naming the field.
    let mut writable_ref = dataset_ref("corpus");
    writable_ref[0]["readOnly"] = json!(false);
    let refused = create(
        &client,
        ns,
        run("writer", "trainer:1", json!({"datasets": writable_ref})),
    )
    .await
    .expect_err("a writable dataset reference must be refused");
    assert!(format!("{refused:#}").contains("readOnly"), "{refused:#}");

    // Writable as a volume of the same claim: refused by the operator, no Job.
    let volumes = json!([{"name": "raw", "mountPath": "/raw", "persistentVolumeClaim": {"claimName": "corpus-v3"}}]);
    create(
        &client,
        ns,
        run(
            "sneaky",
            "trainer:1",
            json!({"datasets": dataset_ref("corpus"), "volumes": volumes}),
        ),
    )
    .await?;
    let refused = wait_for_object(
        &client,
        ns,
        "TrainingRun",
        "sneaky",
        "sneaky to be refused",
        &operator,
        has_reason("Degraded", "WritableDatasetMount"),
    )
    .await?;
    assert_eq!(refused["status"]["phase"], "Pending", "{refused}");

    // The same claim without referencing the Dataset (a review's finding: it skipped the allowlist and mounted the
    // claim writable): refused, read-only asked or not, no Job.
    let unreferenced = json!([{"name": "raw", "mountPath": "/raw", "readOnly": true,
        "persistentVolumeClaim": {"claimName": "corpus-v3"}}]);
    create(
        &client,
        ns,
        run("bypass", "trainer:1", json!({"volumes": unreferenced})),
    )
    .await?;
    let refused = wait_for_object(
        &client,
        ns,
        "TrainingRun",
        "bypass",
        "bypass to be refused",
        &operator,
        has_reason("DatasetsReady", "AccessDenied"),
    )
    .await?;
    let message = condition(&refused, "DatasetsReady")["message"].clone();
    assert!(
        message
            .as_str()
            .is_some_and(|m| m.contains("holds Dataset corpus") && m.contains("spec.datasets")),
        "{message}"
    );
    let names: Vec<_> = jobs(&client, ns)
        .await?
        .into_iter()
        .filter_map(|j| j.metadata.name)
        .collect();
    assert_eq!(names, vec!["reader".to_owned()]);
    Ok(())
}

// Case O-08: Dataset in team-a allowing [default, trainer]. (1) a run in team-b with account
// `trainer` naming team-a's Dataset: CrossNamespace, no Job; (2) a run in team-a with account
// `intruder` (exists, not listed): AccessDenied, no Job; (3) a run in team-a without an account:
// allowed, checked as `default`.
#[tokio::test]
async fn o08_the_allowlist_is_not_a_confused_deputy() -> anyhow::Result<()> {
    let (cluster, team_a, client) = setup("mfds-o08-a").await?;
    let team_b = cluster.namespace("mfds-o08-b").await?;
    let (a, b) = (team_a.name(), team_b.name());
    let operator_a = operator(&cluster, a)?;
    let operator_b = operator(&cluster, b)?;
    for (ns, account) in [(a, "trainer"), (a, "intruder"), (b, "trainer")] {
        cluster.kubectl_ok(&["create", "serviceaccount", account, "-n", ns])?;
    }
    let allow = json!({"allowedServiceAccounts": ["default", "trainer"]});
    create(&client, a, dataset("corpus", "3", allow)).await?;

    // (1)
    let mut cross = dataset_ref("corpus");
    cross[0]["namespace"] = json!(a);
    create(
        &client,
        b,
        run(
            "borrow",
            "trainer:1",
            json!({"serviceAccountName": "trainer", "datasets": cross}),
        ),
    )
    .await?;
    // (2)
    create(
        &client,
        a,
        run(
            "intrude",
            "trainer:1",
            json!({"serviceAccountName": "intruder", "datasets": dataset_ref("corpus")}),
        ),
    )
    .await?;
    // (3)
    create(
        &client,
        a,
        run(
            "plain",
            "modelfleet.local/sim:never",
            json!({"datasets": dataset_ref("corpus")}),
        ),
    )
    .await?;

    let borrow = wait_for_object(
        &client,
        b,
        "TrainingRun",
        "borrow",
        "borrow to be refused",
        &operator_b,
        has_reason("DatasetsReady", "CrossNamespace"),
    )
    .await?;
    assert_eq!(condition(&borrow, "DatasetsReady")["status"], "False");
    let intrude = wait_for_object(
        &client,
        a,
        "TrainingRun",
        "intrude",
        "intrude to be refused",
        &operator_a,
        has_reason("DatasetsReady", "AccessDenied"),
    )
    .await?;
    assert_eq!(condition(&intrude, "DatasetsReady")["status"], "False");
    let plain = wait_for_object(
        &client,
        a,
        "TrainingRun",
        "plain",
        "plain to get its Job",
        &operator_a,
        |r| r["status"]["jobName"] == "plain",
    )
    .await?;
    assert_eq!(condition(&plain, "DatasetsReady")["status"], "True");
    let names = |list: Vec<Job>| -> Vec<String> {
        list.into_iter().filter_map(|j| j.metadata.name).collect()
    };
    assert_eq!(names(jobs(&client, a).await?), vec!["plain".to_owned()]);
    assert!(names(jobs(&client, b).await?).is_empty());
    Ok(())
}

// A Dataset used by an unfinished run: its deletion waits (finalizer, Ready=False InUse, usedBy),
// then proceeds once the run finishes (here: its deadline passes).
#[tokio::test]
async fn deleting_a_dataset_in_use_waits_for_the_run_to_finish() -> anyhow::Result<()> {
    let (cluster, ns, client) = setup("mfds-delete").await?;
    let ns = ns.name();
    let operator = operator(&cluster, ns)?;
    let allow = json!({"allowedServiceAccounts": ["default"]});
    create(&client, ns, dataset("corpus", "3", allow)).await?;
    create(
        &client,
        ns,
        run(
            "long",
            "modelfleet.local/sim:never",
            json!({"datasets": dataset_ref("corpus"), "deadlineSeconds": 20}),
        ),
    )
    .await?;
    // A run the allowlist refuses never starts, so it does not hold the deletion (a hunt's finding).
    create(
        &client,
        ns,
        run(
            "stranger",
            "modelfleet.local/sim:never",
            json!({"datasets": dataset_ref("corpus"), "serviceAccountName": "intruder"}),
        ),
    )
    .await?;
    let used_by = json!([format!("{ns}/long")]);
    wait_for_object(
        &client,
        ns,
        "Dataset",
        "corpus",
        "the dataset to be in use",
        &operator,
        |d| {
            d["status"]["usedBy"] == used_by
                && d["metadata"]["finalizers"] == json!(["modelfleet.io/dataset-in-use"])
        },
    )
    .await?;

    let datasets = modelfleet::api(&client, ns, "Dataset");
    datasets.delete("corpus", &DeleteParams::default()).await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let held = serde_json::to_value(datasets.get("corpus").await?)?;
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
    wait_for_object(
        &client,
        ns,
        "Dataset",
        "corpus",
        "Ready=False InUse",
        &operator,
        has_reason("Ready", "InUse"),
    )
    .await?;
    // A run created while the Dataset is being deleted is refused: it would hold the deletion for good.
    create(
        &client,
        ns,
        run(
            "late",
            "modelfleet.local/sim:never",
            json!({"datasets": dataset_ref("corpus")}),
        ),
    )
    .await?;
    wait_for_object(
        &client,
        ns,
        "TrainingRun",
        "late",
        "the late run refused",
        &operator,
        |r| {
            condition(r, "DatasetsReady")["reason"] == "DatasetNotFound"
                && condition(r, "DatasetsReady")["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("is being deleted"))
        },
    )
    .await?;
    // Refused, it does not hold the deletion (before its refusal it may, briefly: its Job could have been on its way).
    wait_for_object(
        &client,
        ns,
        "Dataset",
        "corpus",
        "only the started run holding the deletion",
        &operator,
        |d| d["status"]["usedBy"] == used_by,
    )
    .await?;
    assert!(
        jobs(&client, ns).await?.iter().all(|j| j
            .metadata
            .name
            .as_deref()
            .is_some_and(|n| n.starts_with("long"))),
        "no Job for the refused runs"
    );
    // The run keeps running meanwhile.
    let long = serde_json::to_value(
        modelfleet::api(&client, ns, "TrainingRun")
            .get("long")
            .await?,
    )?;
    assert_eq!(long["status"]["phase"], "Running", "{long}");

    wait_for("the dataset to be gone", Duration::from_secs(60), || {
        let datasets = datasets.clone();
        async move { Ok(datasets.get_opt("corpus").await?.is_none().then_some(())) }
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    // The hold and its release are two Events, each with its own note (a review's finding: kube's recorder folded the
    // release into the hold's series, which kept saying "in use by").
    let in_use: Vec<String> = modelfleet::events(&client, ns, "corpus")
        .await?
        .into_iter()
        .filter(|(reason, _)| reason == "InUse")
        .map(|(_, note)| note)
        .collect();
    assert!(
        in_use.iter().any(|n| n.starts_with("in use by"))
            && in_use.iter().any(|n| n.contains("no longer held")),
        "{in_use:?}"
    );
    let long = serde_json::to_value(
        modelfleet::api(&client, ns, "TrainingRun")
            .get("long")
            .await?,
    )?;
    assert_eq!(long["status"]["phase"], "Failed", "{long}");
    assert_eq!(long["status"]["reason"], "DeadlineExceeded", "{long}");

    // A Dataset nobody uses goes at once, and never gets the finalizer.
    create(&client, ns, dataset("unused", "1", json!({}))).await?;
    wait_for_object(
        &client,
        ns,
        "Dataset",
        "unused",
        "unused to be Ready",
        &operator,
        has_reason("Ready", "AsExpected"),
    )
    .await?;
    datasets.delete("unused", &DeleteParams::default()).await?;
    wait_for("unused to be gone", Duration::from_secs(10), || {
        let datasets = datasets.clone();
        async move { Ok(datasets.get_opt("unused").await?.is_none().then_some(())) }
    })
    .await?;
    assert_eq!(reconcile_errors(&operator, "Dataset")?, 0.0);
    Ok(())
}

// PVCBound follows the claim: ClaimNotFound, then ClaimPending (no volume yet), then Bound.
#[tokio::test]
async fn pvc_bound_follows_the_claim() -> anyhow::Result<()> {
    let (cluster, ns, client) = setup("mfds-pvc").await?;
    let ns = ns.name();
    let operator = operator(&cluster, ns)?;
    corpus_on_claim(&client, ns, &["default"]).await?;
    let missing = wait_for_object(
        &client,
        ns,
        "Dataset",
        "corpus",
        "ClaimNotFound",
        &operator,
        has_reason("PVCBound", "ClaimNotFound"),
    )
    .await?;
    assert_eq!(condition(&missing, "Ready")["status"], "False");
    // A run of a Dataset whose claim is missing gets no Job (it would wait Pending and use up its deadline) ...
    create(
        &client,
        ns,
        run(
            "early",
            "modelfleet.local/sim:never",
            json!({"datasets": dataset_ref("corpus")}),
        ),
    )
    .await?;
    let refused = wait_for_object(
        &client,
        ns,
        "TrainingRun",
        "early",
        "the run refused for the missing claim",
        &operator,
        has_reason("DatasetsReady", "ClaimNotFound"),
    )
    .await?;
    assert_message_starts(
        &refused,
        "DatasetsReady",
        "spec.datasets[0].name: the claim \"data\" of Dataset corpus does not exist",
    );
    assert_eq!(condition(&refused, "Ready")["reason"], "ClaimNotFound");
    assert!(
        jobs(&client, ns).await?.is_empty(),
        "no Job while the claim is missing"
    );

    let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": ns},
        "spec": {"accessModes": ["ReadOnlyMany"], "storageClassName": "",
                 "resources": {"requests": {"storage": "1Gi"}}}});
    Api::<k8s_openapi::api::core::v1::PersistentVolumeClaim>::namespaced(client.clone(), ns)
        .patch(
            "data",
            &PatchParams::apply("acceptance-tests"),
            &Patch::Apply(&claim),
        )
        .await?;
    wait_for_object(
        &client,
        ns,
        "Dataset",
        "corpus",
        "ClaimPending",
        &operator,
        has_reason("PVCBound", "ClaimPending"),
    )
    .await?;
    // ... and starts by itself once the claim exists: a Pending claim (WaitForFirstConsumer binds only for a pod)
    // refuses nothing, and the Dataset's status change reconciles the run.
    let started = wait_for_object(
        &client,
        ns,
        "TrainingRun",
        "early",
        "the run started once the claim exists",
        &operator,
        |run| run["status"]["jobName"].is_string(),
    )
    .await?;
    assert_eq!(condition(&started, "DatasetsReady")["status"], "True");
    assert_eq!(jobs(&client, ns).await?.len(), 1);

    // A volume reserved for the claim: the PV controller binds them.
    let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": format!("{ns}-data"), "labels": {"modelfleet.io/test": "true"}},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadOnlyMany"],
                 "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "",
                 "hostPath": {"path": format!("/tmp/{ns}-data")},
                 "claimRef": {"namespace": ns, "name": "data"}}});
    Api::<k8s_openapi::api::core::v1::PersistentVolume>::all(client.clone())
        .patch(
            &format!("{ns}-data"),
            &PatchParams::apply("acceptance-tests"),
            &Patch::Apply(&pv),
        )
        .await?;
    let bound = wait_for_object(
        &client,
        ns,
        "Dataset",
        "corpus",
        "Bound",
        &operator,
        has_reason("PVCBound", "Bound"),
    )
    .await?;
    assert_eq!(condition(&bound, "PVCBound")["status"], "True");
    assert_eq!(condition(&bound, "Ready")["status"], "True");
    assert_eq!(
        bound["status"]["observedGeneration"],
        bound["metadata"]["generation"]
    );
    Ok(())
}

/// An InferenceService has no `spec.datasets`: its plain volume of a Dataset's claim is checked against the
/// Dataset's allowlist (nothing applied while refused), and the service is reconciled again when the allowlist
/// changes (the Dataset watch of the InferenceService controller).
#[tokio::test]
async fn a_service_mounts_a_dataset_claim_only_when_the_allowlist_lets_it() -> anyhow::Result<()> {
    let (cluster, ns, client) = setup("mfds-isvc").await?;
    let ns = ns.name();
    let operator = operator(&cluster, ns)?;
    corpus_on_claim(&client, ns, &["trainer"]).await?;
    create(
        &client,
        ns,
        json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
            "metadata": {"name": "reader"},
            "spec": {"model": {"name": "m"}, "container": {"image": "modelfleet.local/sim:never"},
                "volumes": [{"name": "corpus", "mountPath": "/corpus", "readOnly": true,
                    "persistentVolumeClaim": {"claimName": "data"}}]}}),
    )
    .await?;
    let refused = wait_for_object(
        &client,
        ns,
        "InferenceService",
        "reader",
        "the service refused by the allowlist",
        &operator,
        has_reason("Ready", "AccessDenied"),
    )
    .await?;
    assert_message_starts(
        &refused,
        "Ready",
        "spec.volumes[0].persistentVolumeClaim.claimName: claim \"data\" holds Dataset corpus and \
         ServiceAccount \"default\"",
    );
    assert_eq!(condition(&refused, "Degraded")["status"], "True");
    let deployments = Api::<k8s_openapi::api::apps::v1::Deployment>::namespaced(client.clone(), ns);
    assert!(
        deployments.get_opt("reader").await?.is_none(),
        "nothing applied while refused"
    );

    let allow = json!({"spec": {"allowedServiceAccounts": ["trainer", "default"]}});
    modelfleet::api(&client, ns, "Dataset")
        .patch("corpus", &PatchParams::default(), &Patch::Merge(&allow))
        .await?;
    wait_for(
        "the service's Deployment once the allowlist lets it",
        modelfleet::OBJECT_TIMEOUT,
        || {
            let deployments = deployments.clone();
            async move { Ok(deployments.get_opt("reader").await?) }
        },
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    Ok(())
}
