//! The TrainingRun controller against the control plane with simulated nodes (issue 5): the PyTorch
//! example runs to Succeeded on the 80gi node with its Dataset mounted read-only; pods failing past
//! `retries` end BackoffLimitExceeded; a run past `deadlineSeconds` ends DeadlineExceeded; a Job
//! template is never touched again (case O-05); suspend, resume and cancel toggle only the Job's
//! `suspend` through its own field manager (case O-06); a run no node can place says `Unschedulable`
//! and one whose pods a GPU quota refuses says `run stalled: the Job cannot create pods`, until the
//! quota allows its pod; a run a pod quota cuts short is `Degraded=True, PodsRefused` until its pods exist.
//!
//! One operator process per test, watching only the test's namespace, running as the chart's
//! ClusterRole. Pod outcomes come from the kwok Stages: `modelfleet.local/sim:fail` fails,
//! `modelfleet.local/sim:never` runs until deleted, other images succeed after ~3 s.

use std::time::Duration;

use acceptance_tests::modelfleet::{self, bound_claim, create, example, reconcile_errors};
use acceptance_tests::namespace::resource_quota;
use acceptance_tests::process::OPERATOR_USER;
use acceptance_tests::{Cluster, OperatorProcess, TestNamespace, wait_for};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, ResourceQuota, Service};
use kube::Api;
use kube::api::{DynamicObject, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

/// A test namespace with the CRDs installed, an admin client and an operator watching it.
async fn setup(
    prefix: &str,
) -> anyhow::Result<(Cluster, TestNamespace, kube::Client, OperatorProcess)> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace(prefix).await?;
    let client = cluster.client().await?;
    let operator = start_operator(&cluster, ns.name(), &[])?;
    Ok((cluster, ns, client, operator))
}

fn start_operator(cluster: &Cluster, ns: &str, extra: &[&str]) -> anyhow::Result<OperatorProcess> {
    OperatorProcess::for_namespace(cluster, ns, extra)
}

/// A TrainingRun manifest with a CPU-only container of `image` and `extra` spec fields.
fn run_manifest(name: &str, image: &str, extra: Value) -> Value {
    let mut spec = json!({"container": {"image": image}});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun",
        "metadata": {"name": name}, "spec": spec,
    })
}

/// The run's status once `accept` holds for it.
async fn wait_for_run(
    client: &kube::Client,
    ns: &str,
    name: &str,
    what: &str,
    timeout: Duration,
    operator: &OperatorProcess,
    accept: impl Fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    let runs = modelfleet::api(client, ns, "TrainingRun");
    wait_for(what, timeout, || {
        let runs = runs.clone();
        let accept = &accept;
        async move {
            let run = runs.get(name).await?;
            let status = run.data.get("status").cloned().unwrap_or(Value::Null);
            Ok(accept(&status).then_some(status))
        }
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))
}

fn phase_is(phase: &'static str) -> impl Fn(&Value) -> bool {
    move |status| status["phase"] == phase
}

async fn job(client: &kube::Client, ns: &str, name: &str) -> anyhow::Result<Job> {
    Ok(Api::<Job>::namespaced(client.clone(), ns).get(name).await?)
}

async fn job_pods(client: &kube::Client, ns: &str, job: &str) -> anyhow::Result<Vec<Pod>> {
    let selector = format!("batch.kubernetes.io/job-name={job}");
    Ok(Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&selector))
        .await?
        .items)
}

async fn patch_spec(
    client: &kube::Client,
    ns: &str,
    name: &str,
    spec: Value,
) -> kube::Result<DynamicObject> {
    modelfleet::api(client, ns, "TrainingRun")
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": spec})),
        )
        .await
}

fn env_of(job: &Job, name: &str) -> Option<String> {
    job.spec
        .as_ref()?
        .template
        .spec
        .as_ref()?
        .containers
        .first()?
        .env
        .iter()
        .flatten()
        .find(|e| e.name == name)
        .and_then(|e| e.value.clone())
}

// examples/training-pytorch.yaml with examples/dataset-corpus.yaml: Succeeded on the 80gi node, the
// Dataset's claim mounted read-only, MODEL_FLEET_DATASETS_JSON present and correct (case O-07 too).
#[tokio::test]
async fn pytorch_example_succeeds_on_the_80gi_node_with_its_dataset_read_only() -> anyhow::Result<()>
{
    let (cluster, ns, client, operator) = setup("trun-pytorch").await?;
    let ns = ns.name();
    cluster.kubectl_ok(&["create", "serviceaccount", "trainer", "-n", ns])?;
    bound_claim(&cluster, ns, "corpus-v3", "ReadOnlyMany")?;
    bound_claim(&cluster, ns, "ft-1-checkpoints", "ReadWriteOnce")?;
    for doc in example("dataset-corpus.yaml", ns)? {
        create(&client, ns, doc).await?;
    }
    for doc in example("training-pytorch.yaml", ns)? {
        create(&client, ns, doc).await?;
    }

    let status = wait_for_run(
        &client,
        ns,
        "ft-1",
        "ft-1 to succeed",
        Duration::from_secs(120),
        &operator,
        phase_is("Succeeded"),
    )
    .await?;
    assert_eq!(status["jobName"], "ft-1", "{status}");
    assert_eq!(status["succeeded"], 2, "{status}");
    assert_eq!(status["capacityClass"], "40gi", "{status}");
    assert!(status["startTime"].is_string() && status["completionTime"].is_string());

    let job = job(&client, ns, "ft-1").await?;
    let pods = job_pods(&client, ns, "ft-1").await?;
    assert_eq!(pods.len(), 2);
    for pod in &pods {
        let node = pod.spec.as_ref().and_then(|s| s.node_name.as_deref());
        assert_eq!(node, Some("kwok-gpu-80gi"));
    }
    let pod = job.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
    let volume = pod
        .volumes
        .iter()
        .flatten()
        .find(|v| {
            v.persistent_volume_claim
                .as_ref()
                .is_some_and(|c| c.claim_name == "corpus-v3")
        })
        .expect("the dataset's claim is a volume");
    assert_eq!(
        volume.persistent_volume_claim.as_ref().unwrap().read_only,
        Some(true)
    );
    let containers = pod
        .containers
        .iter()
        .chain(pod.init_containers.iter().flatten());
    for container in containers {
        for mount in container.volume_mounts.iter().flatten() {
            if mount.name == volume.name {
                assert_eq!(mount.read_only, Some(true), "{mount:?}");
                assert_eq!(mount.mount_path, "/data/corpus");
            }
        }
    }
    let datasets: Value = serde_json::from_str(
        &env_of(&job, "MODEL_FLEET_DATASETS_JSON").expect("MODEL_FLEET_DATASETS_JSON is set"),
    )?;
    assert_eq!(
        datasets,
        json!([{
            "name": "corpus", "version": "3", "uri": "s3://example-ml-data/corpus/v3/",
            "mountPath": "/data/corpus",
            "splits": {
                "train": {"uri": "s3://example-ml-data/corpus/v3/train/", "records": 1200000},
                "validation": {"uri": "s3://example-ml-data/corpus/v3/validation/", "records": 12000}
            }
        }])
    );
    // Indexed with two pods: the headless Service for rendezvous exists.
    let service = Api::<Service>::namespaced(client.clone(), ns)
        .get("ft-1")
        .await?;
    assert_eq!(
        service.spec.and_then(|s| s.cluster_ip).as_deref(),
        Some("None")
    );
    assert_eq!(reconcile_errors(&operator, "TrainingRun")?, 0.0);
    Ok(())
}

// Pods failing past `retries` end Failed with the Job's reason BackoffLimitExceeded.
#[tokio::test]
async fn pods_failing_past_retries_end_backoff_limit_exceeded() -> anyhow::Result<()> {
    let (_cluster, ns, client, operator) = setup("trun-backoff").await?;
    let ns = ns.name();
    let manifest = run_manifest("flaky", "modelfleet.local/sim:fail", json!({"retries": 1}));
    create(&client, ns, manifest).await?;
    let status = wait_for_run(
        &client,
        ns,
        "flaky",
        "flaky to fail",
        Duration::from_secs(120),
        &operator,
        phase_is("Failed"),
    )
    .await?;
    assert_eq!(status["reason"], "BackoffLimitExceeded", "{status}");
    let job = job(&client, ns, "flaky").await?;
    assert_eq!(job.spec.and_then(|s| s.backoff_limit), Some(1));
    Ok(())
}

// A run still going at `deadlineSeconds` ends Failed with DeadlineExceeded, nothing else happening.
#[tokio::test]
async fn a_run_past_its_deadline_ends_deadline_exceeded() -> anyhow::Result<()> {
    let (_cluster, ns, client, operator) = setup("trun-deadline").await?;
    let ns = ns.name();
    let manifest = run_manifest(
        "slow",
        "modelfleet.local/sim:never",
        json!({"deadlineSeconds": 5}),
    );
    create(&client, ns, manifest).await?;
    let status = wait_for_run(
        &client,
        ns,
        "slow",
        "slow to hit its deadline",
        Duration::from_secs(90),
        &operator,
        phase_is("Failed"),
    )
    .await?;
    assert_eq!(status["reason"], "DeadlineExceeded", "{status}");
    assert!(status["completionTime"].is_string(), "{status}");
    Ok(())
}

// Case O-05: (a) an edit of the image is refused with 422 naming the field, the Job is untouched
// and no reconcile error is counted; (b) after a restart with a changed built-in default, the
// existing Job is not updated and a new run gets the new default.
#[tokio::test]
async fn o05_job_template_is_never_touched_again() -> anyhow::Result<()> {
    let (cluster, ns, client, mut operator) = setup("trun-o05").await?;
    let ns = ns.name();
    create(
        &client,
        ns,
        run_manifest("ft-1", "modelfleet.local/sim:never", json!({})),
    )
    .await?;
    wait_for_run(
        &client,
        ns,
        "ft-1",
        "ft-1 to run",
        Duration::from_secs(60),
        &operator,
        phase_is("Running"),
    )
    .await?;
    let before = job(&client, ns, "ft-1").await?;

    // (a)
    let refused = patch_spec(
        &client,
        ns,
        "ft-1",
        json!({"container": {"image": "modelfleet.local/sim:other"}}),
    )
    .await
    .expect_err("an image change must be refused");
    match &refused {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 422, "{status:?}");
            assert!(status.message.contains("spec.container"), "{status:?}");
        }
        other => panic!("expected a 422, got {other:?}"),
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = job(&client, ns, "ft-1").await?;
    assert_eq!(after.metadata.uid, before.metadata.uid);
    assert_eq!(after.metadata.generation, before.metadata.generation);
    assert_eq!(after.spec, before.spec);
    assert_eq!(reconcile_errors(&operator, "TrainingRun")?, 0.0);

    // (b)
    operator.terminate(Duration::from_secs(20))?;
    let mark = cluster.audit_log().mark()?;
    let operator = start_operator(
        &cluster,
        ns,
        &["--test-training-default-env", "MODEL_FLEET_TEST_DEFAULT=v2"],
    )?;
    create(
        &client,
        ns,
        run_manifest("ft-2", "modelfleet.local/sim:never", json!({})),
    )
    .await?;
    wait_for_run(
        &client,
        ns,
        "ft-2",
        "ft-2 to run",
        Duration::from_secs(60),
        &operator,
        phase_is("Running"),
    )
    .await?;
    // Let the restarted operator resync ft-1 a few times (--resync-seconds 5).
    tokio::time::sleep(Duration::from_secs(7)).await;
    let new_job = job(&client, ns, "ft-2").await?;
    assert_eq!(
        env_of(&new_job, "MODEL_FLEET_TEST_DEFAULT").as_deref(),
        Some("v2")
    );
    let old_job = job(&client, ns, "ft-1").await?;
    assert_eq!(env_of(&old_job, "MODEL_FLEET_TEST_DEFAULT"), None);
    assert_eq!(old_job.metadata.generation, before.metadata.generation);
    assert_eq!(old_job.spec, before.spec);
    // The audit log is shared by every test running in parallel: only this namespace's ft-1 counts.
    let ft1_uri = format!("/namespaces/{ns}/jobs/ft-1");
    let job_writes: Vec<_> = mark
        .writes_by(OPERATOR_USER)?
        .into_iter()
        .filter(|e| e.request_u_r_i.contains(&ft1_uri))
        .collect();
    assert!(job_writes.is_empty(), "{job_writes:?}");
    assert_eq!(reconcile_errors(&operator, "TrainingRun")?, 0.0);
    Ok(())
}

fn suspend_manager(job: &Job) -> Vec<String> {
    job.metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|m| {
            m.fields_v1
                .as_ref()
                .and_then(|f| f.0.pointer("/f:spec/f:suspend"))
                .is_some()
        })
        .filter_map(|m| m.manager.clone())
        .collect()
}

// Case O-06 (and cancel): with ttlSecondsAfterFinished 60, suspend stops the pods and keeps the Job
// (suspend=true, phase Suspended); resume sets suspend=false and the phase is Running again once a
// pod is ready; cancel is terminal: Job suspended and kept, phase Cancelled. Only the suspend field
// manager touches `spec.suspend`.
#[tokio::test]
async fn o06_suspend_resume_and_cancel_with_a_ttl() -> anyhow::Result<()> {
    let (_cluster, ns, client, operator) = setup("trun-o06").await?;
    let ns = ns.name();
    let manifest = run_manifest(
        "ft-1",
        "modelfleet.local/sim:never",
        json!({"ttlSecondsAfterFinished": 60}),
    );
    create(&client, ns, manifest).await?;
    let wait = |what: &'static str, phase: &'static str| {
        wait_for_run(
            &client,
            ns,
            "ft-1",
            what,
            Duration::from_secs(60),
            &operator,
            phase_is(phase),
        )
    };
    wait("ft-1 to run", "Running").await?;
    let created = job(&client, ns, "ft-1").await?;

    patch_spec(&client, ns, "ft-1", json!({"intent": "suspended"})).await?;
    wait("ft-1 to be suspended", "Suspended").await?;
    let suspended = job(&client, ns, "ft-1").await?;
    assert_eq!(suspended.metadata.uid, created.metadata.uid, "Job kept");
    assert_eq!(suspended.spec.as_ref().unwrap().suspend, Some(true));
    assert_eq!(
        suspend_manager(&suspended),
        vec!["model-fleet-operator-suspend"]
    );
    wait_for("the pods to be gone", Duration::from_secs(30), || async {
        Ok(job_pods(&client, ns, "ft-1")
            .await?
            .is_empty()
            .then_some(()))
    })
    .await?;

    patch_spec(&client, ns, "ft-1", json!({"intent": "active"})).await?;
    let status = wait("ft-1 to run again", "Running").await?;
    assert!(status["ready"].as_i64() > Some(0), "{status}");
    let resumed = job(&client, ns, "ft-1").await?;
    assert_eq!(resumed.metadata.uid, created.metadata.uid, "Job kept");
    assert_eq!(resumed.spec.as_ref().unwrap().suspend, Some(false));
    assert_eq!(
        resumed.spec.as_ref().unwrap().template,
        created.spec.as_ref().unwrap().template
    );

    patch_spec(&client, ns, "ft-1", json!({"cancel": true})).await?;
    let status = wait("ft-1 to be cancelled", "Cancelled").await?;
    let cancelled = job(&client, ns, "ft-1").await?;
    assert_eq!(cancelled.metadata.uid, created.metadata.uid, "Job kept");
    assert_eq!(cancelled.spec.as_ref().unwrap().suspend, Some(true));
    assert_eq!(status["jobName"], "ft-1");
    assert_eq!(reconcile_errors(&operator, "TrainingRun")?, 0.0);
    Ok(())
}

// DESIGN.md section 5: once a run and its Dataset are settled, resyncs (every 5 s here) cost zero
// writes (lease renewals aside).
#[tokio::test]
async fn settled_runs_and_datasets_cost_zero_writes() -> anyhow::Result<()> {
    let (cluster, ns, client, operator) = setup("trun-zero").await?;
    let ns = ns.name();
    create(
        &client,
        ns,
        json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "Dataset", "metadata": {"name": "corpus"},
               "spec": {"version": "3", "source": {"uri": "s3://b/corpus/"}, "allowedServiceAccounts": ["default"]}}),
    )
    .await?;
    let refs = json!([{"name": "corpus", "version": "3", "mountPath": "/data"}]);
    create(
        &client,
        ns,
        run_manifest(
            "steady",
            "modelfleet.local/sim:never",
            json!({"datasets": refs}),
        ),
    )
    .await?;
    wait_for_run(
        &client,
        ns,
        "steady",
        "steady to run",
        Duration::from_secs(60),
        &operator,
        phase_is("Running"),
    )
    .await?;
    let datasets = modelfleet::api(&client, ns, "Dataset");
    let used_by = json!([format!("{ns}/steady")]);
    wait_for(
        "the dataset to list its user",
        Duration::from_secs(30),
        || {
            let datasets = datasets.clone();
            let used_by = used_by.clone();
            async move {
                let d = datasets.get("corpus").await?;
                Ok((d.data["status"]["usedBy"] == used_by).then_some(()))
            }
        },
    )
    .await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mark = cluster.audit_log().mark()?;
    tokio::time::sleep(Duration::from_secs(12)).await;
    let scope = format!("/namespaces/{ns}/");
    let writes: Vec<_> = mark
        .writes_by(OPERATOR_USER)?
        .into_iter()
        .filter(|e| e.request_u_r_i.contains(&scope) && !e.request_u_r_i.contains("/leases/"))
        .map(|e| format!("{} {}", e.verb, e.request_u_r_i))
        .collect();
    assert!(writes.is_empty(), "{writes:#?}");
    assert_eq!(reconcile_errors(&operator, "TrainingRun")?, 0.0);
    Ok(())
}

/// The `Ready` condition of run `name` once `accept` holds for its message.
async fn wait_ready_message(
    client: &kube::Client,
    ns: &str,
    name: &str,
    operator: &OperatorProcess,
    accept: impl Fn(&str) -> bool,
) -> anyhow::Result<modelfleet::Ready> {
    modelfleet::wait_for_ready_message(client, ns, "TrainingRun", name, operator, accept).await
}

// A run whose fit budget only a 141gi card meets (no simulated node has one) waits Pending with
// `Ready=False, Unschedulable` and the scheduler's own message, as an InferenceService does.
#[tokio::test]
async fn a_run_no_node_can_place_says_unschedulable() -> anyhow::Result<()> {
    let (_cluster, ns, client, operator) = setup("trun-unplaced").await?;
    let ns = ns.name();
    let gpu = json!({"gpu": {"count": 1, "fit": {"modules": [
        {"name": "weights", "weightsGiB": 110, "kvCacheGiB": 8, "placement": "sharded"}]}}});
    create(
        &client,
        ns,
        run_manifest("huge", "modelfleet.local/sim:never", gpu),
    )
    .await?;
    let ready = wait_ready_message(&client, ns, "huge", &operator, |m| {
        m.contains("nodes are available")
    })
    .await?;
    assert_eq!(
        ready.state,
        ("False".to_owned(), "Unschedulable".to_owned())
    );
    assert_eq!(ready.object["status"]["phase"], "Pending");
    assert!(
        ready.message.starts_with("0/"),
        "the scheduler's message: {}",
        ready.message
    );
    Ok(())
}

// A namespace's quota on `requests.nvidia.com/gpu` refuses the Job's pods: the Job controller writes
// that only in `FailedCreate` Events, and `Ready` gives the API server's reason (the same at every
// retry: no pod name). Once the quota allows the pod, the refusal goes: the pod exists, and `Ready`
// says what holds it now (no simulated node has the 141gi card its budget needs: Unschedulable).
#[tokio::test]
async fn a_run_a_gpu_quota_refuses_says_so_until_the_quota_allows_its_pod() -> anyhow::Result<()> {
    let (_cluster, ns, client, operator) = setup("trun-quota").await?;
    let ns = ns.name();
    resource_quota(&client, ns, "gpus", ("requests.nvidia.com/gpu", "0")).await?;
    let gpu = json!({"gpu": {"count": 1, "fit": {"modules": [
        {"name": "weights", "weightsGiB": 110, "kvCacheGiB": 8, "placement": "sharded"}]}}});
    create(
        &client,
        ns,
        run_manifest("capped", "modelfleet.local/sim:never", gpu),
    )
    .await?;
    let ready = wait_ready_message(&client, ns, "capped", &operator, |m| {
        m.starts_with("run stalled")
    })
    .await?;
    assert_eq!(ready.state, ("False".to_owned(), "Progressing".to_owned()));
    assert_eq!(ready.object["status"]["phase"], "Pending");
    let message = &ready.message;
    assert!(
        message.starts_with("run stalled: the Job cannot create pods: exceeded quota: gpus, ")
            && !message.contains("capped-"),
        "{message}"
    );

    Api::<ResourceQuota>::namespaced(client.clone(), ns)
        .patch(
            "gpus",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"hard": {"requests.nvidia.com/gpu": "8"}}})),
        )
        .await?;
    let ready = wait_ready_message(&client, ns, "capped", &operator, |m| {
        !m.starts_with("run stalled")
    })
    .await?;
    assert_eq!(
        ready.state,
        ("False".to_owned(), "Unschedulable".to_owned())
    );
    assert_eq!(ready.object["status"]["phase"], "Pending");
    assert_eq!(reconcile_errors(&operator, "TrainingRun")?, 0.0);
    Ok(())
}

// A run of two pods in a namespace whose quota allows one: the first pod runs (phase Running, `Ready` True), the
// second is refused, and `Degraded=True, PodsRefused` says how many are missing and why, with a Warning Event.
// Raising the quota lets the Job controller create the second pod, and `Degraded` clears.
#[tokio::test]
async fn a_run_a_pod_quota_cuts_short_is_degraded_until_its_pods_exist() -> anyhow::Result<()> {
    let (_cluster, ns, client, operator) = setup("trun-partial").await?;
    let ns = ns.name();
    resource_quota(&client, ns, "pods", ("pods", "1")).await?;
    let pair = json!({"parallelism": 2, "completions": 2});
    create(
        &client,
        ns,
        run_manifest("pair", "modelfleet.local/sim:never", pair),
    )
    .await?;
    let degraded = |object: &Value| modelfleet::condition(object, "Degraded");
    let run = modelfleet::wait_for_object(
        &client,
        ns,
        "TrainingRun",
        "pair",
        "the run to run and say its other pod is refused",
        &operator,
        |run| degraded(run)["reason"] == "PodsRefused" && run["status"]["phase"] == "Running",
    )
    .await?;
    let message = degraded(&run)["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(degraded(&run)["status"], "True");
    assert!(
        message.starts_with("the Job cannot create 1 of its 2 pods: exceeded quota: pods, ")
            && !message.contains("pair-"),
        "{message}"
    );
    assert_eq!(modelfleet::condition(&run, "Ready")["status"], "True");
    // The Warning Event is posted right after the status write that first said PodsRefused. Its count of missing
    // pods may be an earlier one (read while the Job's status still counted no pod: "2 of its 2", as a CI run saw),
    // since the Event is posted once per new reason; the API server's reason is the same.
    let refusal = |text: &str| text.split_once(": ").map(|(_, why)| why.to_owned());
    let why = refusal(&message);
    wait_for("the PodsRefused Event", Duration::from_secs(30), || async {
        let events = modelfleet::events(&client, ns, "pair").await?;
        let warned = |(reason, note): &(String, String)| {
            reason == "PodsRefused"
                && note.starts_with("the Job cannot create ")
                && refusal(note) == why
        };
        Ok(events.iter().any(warned).then_some(()))
    })
    .await?;

    Api::<ResourceQuota>::namespaced(client.clone(), ns)
        .patch(
            "pods",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"hard": {"pods": "2"}}})),
        )
        .await?;
    let run = modelfleet::wait_for_object(
        &client,
        ns,
        "TrainingRun",
        "pair",
        "both pods and Degraded cleared",
        &operator,
        |run| run["status"]["active"] == 2 && degraded(run)["status"] == "False",
    )
    .await?;
    assert_eq!(degraded(&run)["reason"], "AsExpected");
    assert_eq!(reconcile_errors(&operator, "TrainingRun")?, 0.0);
    Ok(())
}
