//! `make demo` run non-interactively on its own instance (issue 8): terraform apply of the
//! quickstart, children placed on the simulated nodes and the echo service on the real node
//! (issue 14) answering the printed command through its Service, statuses as the demo explains
//! them, a clean plan, and a destroy that leaves nothing behind.

use std::process::Command;

use acceptance_tests::cluster::repo_root;
use serde_json::Value;

const INSTANCE: &str = "test-demo";

fn demo(cmd: &str) -> (bool, String) {
    let out = Command::new("bash")
        .arg(repo_root().join("acceptance-tests/cluster/scripts/demo.sh"))
        .arg(cmd)
        .env("DEMO_INSTANCE", INSTANCE)
        .output()
        .expect("running demo.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A failed demo step's output for a panic message: its last lines (the error `die` printed) first, as
/// long outputs are cut in the middle by CI logs, then the whole output.
fn failure(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= 30 {
        return format!("\n{text}");
    }
    let tail = lines[lines.len() - 30..].join("\n");
    format!("its last lines:\n{tail}\n\nthe whole output:\n{text}")
}

fn kubectl_json(args: &[&str]) -> Value {
    let dir = repo_root().join(".local").join(INSTANCE);
    let out = Command::new(dir.join("bin/kubectl"))
        .env("KUBECONFIG", dir.join("kubeconfig"))
        .args(args)
        .args(["-o", "json"])
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("kubectl json")
}

fn items(kinds: &str) -> Vec<Value> {
    kubectl_json(&["get", kinds, "-n", "demo"])["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn pod_of(prefix: &str) -> Value {
    items("pods")
        .into_iter()
        .find(|p| {
            p["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .starts_with(prefix)
        })
        .unwrap_or_else(|| panic!("no pod {prefix}*"))
}

/// Runs the "explore it" lines the demo prints (`export KUBECONFIG=...` and the kubectl command
/// after it) as a user would paste them, and checks they list the demo's resources.
fn explore_as_printed(output: &str) {
    let lines: Vec<&str> = output.lines().map(str::trim).collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("export KUBECONFIG="))
        .unwrap_or_else(|| panic!("the demo prints no export KUBECONFIG= line:\n{output}"));
    let script = format!("set -e\n{}\n{}\n", lines[at], lines[at + 1]);
    let out = Command::new("bash")
        .args(["-c", &script])
        .env_remove("KUBECONFIG")
        .output()
        .expect("bash");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && listed.contains("llama-70b") && listed.contains("corpus-v3"),
        "{script}\n{listed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs the `kubectl scale` the demo prints for the vllm service (what KEDA does on queue work) with the demo's
/// kubeconfig, and waits for its pod to be scheduled.
fn wake_vllm_as_printed(output: &str) {
    let printed = output
        .lines()
        .find_map(|l| {
            l.split("plays KEDA")
                .next()?
                .split("locally: ")
                .nth(1)
                .map(str::trim)
        })
        .unwrap_or_else(|| panic!("the demo prints no kubectl scale for vllm:\n{output}"));
    let args: Vec<&str> = printed.split_whitespace().skip(1).collect();
    let dir = repo_root().join(".local").join(INSTANCE);
    let out = Command::new(dir.join("bin/kubectl"))
        .env("KUBECONFIG", dir.join("kubeconfig"))
        .args(&args)
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{printed}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for _ in 0..100 {
        let placed = items("pods").iter().any(|p| {
            p["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .starts_with("vllm")
                && !p["spec"]["nodeName"].is_null()
        });
        if placed {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    panic!("no vllm pod was scheduled after {printed}");
}

struct Down;
impl Drop for Down {
    fn drop(&mut self) {
        let (ok, text) = demo("down");
        assert!(
            ok || std::thread::panicking(),
            "demo down failed: {}",
            failure(&text)
        );
    }
}

/// Runs the `ip netns exec ... curl` line the demo prints for the echo service, as a user would
/// paste it, and checks the echo server answers through the Service.
fn curl_as_printed(output: &str) {
    let line = output
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("ip netns exec ") && l.contains(" curl "))
        .unwrap_or_else(|| {
            panic!("the demo prints no curl command for the echo service:\n{output}")
        });
    let out = Command::new("bash")
        .args(["-c", line])
        .output()
        .expect("bash");
    let body = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success()
            && body.starts_with("hello from model fleet\nrequest: GET / HTTP/1.1\npod: echo-"),
        "{line}\n{body}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The loopback route the demo and the README give: `kubectl port-forward -n demo service/echo`
/// (on a free port here), then plain `curl` to 127.0.0.1.
fn port_forward_reaches_the_echo_service() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dir = repo_root().join(".local").join(INSTANCE);
    let mut forward = Command::new(dir.join("bin/kubectl"))
        .env("KUBECONFIG", dir.join("kubeconfig"))
        .args(["port-forward", "-n", "demo", "service/echo"])
        .arg(format!("{port}:80"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("kubectl port-forward");
    let mut body = String::new();
    for _ in 0..50 {
        let out = Command::new("curl")
            .args(["-s", "--max-time", "5"])
            .arg(format!("http://127.0.0.1:{port}/over-loopback"))
            .output()
            .expect("curl");
        body = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let _ = forward.kill();
    let _ = forward.wait();
    assert!(
        body.contains("request: GET /over-loopback HTTP/1.1"),
        "no answer over port-forward: {body}"
    );
}

#[test]
fn the_demo_applies_the_quickstart_explains_it_and_destroys_cleanly() {
    let _down = Down;
    let (ok, text) = demo("up");
    assert!(ok, "make demo failed: {}", failure(&text));
    // The echo service runs on the real node when this machine can run one (else, on the
    // simulated CPU nodes, the demo says why).
    let no_real_node = repo_root()
        .join(".local")
        .join(INSTANCE)
        .join("node/unavailable");
    let echo_line = if no_real_node.exists() {
        eprintln!(
            "no real node: {}",
            std::fs::read_to_string(&no_real_node).unwrap_or_default()
        );
        "echo: Ready, 2 replica(s) on kwok-cpu-"
    } else {
        curl_as_printed(&text);
        port_forward_reaches_the_echo_service();
        // The operator is the chart's pod on the real node, not a background process.
        let operator = kubectl_json(&["get", "pods", "-n", "model-fleet-system"]);
        let pods = operator["items"].as_array().cloned().unwrap_or_default();
        assert!(
            pods.len() == 1 && pods[0]["spec"]["nodeName"] == "real-1",
            "one operator pod from the chart on real-1: {operator}"
        );
        assert!(text.contains("helm install (a new instance)"), "{text}");
        "echo: Ready, 2 replica(s) on real-1"
    };
    for line in [
        "terraform plan right after apply: no changes",
        echo_line,
        "fit-141: Pending, no 141gi node: a capacity provider such as Karpenter would add one",
        "vllm: 0 replicas until its queue has work (born at its floor, no GPU held), GPU class 24gi",
        "llama-70b: Ready, 1 replica(s) on kwok-gpu-80gi, GPU class 80gi, 54 GiB per GPU",
        "finetune-1: Succeeded (Job finetune-1 on kwok-gpu-24gi",
        "corpus-v3: dataset version 3, Ready=True",
        "\"per_gpu_memory_gib\" = 54",
        "\"echo\" = \"http://model.localhost/\"",
    ] {
        assert!(text.contains(line), "demo output lacks {line:?}:\n{text}");
    }
    explore_as_printed(&text);
    assert_eq!(pod_of("llama-70b")["spec"]["nodeName"], "kwok-gpu-80gi");
    assert_eq!(pod_of("fit-141")["status"]["phase"], "Pending");
    assert!(pod_of("fit-141")["spec"]["nodeName"].is_null());
    // Born at its floor of 0 (issue 24): no vLLM pod until KEDA would wake it; playing KEDA as the demo says puts
    // one on the 24gi node.
    assert!(
        items("pods").iter().all(|p| !p["metadata"]["name"]
            .as_str()
            .unwrap_or("")
            .starts_with("vllm")),
        "a pod for the scale-to-zero vllm service"
    );
    wake_vllm_as_printed(&text);
    assert_eq!(pod_of("vllm")["spec"]["nodeName"], "kwok-gpu-24gi");
    let kinds: Vec<String> = items("scaledobjects,httproutes")
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        ["ScaledObject/vllm", "HTTPRoute/echo", "HTTPRoute/vllm"]
    );

    // A second run is idempotent: nothing to add, change or destroy.
    let (ok, again) = demo("up");
    assert!(ok, "second make demo failed: {}", failure(&again));
    assert!(
        again.contains("Resources: 0 added, 0 changed, 0 destroyed")
            && again.contains("the operator is already running this build"),
        "{again}"
    );

    // Leftovers of an earlier demo: the control plane is gone (stopped, or the machine rebooted)
    // while the Terraform state and the operator process remain. `make demo` starts a fresh
    // instance, restarts the operator against it and re-creates what the state still lists.
    let stop = Command::new("bash")
        .arg(repo_root().join("acceptance-tests/cluster/scripts/cluster.sh"))
        .args(["down", INSTANCE])
        .output()
        .expect("cluster.sh down");
    assert!(stop.status.success());
    let (ok, recovered) = demo("up");
    assert!(
        ok,
        "make demo after the instance was stopped failed:\n{recovered}"
    );
    for line in [
        "restarting the operator",
        "Resources: 6 added, 0 changed, 0 destroyed",
        "terraform plan right after apply: no changes",
        "llama-70b: Ready, 1 replica(s) on kwok-gpu-80gi",
    ] {
        assert!(recovered.contains(line), "lacks {line:?}:\n{recovered}");
    }

    let (ok, text) = demo("destroy");
    assert!(ok, "terraform destroy failed: {}", failure(&text));
    // The Model Fleet objects are gone when destroy returns; their children follow through garbage
    // collection, which on a fresh instance may first have to discover the Gateway API and KEDA
    // kinds (its discovery resync is 30 s).
    let kinds = "inferenceservices,trainingruns,datasets,deployments,services,jobs,scaledobjects,httproutes";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut left = items(kinds);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        assert!(
            left.iter()
                .all(|o| !["InferenceService", "TrainingRun", "Dataset"]
                    .contains(&o["kind"].as_str().unwrap_or(""))),
            "Model Fleet objects left after destroy: {left:#?}"
        );
        std::thread::sleep(std::time::Duration::from_secs(1));
        left = items(kinds);
    }
    assert!(left.is_empty(), "left behind after destroy: {left:#?}");
}
