//! Issue 18, "provider under faults" and "the wrong cluster at refresh" (terraform-provider-kubernetes#2597): the
//! real Terraform CLI and provider against the local control plane while things go wrong.
//!
//! * the kubeconfig context switched to ANOTHER cluster (a second instance with the CRDs and the same namespace):
//!   refresh fails naming the kind, the object, the context and both cluster identities; the state keeps the
//!   resource; back on the right context the plan is clean; the same switch through a context known only at apply
//!   (a cluster replaced in the configuration) is not refreshed (a warning), plans nothing for the resource, and
//!   the plan after the apply fails the same way; destroy works;
//! * the API server goes away mid-apply (the provider reaches it through a loopback proxy the test cuts while an
//!   InferenceService waits): once the provider's grace for an outage (30 s) is spent, a clear error; the state holds
//!   exactly the objects that exist, and with the API server back a rerun converges with no duplicate and a clean
//!   plan; an outage shorter than the grace (5 s) is ridden out: the apply succeeds;
//! * another field manager (`kubectl apply --server-side`) takes a field the configuration sets: the apply names the
//!   manager and the field; `force_conflicts = true` takes it back;
//! * Ctrl-C (SIGINT to Terraform's process group, as a terminal sends it) while an InferenceService waits: Terraform
//!   stops promptly (the provider's Stop ends the wait), the state holds what exists, a rerun repairs it.
//!
//! No operator runs: where a `wait_for = "reconciled"` must pass, the test writes the status an operator would
//! (`status.observedGeneration`), so it decides when a wait ends. Tests run on a multi-threaded runtime: the proxy
//! and the stand-in operator keep serving while a test blocks on Terraform.

use std::collections::BTreeSet;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use acceptance_tests::modelfleet::api;
use acceptance_tests::tcp_proxy::{TcpProxy, api_server_addr};
use acceptance_tests::terraform::{self, flat};
use acceptance_tests::{Cluster, Terraform, TestNamespace, wait_for};
use kube::api::{ListParams, Patch, PatchParams};
use serde_json::json;

/// Names of the objects of `kind` in `namespace`.
async fn names(client: &kube::Client, namespace: &str, kind: &str) -> BTreeSet<String> {
    api(client, namespace, kind)
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// Plays the operator for InferenceServices in `namespace`: writes `status.observedGeneration` for every generation
/// it sees, so `wait_for = "reconciled"` passes. Runs until aborted.
fn reconcile_forever(client: kube::Client, namespace: String) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let isvcs = api(&client, &namespace, "InferenceService");
        loop {
            if let Ok(list) = isvcs.list(&ListParams::default()).await {
                for object in list.items {
                    let generation = object.metadata.generation.unwrap_or(1);
                    let observed = object.data["status"]["observedGeneration"].as_i64();
                    if observed != Some(generation) {
                        let name = object.metadata.name.clone().unwrap_or_default();
                        let status = json!({"status": {"observedGeneration": generation}});
                        let _ = isvcs
                            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
                            .await;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    })
}

/// Two Datasets applied first, an InferenceService that waits to be reconciled, and three Datasets that depend on
/// it: an apply is "mid-way" while the InferenceService waits.
fn staged_config(provider: &str) -> String {
    format!(
        r#"{provider}
resource "modelfleet_dataset" "early" {{
  count   = 2
  name    = "early-${{count.index}}"
  version = "1"
  source {{
    uri = "s3://bucket/early/"
  }}
}}

resource "modelfleet_inference" "gate" {{
  name     = "gate"
  wait_for = "reconciled"
  model {{
    name = "m"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
  }}
  timeouts {{
    create = "5m"
  }}
}}

resource "modelfleet_dataset" "late" {{
  count      = 3
  depends_on = [modelfleet_inference.gate]
  name       = "late-${{count.index}}"
  version    = "1"
  source {{
    uri = "s3://bucket/late/"
  }}
}}
"#
    )
}

/// Starts `terraform apply` in the background, in a process group of its own (so Ctrl-C can reach Terraform and its
/// provider as a terminal's would).
fn spawn_apply(tf: &Terraform) -> Child {
    use std::os::unix::process::CommandExt as _;
    tf.command(&["apply", "-auto-approve", "-no-color", "-input=false"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("terraform apply starts")
}

/// Waits (bounded) for `child` to exit; returns whether it succeeded, its flat output and how long it took.
async fn finish(child: Child, bound: Duration) -> (bool, String, Duration) {
    let started = Instant::now();
    let waited = tokio::time::timeout(
        bound,
        tokio::task::spawn_blocking(move || child.wait_with_output()),
    )
    .await
    .unwrap_or_else(|_| panic!("terraform did not exit within {bound:?}"))
    .unwrap()
    .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&waited.stdout),
        String::from_utf8_lossy(&waited.stderr)
    );
    (waited.status.success(), flat(&text), started.elapsed())
}

/// Waits until the InferenceService `gate` exists and the provider polls it (its wait loop runs).
async fn gate_written(client: &kube::Client, namespace: &str) {
    let isvcs = api(client, namespace, "InferenceService");
    wait_for(
        "InferenceService gate created",
        Duration::from_secs(120),
        || async { Ok(isvcs.get_opt("gate").await?.map(|_| ())) },
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
}

/// The state's resource addresses.
fn state_list(tf: &Terraform) -> BTreeSet<String> {
    tf.ok(&["state", "list"])
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// After an interrupted apply: the state holds exactly the objects that exist (the early Datasets and the gate),
/// nothing was created twice; then a rerun (with the test playing the operator) converges and plans clean.
async fn assert_consistent_then_rerun_converges(tf: &Terraform, client: &kube::Client, ns: &str) {
    assert_eq!(
        state_list(tf),
        set(&[
            "modelfleet_dataset.early[0]",
            "modelfleet_dataset.early[1]",
            "modelfleet_inference.gate"
        ])
    );
    assert_eq!(
        names(client, ns, "Dataset").await,
        set(&["early-0", "early-1"])
    );
    assert_eq!(names(client, ns, "InferenceService").await, set(&["gate"]));

    let operator = reconcile_forever(client.clone(), ns.to_owned());
    let started = Instant::now();
    let rerun = tf.apply();
    let rerun_took = started.elapsed();
    let (code, plan) = tf.plan_exit_code().unwrap();
    operator.abort();
    rerun.unwrap();
    eprintln!("figure: rerun apply converged in {rerun_took:?}");
    assert_eq!(code, 0, "the plan after the rerun is not clean:\n{plan}");
    assert_eq!(
        names(client, ns, "Dataset").await,
        set(&["early-0", "early-1", "late-0", "late-1", "late-2"])
    );
    assert_eq!(names(client, ns, "InferenceService").await, set(&["gate"]));
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}

/// What an apply of [`staged_config`] runs in: its namespace, a client that bypasses `proxy`, and the Terraform
/// working directory whose provider reaches the API server only through `proxy`.
struct Staged {
    ns: TestNamespace,
    client: kube::Client,
    proxy: TcpProxy,
    _scratch: tempfile::TempDir,
    tf: Terraform,
}

/// Starts the apply of [`staged_config`] in a new namespace `prefix-*` with the provider's kubeconfig pointing at a
/// loopback [`TcpProxy`] to the API server; returns it with the running apply once the gate's wait polls.
async fn staged_through_proxy(prefix: &str) -> (Staged, Child) {
    let cluster = Cluster::for_tests();
    let ns = cluster.model_fleet_namespace(prefix).await.unwrap();
    let client = cluster.client().await.unwrap();
    let proxy = TcpProxy::start(api_server_addr(&cluster.kubeconfig).unwrap())
        .await
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let kubeconfig = proxy
        .kubeconfig(&cluster.kubeconfig, scratch.path())
        .unwrap();
    let provider = terraform::provider_block(&kubeconfig, ns.name(), "");
    let tf = Terraform::new(&staged_config(&provider)).unwrap();
    let apply = spawn_apply(&tf);
    gate_written(&client, ns.name()).await;
    let staged = Staged {
        ns,
        client,
        proxy,
        _scratch: scratch,
        tf,
    };
    (staged, apply)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_server_going_away_mid_apply_is_an_error_and_a_rerun_converges() {
    let (s, apply) = staged_through_proxy("tf-fault-apiserver").await;
    let (ns, client, proxy, tf) = (&s.ns, &s.client, &s.proxy, &s.tf);
    proxy.cut();
    let (succeeded, text, took) = finish(apply, Duration::from_secs(120)).await;
    eprintln!(
        "figure: terraform exited {took:?} after the API server went away ({} connections forwarded)",
        proxy.connections()
    );
    assert!(
        !succeeded,
        "the apply succeeded without an API server: {text}"
    );
    let gate = format!("InferenceService {}/gate", ns.name());
    assert!(
        text.contains(&format!("Cannot read {gate}"))
            && text.contains("The Kubernetes API request to https://127.0.0.1:")
            && text.contains("Check that the API server is running")
            && text.contains(&format!("Cannot tell whether {gate} is reconciled"))
            && text.contains("stays in state, tainted"),
        "{text}"
    );
    assert!(!text.contains("panic"), "{text}");

    proxy.restore();
    assert_consistent_then_rerun_converges(tf, client, ns.name()).await;
}

/// An outage shorter than the provider's grace (the proxy cut for 5 s while the InferenceService waits, so its reads
/// fail at once with a closed connection): the wait keeps polling, and the apply succeeds once the object is
/// reconciled, with everything created and a clean plan. Before the grace, the first failed read ended the apply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_api_server_outage_mid_wait_is_ridden_out() {
    let (s, apply) = staged_through_proxy("tf-fault-blip").await;
    let (ns, client, proxy, tf) = (&s.ns, &s.client, &s.proxy, &s.tf);
    proxy.cut();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let before = proxy.connections();
    proxy.restore();
    let operator = reconcile_forever(client.clone(), ns.name().to_owned());
    let (succeeded, text, took) = finish(apply, Duration::from_secs(120)).await;
    operator.abort();
    eprintln!("figure: the apply finished {took:?} after the outage ended");
    assert!(succeeded, "the apply failed over a 5 s outage: {text}");
    assert!(
        proxy.connections() > before,
        "the provider did not reconnect after the outage"
    );
    assert_eq!(
        names(client, ns.name(), "Dataset").await,
        set(&["early-0", "early-1", "late-0", "late-1", "late-2"])
    );
    let (code, plan) = tf.plan_exit_code().unwrap();
    assert_eq!(code, 0, "the plan after the apply is not clean:\n{plan}");
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_mid_apply_stops_promptly_and_a_rerun_repairs() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-fault-sigint")
        .await
        .unwrap();
    let client = cluster.client().await.unwrap();
    let tf = Terraform::new(&staged_config(&terraform::provider_block(
        &cluster.kubeconfig,
        ns.name(),
        "",
    )))
    .unwrap();

    let apply = spawn_apply(&tf);
    gate_written(&client, ns.name()).await;
    // A terminal's Ctrl-C: SIGINT to the whole foreground process group (Terraform and its provider).
    let group = format!("-{}", apply.id());
    let sent = std::process::Command::new("kill")
        .args(["-INT", "--", &group])
        .status()
        .unwrap();
    assert!(sent.success());
    // The wait's timeout is 5 minutes: exiting well within the bound proves the Stop RPC ended it.
    let (succeeded, text, took) = finish(apply, Duration::from_secs(90)).await;
    eprintln!("figure: terraform exited {took:?} after SIGINT");
    assert!(!succeeded, "an interrupted apply reported success: {text}");
    assert!(
        text.contains(&format!(
            "Stopped waiting for InferenceService {}/gate to be reconciled",
            ns.name()
        )) && text.contains("stays in state"),
        "{text}"
    );
    assert_consistent_then_rerun_converges(&tf, &client, ns.name()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_side_apply_by_another_manager_conflicts_until_forced() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-fault-manager")
        .await
        .unwrap();
    let isvc = |provider_extra: &str| {
        terraform::provider_block(&cluster.kubeconfig, ns.name(), provider_extra)
            + &terraform::echo_inference("chat")
    };
    let tf = Terraform::new(&isvc("")).unwrap();
    tf.apply().unwrap();
    // Another tool takes the image with its own server-side apply (forcing, as a human would after its own conflict).
    let manifest = json!({
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceService",
        "metadata": {"name": "chat", "namespace": ns.name()},
        "spec": {"model": {"name": "chat"}, "container": {"image": "hashicorp/http-echo:1.0.1"}},
    });
    let file = tf.path().join("other.json");
    std::fs::write(&file, manifest.to_string()).unwrap();
    cluster
        .kubectl_ok(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=platform-bot",
            "-f",
            file.to_str().unwrap(),
        ])
        .unwrap();

    let (succeeded, text) = tf
        .run_flat(&["apply", "-auto-approve", "-no-color", "-input=false"])
        .unwrap();
    assert!(!succeeded, "the apply took the field silently: {text}");
    assert!(
        text.contains(&format!(
            "Field manager conflict applying InferenceService {}/chat",
            ns.name()
        )) && text.contains("platform-bot")
            && text.contains(".spec.container.image")
            && text.contains("force_conflicts = true"),
        "{text}"
    );

    tf.write("main.tf", &isvc("  force_conflicts = true\n"))
        .unwrap();
    tf.apply().unwrap();
    let image = cluster
        .kubectl_ok(&[
            "get",
            "inferenceservices.modelfleet.io",
            "-n",
            ns.name(),
            "chat",
            "-o",
            "jsonpath={.spec.container.image}",
        ])
        .unwrap();
    assert_eq!(image, "hashicorp/http-echo:1.0");
    let (code, plan) = tf.plan_exit_code().unwrap();
    assert_eq!(code, 0, "{plan}");
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}

/// One kubeconfig with a context per instance, each named after its instance (clusters and users renamed so the two
/// files' `admin` users do not collide): what a user with two clusters has.
fn two_context_kubeconfig(clusters: &[&Cluster], path: &std::path::Path) {
    let (mut all_clusters, mut users, mut contexts) = (vec![], vec![], vec![]);
    for cluster in clusters {
        let text = std::fs::read_to_string(&cluster.kubeconfig).unwrap();
        let config: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        let name = cluster.instance.as_str();
        let user = format!("admin-{name}");
        let server = serde_json::to_value(&config["clusters"][0]["cluster"]).unwrap();
        let credentials = serde_json::to_value(&config["users"][0]["user"]).unwrap();
        all_clusters.push(json!({"name": name, "cluster": server}));
        users.push(json!({"name": user, "user": credentials}));
        contexts.push(json!({"name": name, "context": {"cluster": name, "user": user}}));
    }
    let merged = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": all_clusters,
        "users": users,
        "contexts": contexts,
        "current-context": clusters[0].instance,
    });
    std::fs::write(path, serde_yaml::to_string(&merged).unwrap()).unwrap();
}

/// Stops the second instance when the test ends, passed or not.
struct Down(Cluster);

impl Drop for Down {
    fn drop(&mut self) {
        if let Err(e) = self.0.down() {
            eprintln!("{e:#}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_against_another_cluster_fails_and_keeps_the_state() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-wrong-cluster")
        .await
        .unwrap();
    // The other cluster: a second instance with the same CRDs and the same namespace, as a staging cluster would be.
    let other = Cluster::up(&format!("{}-other", cluster.instance), &[]).unwrap();
    let other = Down(other);
    other.0.install_model_fleet_crds().unwrap();
    other
        .0
        .kubectl_ok(&["create", "namespace", ns.name()])
        .unwrap();

    let scratch = tempfile::tempdir().unwrap();
    let kubeconfig = scratch.path().join("kubeconfig");
    two_context_kubeconfig(&[&cluster, &other.0], &kubeconfig);
    let config = |context: &str| {
        format!(
            r#"{}
resource "modelfleet_dataset" "corpus" {{
  name    = "corpus"
  version = "1"
  source {{
    uri = "s3://bucket/corpus/v1/"
  }}
}}
"#,
            terraform::provider_block(
                &kubeconfig,
                ns.name(),
                &format!("  kubeconfig_context = \"{context}\"\n")
            )
        )
    };
    let tf = Terraform::new(&config(&cluster.instance)).unwrap();
    tf.apply().unwrap();

    tf.write("main.tf", &config(&other.0.instance)).unwrap();
    let started = Instant::now();
    let (succeeded, text) = tf.run_flat(&["plan", "-no-color", "-input=false"]).unwrap();
    eprintln!(
        "figure: the wrong-cluster plan failed in {:?}",
        started.elapsed()
    );
    assert!(
        !succeeded,
        "the plan against another cluster succeeded: {text}"
    );
    let (right, wrong) = (cluster.identity().unwrap(), other.0.identity().unwrap());
    assert_ne!(right, wrong);
    assert!(
        text.contains(&format!(
            "Dataset {}/corpus was created on another cluster",
            ns.name()
        )) && text.contains(&format!("kubeconfig context \"{}\"", other.0.instance))
            && text.contains(&right)
            && text.contains(&wrong)
            && text.contains("Terraform keeps it in state"),
        "{text}"
    );
    assert!(!text.contains("will be created"), "{text}");
    assert_eq!(state_list(&tf), set(&["modelfleet_dataset.corpus"]));
    let other_client = other.0.client().await.unwrap();
    assert!(names(&other_client, ns.name(), "Dataset").await.is_empty());

    // Back on the right context: nothing to do.
    tf.write("main.tf", &config(&cluster.instance)).unwrap();
    let (code, plan) = tf.plan_exit_code().unwrap();
    assert_eq!(code, 0, "{plan}");

    // The cluster "replaced" within the configuration: the context comes from a value known only at apply. The
    // plan does not refresh (it warns) and plans nothing for the Dataset, the apply does not create it on the new
    // cluster, and the plan after it fails as above (docs/reference/provider.md says so).
    let late = |context: &str| {
        config(context).replace(
            &format!("  kubeconfig_context = \"{context}\"\n"),
            "  kubeconfig_context = terraform_data.cluster.output\n",
        ) + &format!("\nresource \"terraform_data\" \"cluster\" {{\n  input = \"{context}\"\n}}\n")
    };
    tf.write("main.tf", &late(&cluster.instance)).unwrap();
    tf.apply().unwrap();
    tf.write("main.tf", &late(&other.0.instance)).unwrap();
    let (code, plan) = tf.plan_exit_code().unwrap();
    let plan = terraform::flat(&plan);
    assert_eq!(code, 2, "{plan}");
    assert!(
        plan.contains("Not refreshed: provider connection not known yet")
            && plan.contains(&format!(
                "modelfleet_dataset {}/corpus was not read",
                ns.name()
            ))
            && plan.contains("Plan: 0 to add, 1 to change, 0 to destroy"),
        "{plan}"
    );
    tf.apply().unwrap();
    let (succeeded, text) = tf.run_flat(&["plan", "-no-color", "-input=false"]).unwrap();
    assert!(
        !succeeded
            && text.contains(&format!(
                "Dataset {}/corpus was created on another cluster",
                ns.name()
            )),
        "{text}"
    );
    assert!(names(&other_client, ns.name(), "Dataset").await.is_empty());

    // Back on the right context again; destroy removes the object where it lives.
    tf.write("main.tf", &config(&cluster.instance)).unwrap();
    tf.apply().unwrap();
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
    let client = cluster.client().await.unwrap();
    assert!(names(&client, ns.name(), "Dataset").await.is_empty());
}
