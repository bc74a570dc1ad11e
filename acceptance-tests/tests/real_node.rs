//! Model Fleet's pods on the real node `real-1` (issue 14): kubelet, containerd and runc really run
//! them, so what a simulated node cannot catch is caught here. A readiness probe is really called
//! (and a failing one keeps the pod out of Ready); env, ConfigMap references and
//! `MODEL_FLEET_DATASETS_JSON` are really visible inside the container; a Dataset's claim is really
//! mounted read-only (a write fails where the container's own disk takes it); an init container
//! really runs before the main one; the echo InferenceService answers through its Service and has two
//! endpoints once scaled to 2; a container exiting 1 fails its TrainingRun through `retries`; a
//! crashed kubelet comes back to a Ready node whose pods never stopped; an image made by
//! `images/image.sh` from a static binary is pulled from the node's registry and runs; a run with
//! `podSecurity.level: restricted` runs as its user with no capability, no_new_privs and a seccomp filter, and
//! a root image under it stalls with `Ready` naming the kubelet's refusal (an InferenceService's and a
//! TrainingRun's); a crash-looping service's `Ready` names the container's last exit.
//!
//! Each test starts its own operator watching only its namespace (as the chart's ClusterRole).
//! The kubelet test holds the node alone (a write lock) while the others share it.
//! On a machine that cannot run a real node (`cluster.sh status` says why), the tests print the
//! reason and check nothing; when the machine can run one and it is missing, they fail.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use acceptance_tests::cluster::repo_root;
use acceptance_tests::modelfleet::{self, create, example};
use acceptance_tests::process::operator_kubeconfig;
use acceptance_tests::real_node::{ECHO_IMAGE, NODE_NAME};
use acceptance_tests::{Cluster, OperatorProcess, RealNode, TestNamespace, wait_for};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::sync::RwLock;

/// Shared by the tests that use the node; the kubelet restart takes it alone.
static NODE: RwLock<()> = RwLock::const_new(());

struct Setup {
    cluster: Cluster,
    node: RealNode,
    ns: TestNamespace,
    client: kube::Client,
    operator: OperatorProcess,
}

/// The real node, a fresh namespace with the CRDs and an operator watching it; `None` when this
/// machine cannot run a real node (the reason is printed by [`Cluster::real_node`]).
async fn setup(prefix: &str) -> anyhow::Result<Option<Setup>> {
    let started = Instant::now();
    let cluster = Cluster::connect()?;
    let Some(node) = cluster.real_node()? else {
        return Ok(None);
    };
    let ns = cluster.model_fleet_namespace(prefix).await?;
    let client = cluster.client().await?;
    let kubeconfig = operator_kubeconfig(&cluster)?;
    let operator = OperatorProcess::start(
        &cluster,
        &kubeconfig,
        ns.name(),
        "fleet",
        &["--resync-seconds", "5"],
        &[],
    )?;
    eprintln!(
        "{prefix}: namespace and operator ready in {:?}",
        started.elapsed()
    );
    Ok(Some(Setup {
        cluster,
        node,
        ns,
        client,
        operator,
    }))
}

/// An InferenceService of our echo image on the real node, `extra` merged into its spec.
fn echo_service(name: &str, extra: Value) -> Value {
    let mut spec = json!({
        "model": {"name": "echo"},
        "container": {
            "image": ECHO_IMAGE,
            "args": ["-listen=:8080", format!("-text=hello from {name}")],
            "port": 8080,
            "readinessPath": "/ready",
            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
        },
        "gpu": RealNode::gpu_placement(),
        "replicas": {"min": 1, "max": 1},
    });
    merge(&mut spec, extra);
    json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
        "metadata": {"name": name}, "spec": spec,
    })
}

/// A TrainingRun of our echo image on the real node running `command`, `extra` merged into its spec.
fn echo_run(name: &str, command: &[&str], extra: Value) -> Value {
    let mut spec = json!({
        "container": {"image": ECHO_IMAGE, "command": command},
        "gpu": RealNode::gpu_placement(),
    });
    merge(&mut spec, extra);
    json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun",
        "metadata": {"name": name}, "spec": spec,
    })
}

/// Merges the keys of object `extra` into object `into` (one level deep for objects).
fn merge(into: &mut Value, extra: Value) {
    if let (Some(into), Value::Object(extra)) = (into.as_object_mut(), extra) {
        for (k, v) in extra {
            match (into.get_mut(&k), v) {
                (Some(Value::Object(a)), Value::Object(b)) => a.extend(b),
                (_, v) => {
                    into.insert(k, v);
                }
            }
        }
    }
}

/// Pods of InferenceService `name` (or of Job `name` with `job: true`).
async fn pods(client: &kube::Client, ns: &str, name: &str, job: bool) -> anyhow::Result<Vec<Pod>> {
    let selector = if job {
        format!("batch.kubernetes.io/job-name={name}")
    } else {
        format!("modelfleet.io/inference-service={name}")
    };
    Ok(Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default().labels(&selector))
        .await?
        .items)
}

fn pod_name(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

fn node_of(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref()?.node_name.as_deref()
}

fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The pods of InferenceService `name` once `count` of them are Ready.
async fn ready_pods(s: &Setup, name: &str, count: usize) -> anyhow::Result<Vec<Pod>> {
    let (client, ns) = (&s.client, s.ns.name());
    let started = Instant::now();
    let pods = wait_for(
        &format!("{count} Ready pod(s) of {name}"),
        Duration::from_secs(90),
        || async move {
            let pods = pods(client, ns, name, false).await?;
            let ready: Vec<Pod> = pods.into_iter().filter(is_ready).collect();
            Ok((ready.len() == count).then_some(ready))
        },
    )
    .await
    .map_err(|e| e.context(s.operator.log_tail()))?;
    eprintln!("{name}: {count} pod(s) Ready after {:?}", started.elapsed());
    Ok(pods)
}

/// `kubectl exec POD -c CONTAINER -- ARGS`: (success, stdout, stderr).
fn exec(s: &Setup, pod: &str, container: &str, args: &[&str]) -> (bool, String, String) {
    let out = s
        .cluster
        .kubectl()
        .args(["exec", "-n", s.ns.name(), pod, "-c", container, "--"])
        .args(args)
        .output()
        .expect("kubectl exec");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn exec_ok(s: &Setup, pod: &str, container: &str, args: &[&str]) -> String {
    let (ok, out, err) = exec(s, pod, container, args);
    assert!(ok, "exec {args:?} in {pod}/{container} failed: {err}");
    out
}

/// The run's status once `accept` holds.
async fn wait_run(
    s: &Setup,
    name: &str,
    what: &str,
    accept: impl Fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    let runs = modelfleet::api(&s.client, s.ns.name(), "TrainingRun");
    let started = Instant::now();
    let status = wait_for(what, Duration::from_secs(120), || {
        let runs = runs.clone();
        let accept = &accept;
        async move {
            let status = runs.get(name).await?.data["status"].clone();
            Ok(accept(&status).then_some(status))
        }
    })
    .await
    .map_err(|e| e.context(s.operator.log_tail()))?;
    eprintln!("{what}: after {:?}", started.elapsed());
    Ok(status)
}

// A pod on real-1 runs a real container: the kubelet really calls its readiness probe (and keeps a
// pod whose readiness path answers 503 out of Ready), its env (literal, from a ConfigMap, and the
// operator's MODEL_FLEET_* variables) is visible inside it, and its init container ran to completion
// before the main container started, leaving a file in the shared emptyDir.
#[tokio::test]
async fn a_pod_on_the_real_node_runs_a_real_container() -> anyhow::Result<()> {
    let _shared = NODE.read().await;
    let Some(s) = setup("real-pod").await? else {
        return Ok(());
    };
    let ns = s.ns.name();
    s.cluster.kubectl_ok(&[
        "create",
        "configmap",
        "settings",
        "-n",
        ns,
        "--from-literal=greeting=from-a-configmap",
    ])?;
    let service = echo_service(
        "probed",
        json!({
            "container": {
                "env": [
                    {"name": "SPEC_LITERAL", "value": "from-the-spec"},
                    {"name": "FROM_CONFIGMAP", "configMapKeyRef": {"name": "settings", "key": "greeting"}},
                ],
            },
            "initContainers": [{
                "name": "prepare", "image": ECHO_IMAGE,
                "command": ["/echo", "write", "/work/init.txt", "written by the init container"],
            }],
            "volumes": [{"name": "work", "mountPath": "/work", "emptyDir": {}}],
        }),
    );
    let failing = echo_service(
        "unready",
        json!({"container": {"readinessPath": "/status/503", "startupProbe": {"path": "/"}}}),
    );
    create(&s.client, ns, service).await?;
    create(&s.client, ns, failing).await?;

    let pod = ready_pods(&s, "probed", 1).await?.remove(0);
    let name = pod_name(&pod);
    assert_eq!(
        node_of(&pod),
        Some(NODE_NAME),
        "{name} is not on {NODE_NAME}"
    );
    let status = pod.status.as_ref().unwrap();
    let main = &status.container_statuses.as_ref().unwrap()[0];
    assert!(
        main.container_id
            .as_deref()
            .is_some_and(|id| id.starts_with("containerd://")),
        "{main:?}"
    );

    // The probe: the kubelet's requests are in the container's own log.
    let log = s
        .cluster
        .kubectl_ok(&["logs", "-n", ns, &name, "-c", "main"])?;
    assert!(
        log.contains("\"GET /ready HTTP/1.1\" ua=\"kube-probe/"),
        "no kubelet probe in the container's log:\n{log}"
    );

    // The environment as the process sees it.
    let env = exec_ok(&s, &name, "main", &["/echo", "env"]);
    for line in [
        "SPEC_LITERAL=from-the-spec",
        "FROM_CONFIGMAP=from-a-configmap",
        "MODEL_FLEET_MODEL_NAME=echo",
        "MODEL_FLEET_PORT=8080",
    ] {
        assert!(env.lines().any(|l| l == line), "{line} not in env:\n{env}");
    }

    // The init container: finished with 0 before the main container started, its file is there.
    let init = &status.init_container_statuses.as_ref().unwrap()[0];
    let done = init
        .state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .expect("init container terminated");
    assert_eq!(done.exit_code, 0, "{init:?}");
    let started = main
        .state
        .as_ref()
        .and_then(|s| s.running.as_ref())
        .and_then(|r| r.started_at.as_ref())
        .expect("main container running");
    let finished = done.finished_at.as_ref().expect("init finishedAt");
    assert!(
        finished.0 <= started.0,
        "init finished {finished:?}, main started {started:?}"
    );
    assert_eq!(
        exec_ok(&s, &name, "main", &["/echo", "cat", "/work/init.txt"]),
        "written by the init container"
    );

    // A readiness path answering 503: the pod runs, the kubelet says why it is not Ready.
    let events = Api::<Event>::namespaced(s.client.clone(), ns);
    let client = &s.client;
    let (unready, message) = wait_for(
        "a readiness probe failure of unready",
        Duration::from_secs(90),
        || {
            let events = events.clone();
            async move {
                let Some(pod) = pods(client, ns, "unready", false).await?.into_iter().next() else {
                    return Ok(None);
                };
                let field = format!("involvedObject.name={}", pod_name(&pod));
                let failed = events
                    .list(&ListParams::default().fields(&field))
                    .await?
                    .items
                    .into_iter()
                    .find_map(|e| {
                        let m = e.message.unwrap_or_default();
                        m.starts_with("Readiness probe failed").then_some(m)
                    });
                Ok(failed.map(|m| (pod, m)))
            }
        },
    )
    .await?;
    assert!(message.contains("statuscode: 503"), "{message}");
    let unready = Api::<Pod>::namespaced(s.client.clone(), ns)
        .get(&pod_name(&unready))
        .await?;
    assert!(
        !is_ready(&unready),
        "a pod failing its readiness probe is Ready"
    );
    assert_eq!(node_of(&unready), Some(NODE_NAME));
    Ok(())
}

// A TrainingRun on real-1 reading a Dataset: MODEL_FLEET_DATASETS_JSON is in the container's
// environment, the claim's files are readable at the mount path, and a write there fails with a
// read-only file system while the container's own disk takes one.
#[tokio::test]
async fn a_training_run_sees_its_dataset_read_only_inside_the_container() -> anyhow::Result<()> {
    let _shared = NODE.read().await;
    let Some(s) = setup("real-data").await? else {
        return Ok(());
    };
    let ns = s.ns.name();
    s.node.host_path_claim(
        &s.cluster,
        ns,
        "corpus-v3",
        &[("train/part-0000.txt", "corpus v3, shard 0\n")],
    )?;
    for doc in example("dataset-corpus.yaml", ns)? {
        create(&s.client, ns, doc).await?;
    }
    let run = echo_run(
        "reader",
        &["/echo", "sleep", "600"],
        json!({"datasets": [{"name": "corpus", "version": "3", "mountPath": "/data/corpus"}]}),
    );
    create(&s.client, ns, run).await?;
    wait_run(&s, "reader", "reader Running", |st| {
        st["phase"] == "Running"
    })
    .await?;

    let pod = pods(&s.client, ns, "reader", true).await?.remove(0);
    let name = pod_name(&pod);
    assert_eq!(node_of(&pod), Some(NODE_NAME));

    let env = exec_ok(&s, &name, "main", &["/echo", "env"]);
    let json_line = env
        .lines()
        .find_map(|l| l.strip_prefix("MODEL_FLEET_DATASETS_JSON="))
        .unwrap_or_else(|| panic!("MODEL_FLEET_DATASETS_JSON not in the container's env:\n{env}"));
    let datasets: Value = serde_json::from_str(json_line)?;
    assert_eq!(datasets[0]["name"], "corpus", "{datasets}");
    assert_eq!(datasets[0]["version"], "3", "{datasets}");
    assert_eq!(datasets[0]["mountPath"], "/data/corpus", "{datasets}");
    assert_eq!(
        datasets[0]["uri"], "s3://example-ml-data/corpus/v3/",
        "{datasets}"
    );

    assert_eq!(
        exec_ok(
            &s,
            &name,
            "main",
            &["/echo", "cat", "/data/corpus/train/part-0000.txt"]
        ),
        "corpus v3, shard 0\n"
    );
    let (ok, _, err) = exec(
        &s,
        &name,
        "main",
        &["/echo", "write", "/data/corpus/new.txt", "x"],
    );
    assert!(!ok, "a write into the dataset's mount succeeded");
    assert!(err.contains("read-only file system"), "{err}");
    exec_ok(
        &s,
        &name,
        "main",
        &["/echo", "write", "/tmp/scratch.txt", "x"],
    );
    Ok(())
}

// `podSecurity.level: restricted` takes effect in a real container (docs/security.md): a process in it (an exec
// runs with the container's own settings) runs as the given user with the fsGroup among its groups, cannot gain
// privileges (no_new_privs), has no effective capability and runs under the runtime's default seccomp filter.
#[tokio::test]
async fn a_restricted_run_runs_as_its_user_without_privileges_under_seccomp() -> anyhow::Result<()>
{
    let _shared = NODE.read().await;
    let Some(s) = setup("real-pss").await? else {
        return Ok(());
    };
    let ns = s.ns.name();
    let security =
        json!({"level": "restricted", "runAsUser": 65532, "runAsGroup": 65532, "fsGroup": 65533});
    let run = echo_run(
        "locked",
        &["/echo", "sleep", "600"],
        json!({"podSecurity": security}),
    );
    create(&s.client, ns, run).await?;
    wait_run(&s, "locked", "locked Running", |st| {
        st["phase"] == "Running"
    })
    .await?;
    let pod = pods(&s.client, ns, "locked", true).await?.remove(0);
    assert_eq!(node_of(&pod), Some(NODE_NAME));
    let status = exec_ok(
        &s,
        &pod_name(&pod),
        "main",
        &["/echo", "cat", "/proc/self/status"],
    );
    let field = |name: &str| -> Vec<String> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .unwrap_or_else(|| panic!("no {name} in /proc/self/status:\n{status}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    assert!(field("Uid").iter().all(|uid| uid == "65532"), "{status}");
    assert!(field("Gid").iter().all(|gid| gid == "65532"), "{status}");
    assert!(field("Groups").contains(&"65533".to_string()), "{status}");
    assert_eq!(field("NoNewPrivs"), ["1"], "{status}");
    // A non-root process has no effective capability anyway: the bounding and permitted sets show the drop of ALL.
    for set in ["CapBnd", "CapPrm", "CapEff"] {
        assert_eq!(field(set), ["0000000000000000"], "{set}: {status}");
    }
    assert_eq!(field("Seccomp"), ["2"], "2 is a seccomp filter: {status}");
    Ok(())
}

/// The `Ready` condition of `kind/name` once its message names the kubelet's `CreateContainerConfigError`.
async fn kubelet_refusal(s: &Setup, kind: &str, name: &str) -> anyhow::Result<modelfleet::Ready> {
    let refused = |m: &str| m.contains("CreateContainerConfigError");
    modelfleet::wait_for_ready_message(&s.client, s.ns.name(), kind, name, &s.operator, refused)
        .await
}

// `level: restricted` without `runAsUser` for an image that runs as root (our echo image does): the kubelet refuses to
// start it, and the InferenceService's `Ready` names the pod, the container and the kubelet's reason instead of
// only "rollout in progress".
#[tokio::test]
async fn a_root_image_under_restricted_stalls_and_ready_says_why() -> anyhow::Result<()> {
    let _shared = NODE.read().await;
    let Some(s) = setup("real-root").await? else {
        return Ok(());
    };
    let ns = s.ns.name();
    let service = echo_service("rooted", json!({"podSecurity": {"level": "restricted"}}));
    create(&s.client, ns, service).await?;
    let ready = kubelet_refusal(&s, "InferenceService", "rooted").await?;
    let message = ready.message;
    assert_eq!(ready.state, ("False".to_owned(), "Progressing".to_owned()));
    assert!(
        message.starts_with("rollout stalled: pod rooted-")
            && message.contains("container main: CreateContainerConfigError")
            && message.contains("runAsNonRoot"),
        "{message}"
    );
    Ok(())
}

// The same for a TrainingRun: a root image under `restricted` without `runAsUser` waits for the run's deadline (or
// forever) unless `Ready` says why; it names the Job's pod, the container and the kubelet's reason, phase Pending.
#[tokio::test]
async fn a_root_run_under_restricted_stalls_and_ready_says_why() -> anyhow::Result<()> {
    let _shared = NODE.read().await;
    let Some(s) = setup("real-root-run").await? else {
        return Ok(());
    };
    let ns = s.ns.name();
    let run = echo_run(
        "rooted",
        &["/echo", "sleep", "600"],
        json!({"podSecurity": {"level": "restricted"}}),
    );
    create(&s.client, ns, run).await?;
    let ready = kubelet_refusal(&s, "TrainingRun", "rooted").await?;
    let message = ready.message;
    assert_eq!(ready.state, ("False".to_owned(), "Progressing".to_owned()));
    assert_eq!(ready.object["status"]["phase"], "Pending");
    assert!(
        message.starts_with("run stalled: pod rooted-")
            && message.contains("container main: CreateContainerConfigError")
            && message.contains("runAsNonRoot"),
        "{message}"
    );
    Ok(())
}

// A container that keeps exiting 3: the kubelet backs off (`CrashLoopBackOff`), and the InferenceService's `Ready`
// names the pod, the container and its last exit, not the kubelet's back-off delay (which doubles at each crash).
#[tokio::test]
async fn a_crash_looping_service_stalls_and_ready_names_its_last_exit() -> anyhow::Result<()> {
    let _shared = NODE.read().await;
    let Some(s) = setup("real-crash").await? else {
        return Ok(());
    };
    let ns = s.ns.name();
    let crashing = json!({"container": {"command": ["/echo", "exit", "3"], "args": []}});
    create(&s.client, ns, echo_service("crashy", crashing)).await?;
    let looping = |m: &str| m.contains("CrashLoopBackOff");
    let ready = modelfleet::wait_for_ready_message(
        &s.client,
        ns,
        "InferenceService",
        "crashy",
        &s.operator,
        looping,
    )
    .await?;
    let message = ready.message;
    assert_eq!(ready.state, ("False".to_owned(), "Progressing".to_owned()));
    assert!(
        message.starts_with("rollout stalled: pod crashy-")
            && message
                .ends_with("container main: CrashLoopBackOff: last exit: Error (exit code 3)"),
        "{message}"
    );
    Ok(())
}

// The echo InferenceService answers HTTP through its Service (kube-proxy, inside the node's network
// namespace); scaled from 1 to 2 replicas its Service has two ready endpoints and both answer.
#[tokio::test]
async fn the_echo_service_answers_through_its_service_and_scales_to_two_endpoints()
-> anyhow::Result<()> {
    let _shared = NODE.read().await;
    let Some(s) = setup("real-echo").await? else {
        return Ok(());
    };
    let ns = s.ns.name();
    create(&s.client, ns, echo_service("echo", json!({}))).await?;
    let first = ready_pods(&s, "echo", 1).await?;
    let service = Api::<Service>::namespaced(s.client.clone(), ns)
        .get("echo")
        .await?;
    let ip = service
        .spec
        .and_then(|s| s.cluster_ip)
        .expect("the Service has a ClusterIP");
    let url = format!("http://{ip}/through/the/service");
    let (code, body) = wait_for("the Service to answer", Duration::from_secs(30), || async {
        let (code, body) = s.node.http_get(&url)?;
        Ok((code == 200).then_some((code, body)))
    })
    .await?;
    assert_eq!(code, 200);
    assert!(
        body.starts_with("hello from echo\nrequest: GET /through/the/service HTTP/1.1\n"),
        "{body}"
    );
    assert!(
        body.contains(&format!("pod: {}", pod_name(&first[0]))),
        "{body}"
    );

    let isvcs = modelfleet::api(&s.client, ns, "InferenceService");
    isvcs
        .patch(
            "echo",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"replicas": {"min": 2, "max": 2}}})),
        )
        .await?;
    let both = ready_pods(&s, "echo", 2).await?;
    assert!(both.iter().all(|p| node_of(p) == Some(NODE_NAME)));
    let slices = Api::<EndpointSlice>::namespaced(s.client.clone(), ns);
    let endpoints = wait_for("two ready endpoints", Duration::from_secs(30), || {
        let slices = slices.clone();
        async move {
            let ready: Vec<String> = slices
                .list(&ListParams::default().labels("kubernetes.io/service-name=echo"))
                .await?
                .items
                .into_iter()
                .flat_map(|s| s.endpoints)
                .filter(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true))
                .flat_map(|e| e.addresses)
                .collect();
            Ok((ready.len() == 2).then_some(ready))
        }
    })
    .await?;
    let prefix = s.node.pod_cidr.rsplit_once('.').map(|(p, _)| p).unwrap();
    assert!(
        endpoints.iter().all(|a| a.starts_with(prefix)),
        "{endpoints:?} not in {}",
        s.node.pod_cidr
    );
    // Both answer through the Service (kube-proxy picks an endpoint at random per connection).
    let want: BTreeSet<String> = both.iter().map(pod_name).collect();
    let mut seen = BTreeSet::new();
    for _ in 0..60 {
        let (code, body) = s.node.http_get(&url)?;
        assert_eq!(code, 200, "{body}");
        if let Some(pod) = body.lines().find_map(|l| l.strip_prefix("pod: ")) {
            seen.insert(pod.to_owned());
        }
        if seen == want {
            break;
        }
    }
    assert_eq!(seen, want, "answers through the Service came from {seen:?}");
    Ok(())
}

// A TrainingRun whose container really exits 1 fails through `retries` (1: two pods) and ends
// Failed with the Job's reason BackoffLimitExceeded; each pod's container terminated with code 1.
#[tokio::test]
async fn a_container_exiting_1_fails_its_run_through_retries() -> anyhow::Result<()> {
    let _shared = NODE.read().await;
    let Some(s) = setup("real-fail").await? else {
        return Ok(());
    };
    let ns = s.ns.name();
    create(
        &s.client,
        ns,
        echo_run("broken", &["/echo", "exit", "1"], json!({"retries": 1})),
    )
    .await?;
    let status = wait_run(&s, "broken", "broken Failed", |st| st["phase"] == "Failed").await?;
    assert_eq!(status["reason"], "BackoffLimitExceeded", "{status}");
    let pods = pods(&s.client, ns, "broken", true).await?;
    assert_eq!(pods.len(), 2, "retries 1 means two attempts");
    for pod in &pods {
        assert_eq!(node_of(pod), Some(NODE_NAME));
        let main = &pod
            .status
            .as_ref()
            .unwrap()
            .container_statuses
            .as_ref()
            .unwrap()[0];
        let terminated = main
            .state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .unwrap_or_else(|| panic!("{} not terminated: {main:?}", pod_name(pod)));
        assert_eq!(terminated.exit_code, 1, "{terminated:?}");
        assert!(
            main.container_id
                .as_deref()
                .is_some_and(|id| id.starts_with("containerd://")),
            "{main:?}"
        );
    }
    Ok(())
}

// The kubelet crashes (SIGKILL) while a pod serves: the container keeps answering and the node's
// Lease stops being renewed; started again, the kubelet renews it, the node is Ready, and the pod
// is the same container, never restarted.
#[tokio::test]
async fn the_kubelet_comes_back_after_a_kill_and_its_pods_keep_running() -> anyhow::Result<()> {
    let _alone = NODE.write().await;
    let Some(s) = setup("real-kubelet").await? else {
        return Ok(());
    };
    let ns = s.ns.name();
    create(&s.client, ns, echo_service("steady", json!({}))).await?;
    let pod = ready_pods(&s, "steady", 1).await?.remove(0);
    let name = pod_name(&pod);
    let ip = pod
        .status
        .as_ref()
        .and_then(|s| s.pod_ip.clone())
        .expect("pod IP");
    let container = |p: &Pod| {
        let c = &p
            .status
            .as_ref()
            .unwrap()
            .container_statuses
            .as_ref()
            .unwrap()[0];
        (c.container_id.clone(), c.restart_count)
    };
    let before = container(&pod);
    let leases = Api::<Lease>::namespaced(s.client.clone(), "kube-node-lease");
    let renewed = |lease: &Lease| {
        lease
            .spec
            .as_ref()
            .and_then(|s| s.renew_time.clone())
            .map(|t| t.0)
    };

    let down = s.node.kill_kubelet()?;
    let killed_at = Instant::now();
    eprintln!("killed kubelet pid {}", down.pid);
    let last_renewal = renewed(&leases.get(NODE_NAME).await?);
    // The kubelet renews its Lease every 10 s: watch a little longer than that while the
    // container keeps serving on its own.
    while killed_at.elapsed() < Duration::from_secs(12) {
        let (code, body) = s
            .node
            .http_get(&format!("http://{ip}:8080/while-the-kubelet-is-down"))?;
        assert_eq!(
            code, 200,
            "the pod stopped answering without its kubelet: {body}"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    assert_eq!(
        renewed(&leases.get(NODE_NAME).await?),
        last_renewal,
        "the Lease was renewed with the kubelet gone"
    );

    down.restart()?;
    let nodes = Api::<Node>::all(s.client.clone());
    wait_for(
        "a renewed Lease and a Ready node",
        Duration::from_secs(60),
        || {
            let (leases, nodes) = (leases.clone(), nodes.clone());
            async move {
                let fresh = renewed(&leases.get(NODE_NAME).await?) > last_renewal;
                let node = nodes.get(NODE_NAME).await?;
                let ready = node
                    .status
                    .and_then(|s| s.conditions)
                    .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
                Ok((fresh && ready).then_some(()))
            }
        },
    )
    .await?;
    eprintln!(
        "kubelet back and {NODE_NAME} Ready {:?} after the kill",
        killed_at.elapsed()
    );
    let after = Api::<Pod>::namespaced(s.client.clone(), ns)
        .get(&name)
        .await?;
    assert_eq!(
        container(&after),
        before,
        "the container was restarted or replaced"
    );
    assert!(is_ready(&after));
    let (code, _) = s.node.http_get(&format!("http://{ip}:8080/after"))?;
    assert_eq!(code, 200);
    Ok(())
}

/// Runs `images/image.sh COMMAND ARGS`; fails with its output.
fn image_sh(command: &str, args: &[&str]) -> anyhow::Result<()> {
    let out = std::process::Command::new("bash")
        .arg(repo_root().join("images/image.sh"))
        .arg(command)
        .args(args)
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "images/image.sh {command} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

// The image helper other images use (the operator's, later): a static binary of ours packed by
// `images/image.sh build` with its entrypoint, loaded into the node's registry by `load`; a pod
// naming it makes the kubelet pull it from there and runs the entrypoint.
#[tokio::test]
async fn an_image_made_by_image_sh_is_pulled_and_runs_on_the_real_node() -> anyhow::Result<()> {
    let _shared = NODE.read().await;
    let cluster = Cluster::connect()?;
    let Some(node) = cluster.real_node()? else {
        return Ok(());
    };
    let ns = cluster.namespace("real-image").await?;
    let tmp = tempfile::tempdir()?;
    let binary = tmp.path().join("printenv");
    let tarball = tmp.path().join("printenv.tar");
    let (binary, tarball) = (binary.to_str().unwrap(), tarball.to_str().unwrap());
    let built = std::process::Command::new("go")
        .args(["build", "-trimpath", "-o", binary, "./echo"])
        .current_dir(repo_root().join("images"))
        .env("CGO_ENABLED", "0")
        .env("GOTOOLCHAIN", "local")
        .output()?;
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    const IMAGE: &str = "modelfleet.local/printenv:test";
    image_sh("build", &[binary, "/printenv,env", IMAGE, tarball])?;
    image_sh("load", &[&node.instance, tarball, IMAGE])?;

    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "printenv"},
        "spec": {
            "restartPolicy": "Never",
            "automountServiceAccountToken": false,
            "nodeSelector": RealNode::gpu_placement()["nodeSelector"],
            "tolerations": RealNode::gpu_placement()["tolerations"],
            "containers": [{"name": "main", "image": IMAGE,
                            "env": [{"name": "GREETING", "value": "from-the-pod"}]}],
        }
    }))?;
    let pods = Api::<Pod>::namespaced(cluster.client().await?, ns.name());
    pods.create(&Default::default(), &pod).await?;
    wait_for("printenv to succeed", Duration::from_secs(60), || async {
        let pod = pods.get("printenv").await?;
        let phase = pod.status.and_then(|s| s.phase).unwrap_or_default();
        anyhow::ensure!(phase != "Failed", "printenv failed");
        Ok((phase == "Succeeded").then_some(()))
    })
    .await?;
    let log = cluster.kubectl_ok(&["logs", "-n", ns.name(), "printenv"])?;
    assert!(log.lines().any(|l| l == "GREETING=from-the-pod"), "{log}");
    let events = Api::<Event>::namespaced(cluster.client().await?, ns.name())
        .list(&ListParams::default().fields("involvedObject.name=printenv"))
        .await?;
    assert!(
        events
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("Pulled")
                && e.message.as_deref().unwrap_or_default().contains(IMAGE)),
        "the kubelet did not pull {IMAGE}: {:?}",
        events
            .items
            .iter()
            .map(|e| e.message.clone())
            .collect::<Vec<_>>()
    );
    Ok(())
}
