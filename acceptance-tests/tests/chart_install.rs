//! `helm install` of `charts/model-fleet-operator` into the local control plane (issue 15), with
//! the image `make image` builds (`images/operator.sh`) served by the real node's registry: the
//! operator pod runs a real container on `real-1`, becomes Ready (the kubelet calls its probes),
//! takes the Lease and reconciles the examples; `helm upgrade` to 2 replicas keeps one writer and
//! fails over when the leader goes; `helm uninstall` leaves the custom resources, their children
//! and the Dataset in-use finalizer as documented in the chart README, and a reinstall picks them
//! up again.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use acceptance_tests::chart::{CHART, Helm, local_values, workspace_version};
use acceptance_tests::inference::{condition, observed_current_generation};
use acceptance_tests::modelfleet::{api, create, example};
use acceptance_tests::process::target_dir;
use acceptance_tests::real_node::NODE_NAME;
use acceptance_tests::{Cluster, wait_for};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(120);

/// `images/operator.sh ARGS` with the tests' Cargo target folder.
fn operator_image(args: &[&str]) -> anyhow::Result<()> {
    // The tests of this file share one tarball: one build or load at a time.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let root = acceptance_tests::cluster::repo_root();
    let out = Command::new("bash")
        .arg(root.join("images/operator.sh"))
        .args(args)
        .env("CARGO_TARGET_DIR", target_dir())
        .current_dir(&root)
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "images/operator.sh {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

struct Install {
    helm: Helm,
    release: String,
    ns: String,
    version: String,
}

impl Install {
    fn fullname(&self) -> String {
        self.release.clone()
    }

    /// `helm upgrade --install` with the local values and `extra` `--set`s, waiting for the rollout.
    fn upgrade(&self, extra: &[&str]) -> anyhow::Result<String> {
        let values = local_values(&self.version, &self.ns);
        let mut args = vec![
            "upgrade",
            "--install",
            &self.release,
            CHART,
            "--namespace",
            &self.ns,
            "--set",
            "profile=kind",
            "--wait",
            "--timeout",
            "180s",
        ];
        args.extend(values.iter().map(String::as_str));
        args.extend(extra);
        self.helm.ok(&args)
    }

    fn uninstall(&self) -> anyhow::Result<String> {
        self.helm.ok(&[
            "uninstall",
            &self.release,
            "--namespace",
            &self.ns,
            "--wait",
        ])
    }
}

async fn ready_operator_pods(
    client: &kube::Client,
    install: &Install,
    count: usize,
) -> anyhow::Result<Vec<Pod>> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), &install.ns);
    let selector = format!("app.kubernetes.io/instance={}", install.release);
    wait_for(&format!("{count} Ready operator pod(s)"), TIMEOUT, || {
        let (pods, selector) = (pods.clone(), selector.clone());
        async move {
            let list = pods.list(&ListParams::default().labels(&selector)).await?;
            let ready: Vec<Pod> = list
                .items
                .into_iter()
                .filter(|p| p.metadata.deletion_timestamp.is_none())
                .filter(|p| {
                    p.status
                        .as_ref()
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
                })
                .collect();
            Ok((ready.len() == count).then_some(ready))
        }
    })
    .await
}

async fn lease_holder(
    client: &kube::Client,
    install: &Install,
    not: Option<&str>,
) -> anyhow::Result<String> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), &install.ns);
    let name = install.fullname();
    wait_for("the Lease to name a holder", TIMEOUT, || {
        let (leases, name) = (leases.clone(), name.clone());
        async move {
            let holder = leases
                .get_opt(&name)
                .await?
                .and_then(|l| l.spec?.holder_identity)
                .filter(|h| !h.is_empty() && Some(h.as_str()) != not);
            Ok(holder)
        }
    })
    .await
}

/// Waits until `kind/name` has been reconciled for its current generation with condition
/// `type_` = `status`.
async fn wait_condition(
    client: &kube::Client,
    ns: &str,
    kind: &str,
    name: &str,
    type_: &str,
    status: &str,
) -> anyhow::Result<Value> {
    let objects = api(client, ns, kind);
    wait_for(&format!("{kind}/{name} {type_}={status}"), TIMEOUT, || {
        let objects = objects.clone();
        async move {
            let o = objects.get(name).await?;
            let ok = observed_current_generation(&o)
                && condition(&o, type_).is_some_and(|(s, _)| s == status);
            Ok(ok.then(|| serde_json::to_value(&o).unwrap_or_default()))
        }
    })
    .await
}

/// Pod names whose ServiceAccount token wrote anything but the Lease since `mark`.
fn writers(
    mark: &acceptance_tests::audit::AuditMark,
    install: &Install,
) -> anyhow::Result<BTreeSet<String>> {
    let user = format!(
        "system:serviceaccount:{}:{}",
        install.ns,
        install.fullname()
    );
    Ok(mark
        .writes_by(&user)?
        .into_iter()
        .filter(|e| !e.request_u_r_i.contains("/leases"))
        .filter_map(|e| e.user.pod_name().map(str::to_owned))
        .collect())
}

#[tokio::test]
async fn helm_install_runs_the_operator_on_the_real_node_and_upgrade_uninstall_reinstall_work()
-> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    if cluster.real_node()?.is_none() {
        eprintln!(
            "no real node: the chart install is checked by server-side dry-run only (chart.rs)"
        );
        return Ok(());
    }
    let ns = cluster.model_fleet_namespace("chart-install").await?;
    let client = cluster.client().await?;
    operator_image(&["build"])?;
    operator_image(&["load", &cluster.instance])?;
    let install = Install {
        helm: Helm::new()?.with_kubeconfig(&cluster.kubeconfig),
        release: format!(
            "model-fleet-{}",
            ns.name().rsplit('-').next().unwrap_or("0")
        ),
        ns: ns.name().to_owned(),
        version: workspace_version()?,
    };

    // Install: one pod, on the real node, Ready, holding the Lease.
    install.upgrade(&[])?;
    let pods = ready_operator_pods(&client, &install, 1).await?;
    let pod = &pods[0];
    assert_eq!(
        pod.spec.as_ref().and_then(|s| s.node_name.as_deref()),
        Some(NODE_NAME)
    );
    assert_eq!(lease_holder(&client, &install, None).await?, pod.name_any());

    // It reconciles the echo and fit examples.
    for file in ["inference-kind.yaml", "inference-multi-gpu-fit.yaml"] {
        for object in example(file, &install.ns)? {
            create(&client, &install.ns, object).await?;
        }
    }
    wait_condition(
        &client,
        &install.ns,
        "InferenceService",
        "echo",
        "Ready",
        "True",
    )
    .await?;
    let fit = example("inference-multi-gpu-fit.yaml", &install.ns)?;
    let fit_name = fit[0]["metadata"]["name"].as_str().unwrap().to_owned();
    wait_condition(
        &client,
        &install.ns,
        "InferenceService",
        &fit_name,
        "Ready",
        "True",
    )
    .await?;

    // Upgrade to 2 replicas: a PDB, two Ready pods, one writer.
    install.upgrade(&["--set", "replicaCount=2"])?;
    ready_operator_pods(&client, &install, 2).await?;
    let leader = lease_holder(&client, &install, None).await?;
    let mark = cluster.audit_log().mark()?;
    let isvcs = api(&client, &install.ns, "InferenceService");
    let scale = |n: i64| Patch::Merge(json!({"spec": {"replicas": {"min": n, "max": n}}}));
    isvcs
        .patch("echo", &PatchParams::default(), &scale(2))
        .await?;
    wait_condition(
        &client,
        &install.ns,
        "InferenceService",
        "echo",
        "Ready",
        "True",
    )
    .await?;
    assert_eq!(
        writers(&mark, &install)?,
        BTreeSet::from([leader.clone()]),
        "one writer: the Lease holder"
    );

    // The leader goes: another pod (the survivor or the Deployment's replacement) takes the Lease and is then the
    // only writer.
    let pod_api: Api<Pod> = Api::namespaced(client.clone(), &install.ns);
    pod_api.delete(&leader, &DeleteParams::default()).await?;
    let next = lease_holder(&client, &install, Some(&leader)).await?;
    let mark = cluster.audit_log().mark()?;
    isvcs
        .patch("echo", &PatchParams::default(), &scale(1))
        .await?;
    wait_condition(
        &client,
        &install.ns,
        "InferenceService",
        "echo",
        "Ready",
        "True",
    )
    .await?;
    let after = writers(&mark, &install)?;
    assert!(
        !after.contains(&leader) && after.contains(&next),
        "writers after failover: {after:?}"
    );

    uninstall_and_reinstall(&cluster, &client, &install).await
}

/// `helm uninstall`: the custom resources and their children stay (Helm never deletes `crds/`,
/// and the resources are not the release's); a Dataset in use keeps its finalizer, so deleting it
/// waits until an operator runs again; the reinstalled operator then lets it go once its run is
/// gone.
async fn uninstall_and_reinstall(
    cluster: &Cluster,
    client: &kube::Client,
    install: &Install,
) -> anyhow::Result<()> {
    let ns = install.ns.as_str();
    create(client, ns, json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "Dataset",
        "metadata": {"name": "corpus"},
        "spec": {"version": "1", "source": {"uri": "s3://bucket/corpus/v1/"}, "allowedServiceAccounts": ["default"]}})).await?;
    create(
        client,
        ns,
        json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun",
        "metadata": {"name": "reader"},
        "spec": {"container": {"image": "modelfleet.local/sim:never"},
                 "datasets": [{"name": "corpus", "version": "1", "mountPath": "/data/corpus"}]}}),
    )
    .await?;
    let datasets = api(client, ns, "Dataset");
    wait_for("the dataset in use", TIMEOUT, || {
        let datasets = datasets.clone();
        async move { Ok((!datasets.get("corpus").await?.finalizers().is_empty()).then_some(())) }
    })
    .await?;

    install.uninstall()?;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    assert!(
        deployments.get_opt(&install.fullname()).await?.is_none(),
        "the operator is gone"
    );
    assert!(
        deployments.get_opt("echo").await?.is_some(),
        "children stay"
    );
    assert!(
        cluster
            .kubectl_ok(&["get", "crd", "datasets.modelfleet.io"])
            .is_ok(),
        "CRDs stay"
    );
    datasets.delete("corpus", &DeleteParams::default()).await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let held = datasets.get("corpus").await?;
    assert!(
        held.metadata.deletion_timestamp.is_some() && !held.finalizers().is_empty(),
        "held while in use"
    );

    install.upgrade(&[])?;
    ready_operator_pods(client, install, 1).await?;
    api(client, ns, "TrainingRun")
        .delete("reader", &DeleteParams::background())
        .await?;
    wait_for("the released Dataset to be deleted", TIMEOUT, || {
        let datasets = datasets.clone();
        async move { Ok(datasets.get_opt("corpus").await?.is_none().then_some(())) }
    })
    .await?;
    wait_condition(client, ns, "InferenceService", "echo", "Ready", "True").await?;
    install.uninstall()?;
    Ok(())
}

/// `make image-push REGISTRY=...` against a registry of ours on loopback (crane's): an image index over the
/// per-architecture images, each manifest with the OCI annotations source, revision and version, each config
/// non-root with the static binary as entrypoint.
#[test]
fn image_push_writes_an_index_of_annotated_non_root_images() -> anyhow::Result<()> {
    operator_image(&["build"])?;
    let root = acceptance_tests::cluster::repo_root();
    let crane = Command::new("bash")
        .arg("-c")
        .arg("source acceptance-tests/cluster/scripts/lib.sh && echo \"$(crane_bin_dir)/crane\"")
        .current_dir(&root)
        .output()?;
    let crane = String::from_utf8(crane.stdout)?.trim().to_owned();
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut registry = Command::new(&crane)
        .args([
            "registry",
            "serve",
            "--address",
            &format!("127.0.0.1:{port}"),
        ])
        .stderr(std::process::Stdio::null())
        .spawn()?;
    std::thread::sleep(Duration::from_millis(500));
    let result = (|| -> anyhow::Result<()> {
        let registry = format!("127.0.0.1:{port}/modelfleet");
        operator_image(&["push", &registry])?;
        let version = workspace_version()?;
        let show = |what: &str, reference: String| -> anyhow::Result<Value> {
            let out = Command::new(&crane).args([what, &reference]).output()?;
            anyhow::ensure!(
                out.status.success(),
                "crane {what} {reference}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            Ok(serde_json::from_slice(&out.stdout)?)
        };
        let index = show(
            "manifest",
            format!("{registry}/model-fleet-operator:{version}"),
        )?;
        assert_eq!(
            index["mediaType"],
            "application/vnd.oci.image.index.v1+json"
        );
        assert_eq!(index["manifests"][0]["platform"]["architecture"], "amd64");
        let image = show(
            "manifest",
            format!("{registry}/model-fleet-operator:{version}-amd64"),
        )?;
        let notes = &image["annotations"];
        assert_eq!(notes["org.opencontainers.image.version"], version.as_str());
        assert_eq!(
            notes["org.opencontainers.image.source"],
            "https://github.com/modelfleet/model-fleet"
        );
        assert!(
            notes["org.opencontainers.image.revision"]
                .as_str()
                .is_some_and(|r| r.len() >= 40),
            "{notes}"
        );
        let config = show(
            "config",
            format!("{registry}/model-fleet-operator:{version}-amd64"),
        )?;
        assert_eq!(config["config"]["User"], "65532:65532");
        assert_eq!(
            config["config"]["Entrypoint"],
            json!(["/model-fleet-operator"])
        );
        Ok(())
    })();
    registry.kill().ok();
    registry.wait().ok();
    result
}
