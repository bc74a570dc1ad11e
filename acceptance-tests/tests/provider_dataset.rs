//! `modelfleet_dataset` end to end: the real Terraform CLI, the provider built from this workspace
//! (dev_overrides) and the local control plane. Covers the issue 6 scenarios: apply, plan with no
//! changes, in-place update of `allowed_service_accounts`, replacement on a version change, drift
//! (deleted with kubectl plans a create, case P-03(a)), import (then no changes; clear errors for
//! an ID without namespace or a missing object), field-manager conflicts and `force_conflicts`,
//! destroy blocked by a foreign finalizer (case P-03(b) for datasets) and defaults left out (case
//! P-04 for datasets: two clean plans after apply).

use std::time::{Duration, Instant};

use acceptance_tests::{Cluster, Terraform, terraform};

fn provider_block(cluster: &Cluster, namespace: &str, force_conflicts: bool) -> String {
    terraform::provider_block(
        &cluster.kubeconfig,
        namespace,
        &format!("  force_conflicts = {force_conflicts}\n"),
    )
}

fn dataset(version: &str, accounts: &str, extra: &str) -> String {
    format!(
        r#"
resource "modelfleet_dataset" "corpus" {{
  name    = "corpus"
  version = "{version}"
  format  = "parquet"
  source {{
    uri = "s3://bucket/corpus/v{version}/"
  }}
  splits "train" {{
    uri     = "s3://bucket/corpus/v{version}/train/"
    records = 123456789012
  }}
  allowed_service_accounts = [{accounts}]
  {extra}
}}
"#
    )
}

fn get_json(cluster: &Cluster, namespace: &str, name: &str) -> Option<serde_json::Value> {
    let out = cluster
        .kubectl()
        .args([
            "get",
            "datasets.modelfleet.io",
            "-n",
            namespace,
            name,
            "-o",
            "json",
            "--show-managed-fields",
        ])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

fn assert_no_changes(tf: &Terraform, when: &str) {
    let (code, text) = tf.plan_exit_code().unwrap();
    assert_eq!(code, 0, "{when}: expected no changes\n{text}");
}

#[tokio::test]
async fn lifecycle_update_replace_drift_import_destroy() {
    let cluster = Cluster::for_tests();
    cluster
        .install_model_fleet_crds()
        .expect("Model Fleet CRDs install");
    let ns = cluster.namespace("tf-dataset").await.unwrap();
    let provider = provider_block(&cluster, ns.name(), false);
    let tf = Terraform::new(&format!("{provider}{}", dataset("3", r#""trainer""#, ""))).unwrap();

    tf.apply().unwrap();
    let object = get_json(&cluster, ns.name(), "corpus").expect("created");
    assert_eq!(object["spec"]["version"], "3");
    assert_eq!(
        object["spec"]["splits"]["train"]["records"],
        123456789012u64
    );
    assert!(
        object["spec"].get("description").is_none(),
        "null stays absent"
    );
    let managers: Vec<&str> = object["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert_eq!(managers, ["terraform-modelfleet"]);
    assert_no_changes(&tf, "after create");

    // In-place update of the one mutable field.
    tf.write(
        "main.tf",
        &format!("{provider}{}", dataset("3", r#""trainer", "eval""#, "")),
    )
    .unwrap();
    let (code, plan) = tf.plan_exit_code().unwrap();
    assert_eq!(code, 2);
    assert!(
        plan.contains("update in-place") && !plan.contains("forces replacement"),
        "{plan}"
    );
    // The plan's header names the CLI: "Terraform will perform ...", "OpenTofu will perform ...".
    assert!(
        plan.contains(&format!(
            "{} will perform the following actions:",
            tf.cli.product()
        )),
        "{plan}"
    );
    let uid = object["metadata"]["uid"].clone();
    tf.apply().unwrap();
    let object = get_json(&cluster, ns.name(), "corpus").unwrap();
    assert_eq!(object["metadata"]["uid"], uid, "updated in place");
    assert_eq!(
        object["spec"]["allowedServiceAccounts"],
        serde_json::json!(["trainer", "eval"])
    );
    assert_no_changes(&tf, "after update");

    // A new version is a new object.
    tf.write(
        "main.tf",
        &format!("{provider}{}", dataset("4", r#""trainer""#, "")),
    )
    .unwrap();
    let (_, plan) = tf.plan_exit_code().unwrap();
    assert!(
        plan.contains(r#"version                  = "3" -> "4" # forces replacement"#),
        "{plan}"
    );
    tf.apply().unwrap();
    let object = get_json(&cluster, ns.name(), "corpus").unwrap();
    assert_ne!(object["metadata"]["uid"], uid, "replaced");
    assert_eq!(object["spec"]["version"], "4");
    assert_no_changes(&tf, "after replace");

    // P-03(a): deleted outside Terraform -> plan shows a create, no error.
    cluster
        .kubectl_ok(&[
            "delete",
            "datasets.modelfleet.io",
            "-n",
            ns.name(),
            "corpus",
        ])
        .unwrap();
    let (code, plan) = tf.plan_exit_code().unwrap();
    assert_eq!(code, 2);
    assert!(
        plan.contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "{plan}"
    );
    tf.apply().unwrap();

    // Import then no changes.
    tf.ok(&["state", "rm", "modelfleet_dataset.corpus"])
        .unwrap();
    let id = format!("{}/corpus", ns.name());
    tf.ok(&[
        "import",
        "-no-color",
        "-input=false",
        "modelfleet_dataset.corpus",
        &id,
    ])
    .unwrap();
    assert_no_changes(&tf, "after import");

    tf.ok(&["destroy", "-auto-approve", "-no-color", "-input=false"])
        .unwrap();
    assert!(
        get_json(&cluster, ns.name(), "corpus").is_none(),
        "destroy waits until gone"
    );
}

#[tokio::test]
async fn import_errors_are_clear() {
    let cluster = Cluster::for_tests();
    cluster
        .install_model_fleet_crds()
        .expect("Model Fleet CRDs install");
    let ns = cluster.namespace("tf-dataset-import").await.unwrap();
    let provider = provider_block(&cluster, ns.name(), false);
    let tf = Terraform::new(&format!("{provider}{}", dataset("1", "", ""))).unwrap();
    let out = tf
        .run(&[
            "import",
            "-no-color",
            "-input=false",
            "modelfleet_dataset.corpus",
            "corpus",
        ])
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("Invalid import ID") && stderr.contains("namespace/name"),
        "{stderr}"
    );
    let missing = format!("{}/missing", ns.name());
    let out = tf
        .run(&[
            "import",
            "-no-color",
            "-input=false",
            "modelfleet_dataset.corpus",
            &missing,
        ])
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("Cannot import non-existent remote object"),
        "{stderr}"
    );
    assert!(!stderr.contains("panic"), "{stderr}");
}

#[tokio::test]
async fn conflicts_name_the_other_manager_until_forced() {
    let cluster = Cluster::for_tests();
    cluster
        .install_model_fleet_crds()
        .expect("Model Fleet CRDs install");
    let ns = cluster.namespace("tf-dataset-conflict").await.unwrap();
    let tf = Terraform::new(&format!(
        "{}{}",
        provider_block(&cluster, ns.name(), false),
        dataset("1", r#""trainer""#, "")
    ))
    .unwrap();
    tf.apply().unwrap();
    cluster
        .kubectl_ok(&[
            "patch",
            "datasets.modelfleet.io",
            "-n",
            ns.name(),
            "corpus",
            "--type=merge",
            "--field-manager=someone-else",
            "-p",
            r#"{"spec":{"allowedServiceAccounts":["intruder"]}}"#,
        ])
        .unwrap();
    // Drift on a field we manage shows up...
    let (code, plan) = tf.plan_exit_code().unwrap();
    assert_eq!(code, 2, "{plan}");
    assert!(plan.contains("intruder"), "{plan}");
    // ...and applying it back is a conflict naming the manager and the field.
    let out = tf
        .run(&["apply", "-auto-approve", "-no-color", "-input=false"])
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("Field manager conflict"), "{stderr}");
    assert!(stderr.contains("someone-else"), "{stderr}");
    assert!(stderr.contains(".spec.allowedServiceAccounts"), "{stderr}");
    assert!(stderr.contains("force_conflicts"), "{stderr}");

    tf.write(
        "main.tf",
        &format!(
            "{}{}",
            provider_block(&cluster, ns.name(), true),
            dataset("1", r#""trainer""#, "")
        ),
    )
    .unwrap();
    tf.apply().unwrap();
    let object = get_json(&cluster, ns.name(), "corpus").unwrap();
    assert_eq!(
        object["spec"]["allowedServiceAccounts"],
        serde_json::json!(["trainer"])
    );
    assert_no_changes(&tf, "after forced apply");
}

#[tokio::test]
async fn destroy_blocked_by_a_foreign_finalizer_fails_and_keeps_state() {
    // P-03(b), on a Dataset.
    let cluster = Cluster::for_tests();
    cluster
        .install_model_fleet_crds()
        .expect("Model Fleet CRDs install");
    let ns = cluster.namespace("tf-dataset-finalizer").await.unwrap();
    let provider = provider_block(&cluster, ns.name(), false);
    let tf = Terraform::new(&format!(
        "{provider}{}",
        dataset("1", "", r#"timeouts { delete = "10s" }"#)
    ))
    .unwrap();
    tf.apply().unwrap();
    cluster
        .kubectl_ok(&[
            "patch",
            "datasets.modelfleet.io",
            "-n",
            ns.name(),
            "corpus",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":["example.test/hold"]}}"#,
        ])
        .unwrap();
    let started = Instant::now();
    let out = tf
        .run(&["destroy", "-auto-approve", "-no-color", "-input=false"])
        .unwrap();
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "destroy must not report success while the object exists"
    );
    assert!(stderr.contains("Timed out deleting Dataset"), "{stderr}");
    assert!(stderr.contains("example.test/hold"), "{stderr}");
    assert!(
        elapsed >= Duration::from_secs(10),
        "waited the timeout: {elapsed:?}"
    );
    let state = tf.ok(&["state", "list"]).unwrap();
    assert!(
        state.contains("modelfleet_dataset.corpus"),
        "stays in state: {state}"
    );
    assert!(get_json(&cluster, ns.name(), "corpus").is_some());

    cluster
        .kubectl_ok(&[
            "patch",
            "datasets.modelfleet.io",
            "-n",
            ns.name(),
            "corpus",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ])
        .unwrap();
    tf.ok(&["destroy", "-auto-approve", "-no-color", "-input=false"])
        .unwrap();
    assert!(get_json(&cluster, ns.name(), "corpus").is_none());
}

#[tokio::test]
async fn optional_attributes_left_out_plan_clean_twice() {
    // P-04 for datasets: nothing optional is set; apply, then two plans in a row show no changes.
    let cluster = Cluster::for_tests();
    cluster
        .install_model_fleet_crds()
        .expect("Model Fleet CRDs install");
    let ns = cluster.namespace("tf-dataset-minimal").await.unwrap();
    let tf = Terraform::new(&format!(
        "{}{}",
        provider_block(&cluster, ns.name(), false),
        r#"
resource "modelfleet_dataset" "minimal" {
  name    = "minimal"
  version = "1"
  source {
    uri = "hf://datasets/org/name"
  }
}
"#
    ))
    .unwrap();
    tf.apply().unwrap();
    assert_no_changes(&tf, "first plan");
    assert_no_changes(&tf, "second plan");
    let object = get_json(&cluster, ns.name(), "minimal").unwrap();
    assert_eq!(
        object["spec"],
        serde_json::json!({"version": "1", "source": {"uri": "hf://datasets/org/name"}})
    );
}

#[tokio::test]
async fn values_unknown_at_plan_time_are_applied_from_the_configuration() {
    // Invariant 4 of the plugin protocol notes: a value unknown during plan (here the output of
    // another resource) is known at apply, and the new state must hold it.
    let cluster = Cluster::for_tests();
    cluster
        .install_model_fleet_crds()
        .expect("Model Fleet CRDs install");
    let ns = cluster.namespace("tf-dataset-unknown").await.unwrap();
    let tf = Terraform::new(&format!(
        "{}{}",
        provider_block(&cluster, ns.name(), false),
        r#"
resource "terraform_data" "version" {
  input = "7"
}

resource "modelfleet_dataset" "late" {
  name    = "late"
  version = terraform_data.version.output
  source {
    uri = "s3://bucket/late/"
  }
}
"#
    ))
    .unwrap();
    let (_, plan) = tf.plan_exit_code().unwrap();
    assert!(
        plan.contains("version   = (known after apply)") || plan.contains("(known after apply)"),
        "{plan}"
    );
    tf.apply().unwrap();
    let object = get_json(&cluster, ns.name(), "late").unwrap();
    assert_eq!(object["spec"]["version"], "7");
    assert_no_changes(&tf, "after apply");
}
