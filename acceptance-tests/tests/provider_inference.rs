//! `modelfleet_inference` end to end (issue 7): the real Terraform CLI, the provider built from this
//! workspace (dev_overrides), the local control plane with simulated nodes and, where status
//! matters, an operator process (chart ClusterRole) watching the test's namespace.
//!
//! Stories: the gateway + scaling example becomes Ready with `wait_for = "ready"`, then plans
//! clean right after apply and after the operator rewrote status; intent and replica bounds change
//! in place; a rename replaces; import then no changes; deletion outside Terraform plans a create;
//! destroy leaves no custom resource and no child. `wait_for = "ready"` on a 141gi fit times out
//! naming the missing class and keeps the object in state (tainted). Cases P-01 (quantities),
//! P-02 (import), P-03(b) (foreign finalizer) and P-04 (defaults left out).

use std::time::Duration;

use acceptance_tests::cluster::repo_root;
use acceptance_tests::process::operator_kubeconfig;
use acceptance_tests::terraform;
use acceptance_tests::{Cluster, OperatorProcess, Terraform, wait_for};

/// An operator for `ns` with the namespace's `shared` Gateway as default and a short resync.
fn operator(cluster: &Cluster, ns: &str) -> OperatorProcess {
    let kubeconfig = operator_kubeconfig(cluster).expect("operator kubeconfig");
    let gateway = format!("{ns}/shared");
    OperatorProcess::start(
        cluster,
        &kubeconfig,
        ns,
        "fleet",
        &["--default-gateway", &gateway, "--resync-seconds", "2"],
        &[],
    )
    .expect("operator starts")
}

fn example(dir: &str) -> String {
    std::fs::read_to_string(
        repo_root()
            .join("examples/terraform")
            .join(dir)
            .join("main.tf"),
    )
    .expect("example")
}

/// A working folder for `main_tf` with the example variables set for `ns`.
fn terraform(cluster: &Cluster, ns: &str, main_tf: &str) -> Terraform {
    let tf = Terraform::new(main_tf).expect("terraform folder");
    tf.write(
        "terraform.tfvars",
        &format!(
            "kubeconfig_path = \"{}\"\nnamespace = \"{ns}\"\n",
            cluster.kubeconfig.display()
        ),
    )
    .unwrap();
    tf
}

fn provider_block(cluster: &Cluster, ns: &str) -> String {
    terraform::provider_block(&cluster.kubeconfig, ns, "")
}

/// Terraform output with the diagnostic frame (`│`) removed and line wraps joined, so messages can
/// be matched whatever the wrap width.
fn flat(text: &str) -> String {
    text.replace('│', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `text` (plan or state output) has a line `name = value` (any alignment, `+` allowed).
fn has_attr(text: &str, name: &str, value: &str) -> bool {
    text.lines().any(|line| {
        let words: Vec<&str> = line.split_whitespace().filter(|w| *w != "+").collect();
        words == [name, "=", value]
    })
}

fn assert_no_changes(tf: &Terraform, when: &str) {
    let (code, text) = tf.plan_exit_code().unwrap();
    assert_eq!(code, 0, "{when}: expected no changes\n{text}");
}

fn plan_changes(tf: &Terraform, when: &str) -> String {
    let (code, text) = tf.plan_exit_code().unwrap();
    assert_eq!(code, 2, "{when}: expected changes\n{text}");
    text
}

fn get_json(cluster: &Cluster, ns: &str, kind: &str, name: &str) -> Option<serde_json::Value> {
    let out = cluster
        .kubectl()
        .args(["get", kind, "-n", ns, name, "-o", "json"])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

fn count(cluster: &Cluster, ns: &str, kinds: &str) -> usize {
    cluster
        .kubectl_ok(&["get", kinds, "-n", ns, "-o", "name"])
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
}

fn patch_isvc(cluster: &Cluster, ns: &str, name: &str, patch: &str) {
    cluster
        .kubectl_ok(&[
            "patch",
            "inferenceservices.modelfleet.io",
            "-n",
            ns,
            name,
            "--type",
            "merge",
            "-p",
            patch,
        ])
        .unwrap();
}

#[tokio::test]
async fn gateway_scaling_example_ready_update_rename_import_drift_destroy() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let _operator = operator(&cluster, &ns);
    let main_tf = example("inference-gateway-scaling");
    let tf = terraform(&cluster, &ns, &main_tf);

    // wait_for = "ready": apply returns once the simulated pods are Ready.
    let out = tf.apply().unwrap();
    assert!(out.contains("url = \"http://model.localhost/\""), "{out}");
    let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "echo").unwrap();
    assert_eq!(
        object["spec"]["container"]["resources"]["requests"]["cpu"],
        "0.5"
    );
    let state = tf
        .ok(&["state", "show", "-no-color", "modelfleet_inference.echo"])
        .unwrap();
    assert!(has_attr(&state, "ready", "true"), "{state}");
    assert_no_changes(&tf, "right after apply");
    // The operator keeps reconciling (resync 2 s); status changes must not show as a diff.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_no_changes(&tf, "after the operator updated status");

    // P-01: an equal quantity edited outside Terraform is no change; a different one is.
    patch_isvc(
        &cluster,
        &ns,
        "echo",
        r#"{"spec":{"container":{"resources":{"requests":{"cpu":"500m"}}}}}"#,
    );
    assert_no_changes(&tf, "cpu 500m written by kubectl");
    patch_isvc(
        &cluster,
        &ns,
        "echo",
        r#"{"spec":{"container":{"resources":{"requests":{"cpu":"600m"}}}}}"#,
    );
    let text = plan_changes(&tf, "cpu 600m written by kubectl");
    assert!(text.contains("\"600m\" -> \"0.5\""), "{text}");
    assert!(text.contains("updated in-place"), "{text}");

    // kubectl-patch now co-owns the field; with force_conflicts = false an apply of another
    // value would be a field manager conflict (by design), so the edit is put back first.
    patch_isvc(
        &cluster,
        &ns,
        "echo",
        r#"{"spec":{"container":{"resources":{"requests":{"cpu":"0.5"}}}}}"#,
    );
    assert_no_changes(&tf, "cpu put back to 0.5");

    // In-place update of intent and replica bounds.
    let updated = main_tf
        .replace("min = 1\n    max = 3", "min = 2\n    max = 4")
        .replace(
            "wait_for = \"ready\"",
            "wait_for = \"reconciled\"\n  intent   = \"active\"",
        );
    assert_ne!(updated, main_tf);
    tf.write("main.tf", &updated).unwrap();
    let text = plan_changes(&tf, "intent and replicas changed");
    assert!(
        text.contains("updated in-place") && !text.contains("must be replaced"),
        "{text}"
    );
    tf.apply().unwrap();
    let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "echo").unwrap();
    assert_eq!(object["spec"]["replicas"]["max"], 4);
    assert_eq!(object["spec"]["intent"], "active");
    assert_eq!(
        object["spec"]["container"]["resources"]["requests"]["cpu"],
        "0.5"
    );
    assert_eq!(
        object["status"]["observedGeneration"], object["metadata"]["generation"],
        "wait_for = reconciled"
    );
    assert_no_changes(&tf, "after the update");

    // A rename replaces.
    let renamed = updated.replace("name     = \"echo\"", "name     = \"echo2\"");
    assert_ne!(renamed, updated);
    tf.write("main.tf", &renamed).unwrap();
    let text = plan_changes(&tf, "renamed");
    assert!(text.contains("must be replaced"), "{text}");
    tf.apply().unwrap();
    assert!(get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "echo").is_none());
    assert!(get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "echo2").is_some());

    // Import then no changes. Import cannot know the Terraform-only settings (wait_for,
    // timeouts), so the configuration leaves them out.
    let importable = renamed
        .replace("  wait_for = \"reconciled\"\n", "")
        .replace(
            "  timeouts {\n    create = \"3m\"\n    update = \"3m\"\n  }\n",
            "",
        );
    assert!(!importable.contains("wait_for") && !importable.contains("timeouts"));
    tf.write("main.tf", &importable).unwrap();
    tf.ok(&["state", "rm", "modelfleet_inference.echo"])
        .unwrap();
    tf.ok(&[
        "import",
        "-no-color",
        "modelfleet_inference.echo",
        &format!("{ns}/echo2"),
    ])
    .unwrap();
    assert_no_changes(&tf, "after import");

    // Setting the Terraform-only settings again after the import: one in-place update that
    // changes nothing in the cluster.
    let before = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "echo2").unwrap();
    tf.write("main.tf", &renamed).unwrap();
    let text = plan_changes(&tf, "wait_for and timeouts after import");
    assert!(
        text.contains("1 to change") && text.contains("wait_for"),
        "{text}"
    );
    tf.apply().unwrap();
    let after = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "echo2").unwrap();
    assert_eq!(
        before["metadata"]["resourceVersion"], after["metadata"]["resourceVersion"],
        "setting wait_for/timeouts after an import wrote to the cluster"
    );
    assert_no_changes(&tf, "after setting wait_for and timeouts");

    // Deleted outside Terraform: the plan creates it again.
    cluster
        .kubectl_ok(&[
            "delete",
            "inferenceservices.modelfleet.io",
            "-n",
            &ns,
            "echo2",
            "--wait",
        ])
        .unwrap();
    let text = plan_changes(&tf, "deleted with kubectl");
    assert!(text.contains("will be created"), "{text}");
    tf.apply().unwrap();
    assert_no_changes(&tf, "after re-create");

    // Destroy leaves no custom resource and, once the garbage collector ran, no child.
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
    assert_eq!(count(&cluster, &ns, "inferenceservices.modelfleet.io"), 0);
    let children =
        "deployments,services,httproutes.gateway.networking.k8s.io,scaledobjects.keda.sh";
    wait_for("children deleted", Duration::from_secs(60), || async {
        let left = count(&cluster, &ns, children);
        Ok((left == 0).then_some(()))
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn ready_times_out_naming_the_missing_class_and_stays_in_state() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc-141")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let _operator = operator(&cluster, &ns);
    // 120 GiB + 2 GiB runtime, +10%: 134.2 GiB per GPU -> class 141gi, which no node offers.
    let main_tf = format!(
        r#"{}
resource "modelfleet_inference" "big" {{
  name     = "big"
  wait_for = "ready"
  model {{
    name = "big"
  }}
  container {{
    image = "vllm/vllm-openai:v0.8.5"
  }}
  gpu {{
    count = 1
    fit {{
      modules {{
        name        = "weights"
        weights_gib = 120
        placement   = "sharded"
      }}
    }}
  }}
  timeouts {{
    create = "25s"
  }}
}}
"#,
        provider_block(&cluster, &ns)
    );
    let tf = terraform(&cluster, &ns, &main_tf);
    let plan = tf.ok(&["plan", "-no-color"]).unwrap();
    assert!(has_attr(&plan, "capacity_class", "\"141gi\""), "{plan}");
    let out = tf.run(&["apply", "-auto-approve", "-no-color"]).unwrap();
    let text = flat(&format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ));
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("Timed out waiting"), "{text}");
    assert!(
        text.contains("pods Unschedulable: no node of class 141gi"),
        "{text}"
    );
    // The object exists and is in state, tainted: the next plan replaces it, never creates a
    // second one.
    assert!(get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "big").is_some());
    let list = tf.ok(&["state", "list"]).unwrap();
    assert!(list.contains("modelfleet_inference.big"), "{list}");
    let text = plan_changes(&tf, "after the timeout");
    assert!(text.contains("tainted"), "{text}");
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}

#[tokio::test]
async fn without_an_operator_a_wait_says_so() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc-noop")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let main_tf = format!(
        r#"{}
resource "modelfleet_inference" "lonely" {{
  name     = "lonely"
  wait_for = "reconciled"
  model {{
    name = "m"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
  }}
  timeouts {{
    create = "3s"
  }}
}}
"#,
        provider_block(&cluster, &ns)
    );
    let tf = terraform(&cluster, &ns, &main_tf);
    let out = tf.run(&["apply", "-auto-approve", "-no-color"]).unwrap();
    let text = flat(&String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success());
    assert!(
        text.contains("no status: is the operator running?"),
        "{text}"
    );
    assert!(
        tf.ok(&["state", "list"])
            .unwrap()
            .contains("modelfleet_inference.lonely")
    );
}

/// Case P-02: an InferenceService created with kubectl, imported, plans no changes; malformed
/// and missing IDs are clear errors.
#[tokio::test]
async fn p02_import_then_no_changes() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc-import")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let manifest = format!(
        r#"apiVersion: modelfleet.io/v1alpha1
kind: InferenceService
metadata:
  name: chat
  namespace: {ns}
spec:
  model:
    name: chat
  container:
    image: hashicorp/http-echo:1.0
    port: 8080
    resources:
      requests:
        cpu: 50m
        memory: 32Mi
  replicas:
    min: 1
    max: 2
  gateway:
    hostnames: [chat.localhost]
"#
    );
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), manifest).unwrap();
    cluster
        .kubectl_ok(&[
            "apply",
            "--server-side",
            "-f",
            file.path().to_str().unwrap(),
        ])
        .unwrap();
    let main_tf = format!(
        r#"{}
resource "modelfleet_inference" "chat" {{
  name = "chat"
  model {{
    name = "chat"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
    port  = 8080
    resources {{
      requests = {{ cpu = "50m", memory = "32Mi" }}
    }}
  }}
  replicas {{
    min = 1
    max = 2
  }}
  gateway {{
    hostnames = ["chat.localhost"]
  }}
}}
"#,
        provider_block(&cluster, &ns)
    );
    let tf = terraform(&cluster, &ns, &main_tf);
    let bad = tf
        .run(&["import", "-no-color", "modelfleet_inference.chat", "chat"])
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("Invalid import ID"));
    let missing = tf
        .run(&[
            "import",
            "-no-color",
            "modelfleet_inference.chat",
            &format!("{ns}/nope"),
        ])
        .unwrap();
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("non-existent"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
    tf.ok(&[
        "import",
        "-no-color",
        "modelfleet_inference.chat",
        &format!("{ns}/chat"),
    ])
    .unwrap();
    let state = tf
        .ok(&["state", "show", "-no-color", "modelfleet_inference.chat"])
        .unwrap();
    assert!(state.contains("http://chat.localhost/"), "{state}");
    assert_no_changes(&tf, "after import");
}

/// Case P-03(b) for inference: a foreign finalizer blocks destroy, which fails at the delete
/// timeout naming it and keeps the resource in state.
#[tokio::test]
async fn p03b_destroy_blocked_by_a_foreign_finalizer() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc-fin")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let main_tf = format!(
        r#"{}
resource "modelfleet_inference" "held" {{
  name = "held"
  model {{
    name = "m"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
  }}
  timeouts {{
    delete = "30s"
  }}
}}
"#,
        provider_block(&cluster, &ns)
    );
    let tf = terraform(&cluster, &ns, &main_tf);
    tf.apply().unwrap();
    patch_isvc(
        &cluster,
        &ns,
        "held",
        r#"{"metadata":{"finalizers":["example.test/hold"]}}"#,
    );
    let started = std::time::Instant::now();
    let out = tf.run(&["destroy", "-auto-approve", "-no-color"]).unwrap();
    let text = flat(&String::from_utf8_lossy(&out.stderr));
    assert!(
        !out.status.success(),
        "destroy must not succeed while the object exists"
    );
    assert!(started.elapsed() >= Duration::from_secs(30));
    assert!(text.contains("example.test/hold"), "{text}");
    assert!(
        tf.ok(&["state", "list"])
            .unwrap()
            .contains("modelfleet_inference.held")
    );
    patch_isvc(&cluster, &ns, "held", r#"{"metadata":{"finalizers":null}}"#);
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
    assert!(get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "held").is_none());
}

/// Case P-04: every optional attribute with a default left out; plan succeeds, and after apply two
/// plans in a row (with the operator writing status in between) show no changes.
#[tokio::test]
async fn p04_defaults_left_out_plan_clean_twice() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc-p04")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let _operator = operator(&cluster, &ns);
    let main_tf = format!(
        r#"{}
resource "modelfleet_inference" "plain" {{
  name = "plain"
  model {{
    name = "plain"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
  }}
  gpu {{
    count = 1
    fit {{
      modules {{
        name        = "w"
        weights_gib = 7
        placement   = "sharded"
      }}
    }}
  }}
  gateway {{
    hostnames = ["plain.localhost"]
  }}
}}
"#,
        provider_block(&cluster, &ns)
    );
    let tf = terraform(&cluster, &ns, &main_tf);
    let plan = tf.ok(&["plan", "-no-color"]).unwrap();
    // (7 + 2) x 1.1 = 9.9 GiB -> 10 -> 16gi; url with the default prefix.
    assert!(has_attr(&plan, "capacity_class", "\"16gi\""), "{plan}");
    assert!(has_attr(&plan, "per_gpu_memory_gib", "10"), "{plan}");
    assert!(
        has_attr(&plan, "url", "\"http://plain.localhost/\""),
        "{plan}"
    );
    tf.apply().unwrap();
    assert_no_changes(&tf, "first plan after apply");
    wait_for("operator status", Duration::from_secs(30), || async {
        let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "plain");
        Ok(object.filter(|o| o["status"]["observedGeneration"] == o["metadata"]["generation"]))
    })
    .await
    .unwrap();
    assert_no_changes(&tf, "second plan after the operator wrote status");
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}
