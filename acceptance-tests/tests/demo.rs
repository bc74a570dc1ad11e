//! `make demo` run non-interactively on its own instance (issue 8): terraform apply of the
//! quickstart, children placed on the simulated nodes, statuses as the demo explains them, a clean
//! plan, and a destroy that leaves nothing behind.

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

struct Down;
impl Drop for Down {
    fn drop(&mut self) {
        let (ok, text) = demo("down");
        assert!(ok || std::thread::panicking(), "demo down failed:\n{text}");
    }
}

#[test]
fn the_demo_applies_the_quickstart_explains_it_and_destroys_cleanly() {
    let _down = Down;
    let (ok, text) = demo("up");
    assert!(ok, "make demo failed:\n{text}");
    for line in [
        "terraform plan right after apply: no changes",
        "echo: Ready, 2 replica(s) on kwok-cpu-",
        "fit-141: Pending, no 141gi node: a capacity provider such as Karpenter would add one",
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
    assert!(ok, "second make demo failed:\n{again}");
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
    assert!(ok, "terraform destroy failed:\n{text}");
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
