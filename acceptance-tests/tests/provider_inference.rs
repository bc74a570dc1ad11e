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
use acceptance_tests::terraform::{self, flat};
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

    // A field another manager adds beside ours (model.servedName by kubectl) is not shown: an apply cannot remove a
    // field it does not own, so planning its removal would be a permanent diff. The next apply names it instead.
    patch_isvc(
        &cluster,
        &ns,
        "echo",
        r#"{"spec":{"model":{"servedName":"sneaky"}}}"#,
    );
    assert_no_changes(&tf, "model.servedName added by kubectl");

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
    let out = acceptance_tests::terraform::flat(&tf.apply().unwrap());
    assert!(
        out.contains("keeps fields this configuration does not set")
            && out.contains("spec.model.servedName is set by another field manager"),
        "{out}"
    );
    let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "echo").unwrap();
    assert_eq!(object["spec"]["model"]["servedName"], "sneaky");
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
    let (succeeded, text) = tf
        .run_flat(&["apply", "-auto-approve", "-no-color"])
        .unwrap();
    assert!(!succeeded, "{text}");
    assert!(text.contains("Timed out waiting"), "{text}");
    assert!(
        text.contains("pods Unschedulable: no node of class 141gi"),
        "{text}"
    );
    // A node of the class may still come (a capacity provider adds one): waiting longer is the advice.
    assert!(
        text.contains("Raise the timeouts block to wait longer"),
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

// Issue 24 case 4 (terraform#36367, tf-kubernetes#1572, plugin-framework#815): decimals Terraform's arithmetic makes
// that are not float64s (`1 - 0.99`, `0.1 + 0.2`) apply, at the nearest float64, with the plan-time facts right; two
// plans afterwards show no changes; the same quantity written differently outside Terraform is no change, a
// different one an in-place update.
#[tokio::test]
async fn decimal_numbers_that_are_not_float64_apply_and_plan_clean() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc-decimals")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let main_tf = format!(
        r#"{}
resource "modelfleet_inference" "decimals" {{
  name = "decimals"
  model {{
    name = "m"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
    resources {{
      requests = {{ cpu = "1000m", memory = "1024Mi" }}
      limits   = {{ memory = "1Gi" }}
    }}
  }}
  gpu {{
    count = 1
    fit {{
      modules {{
        name         = "m"
        weights_gib  = 14.3
        kv_cache_gib = 1 - 0.99
        placement    = "sharded"
      }}
      runtime_gib    = 0.1 + 0.2
      margin_percent = 7
    }}
  }}
}}

output "capacity_class" {{
  value = modelfleet_inference.decimals.capacity_class
}}

output "per_gpu_memory_gib" {{
  value = modelfleet_inference.decimals.per_gpu_memory_gib
}}
"#,
        provider_block(&cluster, &ns)
    );
    let tf = terraform(&cluster, &ns, &main_tf);
    tf.apply().unwrap();
    let outputs: serde_json::Value =
        serde_json::from_str(&tf.ok(&["output", "-json"]).unwrap()).unwrap();
    // (14.3 + 0.01 + 0.3) x 1.07 GiB = 16008 MiB, over the 16gi class's 15360 MiB.
    assert_eq!(outputs["capacity_class"]["value"], "24gi");
    assert_eq!(outputs["per_gpu_memory_gib"]["value"], 16);
    let live = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "decimals").unwrap();
    assert_eq!(
        live["spec"]["gpu"]["fit"]["runtimeGiB"],
        serde_json::json!(0.3)
    );
    assert_eq!(
        live["spec"]["gpu"]["fit"]["modules"][0]["kvCacheGiB"],
        serde_json::json!(0.01)
    );
    assert_no_changes(&tf, "first plan after apply");
    assert_no_changes(&tf, "second plan after apply");

    patch_isvc(
        &cluster,
        &ns,
        "decimals",
        r#"{"spec":{"container":{"resources":{"requests":{"cpu":"1"}}}}}"#,
    );
    assert_no_changes(&tf, "cpu 1000m -> 1 outside Terraform (the same amount)");
    patch_isvc(
        &cluster,
        &ns,
        "decimals",
        r#"{"spec":{"container":{"resources":{"requests":{"cpu":"2"}}}}}"#,
    );
    let plan = plan_changes(&tf, "cpu -> 2 outside Terraform");
    assert!(
        plan.contains("update in-place") && !plan.contains("must be replaced"),
        "{plan}"
    );
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}

// Issue 24 case 4, the class: a value the API server would refuse fails `terraform validate`, on its attribute,
// never first at apply.
#[tokio::test]
async fn values_the_api_server_would_refuse_fail_at_validate() {
    let cluster = Cluster::for_tests();
    let main_tf = format!(
        r#"{}
resource "modelfleet_inference" "bad" {{
  name = "bad"
  model {{
    name = "m"
  }}
  container {{
    image = "i"
    resources {{
      requests = {{ cpu = "banana" }}
    }}
  }}
  gpu {{
    count = 1
    fit {{
      modules {{
        name        = "m"
        weights_gib = 1
        placement   = "sharded"
      }}
      margin_percent = 7.5
    }}
  }}
}}
"#,
        provider_block(&cluster, "default")
    );
    let tf = Terraform::new(&main_tf).unwrap();
    let (succeeded, text) = tf.run_flat(&["validate", "-no-color"]).unwrap();
    assert!(!succeeded, "{text}");
    assert!(text.contains("must be a Kubernetes quantity"), "{text}");
    assert!(
        text.contains("marginPercent in body must be of type integer"),
        "{text}"
    );
}

// Issue 22 (KV cache from the model's shape; a scale-to-zero service no trigger can wake) and issue 18 (a fit that
// leaves no room): `terraform plan` shows the per-GPU KV share and both warnings on their attributes; after apply the
// operator reports the same two warnings as conditions, and plans stay clean.
#[tokio::test]
async fn kv_cache_from_shape_and_warnings_show_in_the_plan_and_the_status() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc-kv-shape")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let _operator = operator(&cluster, &ns);
    let main_tf = format!(
        r#"{}
resource "modelfleet_inference" "llama" {{
  name     = "llama"
  wait_for = "reconciled"
  model {{
    name = "meta-llama/Llama-3.1-70B-Instruct"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
    resources {{
      requests = {{ cpu = "1" }}
    }}
  }}
  gpu {{
    count = 4
    fit {{
      modules {{
        name        = "llama-3.1-70b"
        weights_gib = 131.5
        placement   = "sharded"
        kv_cache {{
          from_shape {{
            layers          = 80
            kv_heads        = 8
            attention_heads = 64
            head_dim        = 128
            dtype           = "bf16"
            context_tokens  = 8192
            sequences       = 16
          }}
        }}
      }}
      runtime_gib    = 0
      margin_percent = 0
    }}
  }}
  replicas {{
    min = 0
    max = 2
  }}
  scaling {{
    triggers {{
      type = "prometheus"
      metadata = {{
        serverAddress = "http://prometheus.monitoring:9090"
        query         = "sum(vllm:num_requests_waiting)"
        threshold     = "5"
      }}
    }}
  }}
}}
"#,
        provider_block(&cluster, &ns)
    );
    let tf = terraform(&cluster, &ns, &main_tf);
    let plan = tf.ok(&["plan", "-no-color"]).unwrap();
    // 40 GiB of KV over 4 shards: 10240 MiB per GPU; 131.5 / 4 + 10 = 42.875 GiB with no runtime and no margin.
    assert!(has_attr(&plan, "kv_cache_per_gpu_mib", "10240"), "{plan}");
    assert!(has_attr(&plan, "per_gpu_memory_gib", "43"), "{plan}");
    let text = flat(&plan);
    assert!(
        text.contains("Warning: GPU fit without headroom")
            && text.contains("gpu.fit: runtimeGiB 0 and marginPercent 0 leave no room"),
        "{text}"
    );
    assert!(
        text.contains(
            "Warning: Scale to zero without a trigger that can wake it (ScaleToZeroUnwakeable)"
        ) && text.contains("scaling.triggers[0] (prometheus on the model's own vllm: metrics)"),
        "{text}"
    );
    // Once each: the plan carries them, not validation (which Terraform runs twice per plan).
    assert!(!text.contains("similar warning elsewhere"), "{text}");
    tf.apply().unwrap();
    let object = wait_for("operator status", Duration::from_secs(60), || async {
        let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "llama");
        Ok(object.filter(|o| o["status"]["observedGeneration"] == o["metadata"]["generation"]))
    })
    .await
    .unwrap();
    let reason = |type_: &str| {
        object["status"]["conditions"]
            .as_array()
            .and_then(|list| list.iter().find(|c| c["type"] == type_))
            .map(|c| {
                format!(
                    "{}/{}",
                    c["status"].as_str().unwrap_or(""),
                    c["reason"].as_str().unwrap_or("")
                )
            })
    };
    assert_eq!(
        reason("ScalingReady").as_deref(),
        Some("False/ScaleToZeroUnwakeable"),
        "{object}"
    );
    let degraded = object["status"]["conditions"]
        .as_array()
        .and_then(|list| list.iter().find(|c| c["type"] == "Degraded"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(degraded["reason"], "NeedsAttention", "{object}");
    assert!(
        degraded["message"]
            .as_str()
            .unwrap_or("")
            .contains("FitWithoutHeadroom: gpu.fit: runtimeGiB 0"),
        "{object}"
    );
    assert_eq!(
        object["status"]["kvCache"],
        serde_json::json!([{"module": "llama-3.1-70b", "totalMiB": 40960, "perGpuMiB": 10240}])
    );
    assert_no_changes(&tf, "plan after apply");
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}

// A reviewer's finding: the server-side apply body came from the configuration, so an attribute under
// `lifecycle { ignore_changes }` that the configuration no longer sets left the body, and the apply of an unrelated
// change removed it from the object (Terraform's plan keeps the prior value of an ignored attribute). The body now
// comes from the planned state, which holds it.
#[tokio::test]
async fn an_ignored_attribute_left_out_of_the_configuration_stays_on_the_object() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc-ignore")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let config = |intent: &str, max: u32| {
        format!(
            r#"{}
resource "modelfleet_inference" "kept" {{
  name = "kept"
  {intent}
  model {{
    name = "kept"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
    args  = []
  }}
  replicas {{
    min = 1
    max = {max}
  }}
  lifecycle {{
    ignore_changes = [intent]
  }}
}}
"#,
            provider_block(&cluster, &ns)
        )
    };
    let tf = terraform(&cluster, &ns, &config("intent = \"active\"", 2));
    tf.apply().unwrap();
    // A configured empty list is set (a reviewer's finding: it was left out of the first write, a permanent diff).
    let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "kept").unwrap();
    assert_eq!(
        object["spec"]["container"]["args"],
        serde_json::json!([]),
        "{object:#}"
    );
    assert_no_changes(&tf, "after the create");
    tf.write("main.tf", &config("", 3)).unwrap();
    let plan = plan_changes(&tf, "max raised, intent left out and ignored");
    assert!(
        !plan.contains("intent"),
        "the ignored intent is no change\n{plan}"
    );
    tf.apply().unwrap();
    let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "kept").unwrap();
    assert_eq!(object["spec"]["replicas"]["max"], 3, "{object:#}");
    assert_eq!(
        object["spec"]["intent"], "active",
        "the ignored intent stays: {object:#}"
    );
    assert_no_changes(&tf, "after the apply");
    // A hunt's finding: once another manager takes the ignored field, an apply of another change must not take it
    // back (a co-owner, which the other manager's next apply then conflicts with).
    let ops_apply = |intent: &str, force: bool| {
        let file = tf.path().join("ops.yaml");
        let manifest = format!(
            "apiVersion: modelfleet.io/v1alpha1\nkind: InferenceService\nmetadata:\n  name: kept\n  \
             namespace: {ns}\nspec:\n  intent: {intent}\n"
        );
        std::fs::write(&file, manifest).unwrap();
        let path = file.to_str().unwrap().to_owned();
        let mut args = vec!["apply", "--server-side", "--field-manager=ops", "-f", &path];
        if force {
            args.push("--force-conflicts");
        }
        cluster.kubectl_ok(&args)
    };
    ops_apply("suspended", true).unwrap();
    tf.write("main.tf", &config("", 4)).unwrap();
    tf.apply().unwrap();
    let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "kept").unwrap();
    assert_eq!(object["spec"]["replicas"]["max"], 4, "{object:#}");
    assert_eq!(object["spec"]["intent"], "suspended", "{object:#}");
    ops_apply("active", false)
        .expect("ops changes its intent without a conflict: Terraform did not take it back");
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}

// The forced first write after an import was inferred from "our field manager owns no spec field", which also holds
// after another manager took every field from Terraform with `--force-conflicts`: the next apply then took them all
// back silently, where taking some of them was a conflict. The private state now records the import and the field
// manager of the last write: everything taken is a conflict as well, and a new `field_manager` still takes over.
#[tokio::test]
async fn fields_another_manager_took_are_a_conflict_however_many() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc-taken")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let config = |max: u32, provider_extra: &str| {
        format!(
            r#"{}
resource "modelfleet_inference" "taken" {{
  name = "taken"
  model {{
    name = "taken"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
  }}
  replicas {{
    min = 1
    max = {max}
  }}
}}
"#,
            terraform::provider_block(&cluster.kubeconfig, &ns, provider_extra)
        )
    };
    let tf = terraform(&cluster, &ns, &config(2, ""));
    tf.apply().unwrap();
    // ops changes every field Terraform set, forcing: Terraform's manager is left owning nothing of the spec.
    let file = tf.path().join("ops.yaml");
    std::fs::write(
        &file,
        format!(
            "apiVersion: modelfleet.io/v1alpha1\nkind: InferenceService\nmetadata:\n  name: taken\n  \
             namespace: {ns}\nspec:\n  model:\n    name: other\n  container:\n    image: hashicorp/http-echo:0.2.3\n  \
             replicas:\n    min: 2\n    max: 5\n"
        ),
    )
    .unwrap();
    let path = file.to_str().unwrap();
    cluster
        .kubectl_ok(&[
            "apply",
            "--server-side",
            "--field-manager=ops",
            "--force-conflicts",
            "-f",
            path,
        ])
        .unwrap();
    let owns_spec = |manager: &str| {
        let fields = cluster
            .kubectl_ok(&[
                "get",
                "inferenceservices.modelfleet.io",
                "taken",
                "-n",
                &ns,
                "--show-managed-fields",
                "-o",
                "jsonpath={.metadata.managedFields}",
            ])
            .unwrap();
        let entries: Vec<serde_json::Value> = serde_json::from_str(&fields).unwrap();
        entries
            .iter()
            .any(|e| e["manager"] == manager && !e["fieldsV1"]["f:spec"].is_null())
    };
    assert!(!owns_spec("terraform-modelfleet"), "ops took every field");
    tf.write("main.tf", &config(3, "")).unwrap();
    let refused = tf.run(&["apply", "-auto-approve", "-no-color"]).unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "the apply took ops' fields back");
    assert!(
        stderr.contains("ops"),
        "the conflict names the manager\n{stderr}"
    );
    let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "taken").unwrap();
    assert_eq!(
        object["spec"]["container"]["image"],
        "hashicorp/http-echo:0.2.3"
    );
    // The user's word: force_conflicts takes them.
    tf.write("main.tf", &config(3, "  force_conflicts = true\n"))
        .unwrap();
    tf.apply().unwrap();
    let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "taken").unwrap();
    assert_eq!(
        object["spec"]["container"]["image"],
        "hashicorp/http-echo:1.0"
    );
    assert_eq!(object["spec"]["replicas"]["max"], 3, "{object:#}");
    assert_no_changes(&tf, "after the forced apply");
    // A new field manager's first write takes over from the old one (the change it makes is no conflict).
    tf.write(
        "main.tf",
        &config(4, "  field_manager = \"terraform-platform\"\n"),
    )
    .unwrap();
    tf.apply().unwrap();
    let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "taken").unwrap();
    assert_eq!(object["spec"]["replicas"]["max"], 4, "{object:#}");
    assert!(owns_spec("terraform-platform"), "the new manager took over");
    // A review's finding: that write forced only `max`, the fields it sent unchanged stayed shared with the old
    // managers, and a change of one of them conflicted with them although nobody took it from Terraform.
    let min_two =
        config(4, "  field_manager = \"terraform-platform\"\n").replace("min = 1", "min = 2");
    tf.write("main.tf", &min_two).unwrap();
    tf.apply().unwrap();
    let object = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "taken").unwrap();
    assert_eq!(object["spec"]["replicas"]["min"], 2, "{object:#}");
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}

// A review's findings: after an import, the first (forced) write took over only the fields it changed, so the next
// change of a field it had sent unchanged conflicted with the manager that created the object; and an object deleted
// and created again outside Terraform (a new UID, every field another manager's) conflicted at the next change.
#[tokio::test]
async fn an_imported_or_recreated_object_takes_later_changes() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc-later")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let spec = |image: &str, max: u32| {
        format!(
            "  model:\n    name: later\n  container:\n    image: {image}\n  replicas:\n    min: 1\n    max: {max}\n"
        )
    };
    let kubectl_with = |verb: &[&str], spec: &str| {
        let file = tempfile::NamedTempFile::new().unwrap();
        let manifest = format!(
            "apiVersion: modelfleet.io/v1alpha1\nkind: InferenceService\nmetadata:\n  name: later\n  \
             namespace: {ns}\nspec:\n{spec}"
        );
        std::fs::write(file.path(), manifest).unwrap();
        let mut args = verb.to_vec();
        args.extend(["-f", file.path().to_str().unwrap()]);
        cluster.kubectl_ok(&args).unwrap();
    };
    kubectl_with(
        &["apply", "--server-side", "--field-manager=ops"],
        &spec("hashicorp/http-echo:1.0", 2),
    );
    let config = |image: &str, max: u32| {
        format!(
            r#"{}
resource "modelfleet_inference" "later" {{
  name = "later"
  model {{
    name = "later"
  }}
  container {{
    image = "{image}"
  }}
  replicas {{
    min = 1
    max = {max}
  }}
}}
"#,
            provider_block(&cluster, &ns)
        )
    };
    let tf = terraform(&cluster, &ns, &config("hashicorp/http-echo:1.0", 3));
    tf.ok(&[
        "import",
        "-no-color",
        "modelfleet_inference.later",
        &format!("{ns}/later"),
    ])
    .unwrap();
    tf.apply().unwrap();
    tf.write("main.tf", &config("hashicorp/http-echo:0.2.3", 3))
        .unwrap();
    tf.apply()
        .expect("a field shared with ops since the import is no conflict");
    let image = |cluster: &Cluster| {
        get_json(cluster, &ns, "inferenceservices.modelfleet.io", "later").unwrap()["spec"]["container"]["image"]
            .clone()
    };
    assert_eq!(image(&cluster), "hashicorp/http-echo:0.2.3");
    // Deleted and created again by kubectl (a restore): a new UID, every field kubectl's.
    cluster
        .kubectl_ok(&[
            "delete",
            "inferenceservices.modelfleet.io",
            "later",
            "-n",
            &ns,
            "--wait",
        ])
        .unwrap();
    kubectl_with(&["create"], &spec("hashicorp/http-echo:0.2.3", 3));
    tf.write("main.tf", &config("hashicorp/http-echo:1.0", 3))
        .unwrap();
    tf.apply().expect("the object created again is taken over");
    assert_eq!(image(&cluster), "hashicorp/http-echo:1.0");
    assert_no_changes(&tf, "after taking over the object created again");
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}

/// A user's finding: two resources of one object name in one configuration both applied ("Creation complete" twice,
/// each later apply flipping the object between them). Creates are create-only now: whichever write comes second
/// fails with "already exists", the object is the first's, and the next apply says the same instead of flipping it.
#[tokio::test]
async fn two_resources_of_one_name_do_not_both_create_it() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-isvc-twins")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let twin = |resource: &str| {
        format!(
            r#"
resource "modelfleet_inference" "{resource}" {{
  name = "twin"
  model {{
    name = "{resource}"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
  }}
}}
"#
        )
    };
    let main_tf = format!(
        "{}{}{}",
        provider_block(&cluster, &ns),
        twin("a"),
        twin("b")
    );
    let tf = terraform(&cluster, &ns, &main_tf);
    for attempt in ["first apply", "second apply"] {
        let (ok, text) = tf
            .run_flat(&["apply", "-auto-approve", "-no-color"])
            .unwrap();
        assert!(!ok, "{attempt}: one of the twins must fail\n{text}");
        assert_eq!(
            text.matches(&format!("InferenceService {ns}/twin already exists"))
                .count(),
            1,
            "{attempt}\n{text}"
        );
        let state = tf.ok(&["state", "list"]).unwrap();
        assert_eq!(
            state.lines().count(),
            1,
            "{attempt}: one twin in state\n{state}"
        );
        let model = get_json(&cluster, &ns, "inferenceservices.modelfleet.io", "twin")
            .expect("the object exists")["spec"]["model"]["name"]
            .clone();
        assert!(
            state.contains(&format!("modelfleet_inference.{}", model.as_str().unwrap())),
            "{attempt}: the object is the one in state ({model})\n{state}"
        );
    }
}
