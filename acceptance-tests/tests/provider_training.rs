//! `modelfleet_training` end to end (issue 7): the real Terraform CLI, the provider built from this
//! workspace, the local control plane with simulated nodes (Job pods succeed ~3 s after starting)
//! and an operator process watching the test's namespace.
//!
//! Stories: the training-with-dataset example applies with `wait_for = "completed"` (phase
//! Succeeded in state, `job_name` known at plan time), plans clean; `intent` changes in place; an
//! image change replaces the run; destroy leaves no TrainingRun and no Job. Case P-01 for runs:
//! `cpu = "1000"` stays as written and rewriting it as `1k` is never a replacement. `pod_security` round-trips,
//! root under `restricted` is refused at plan, and another user replaces the run. A run made with kubectl, whose
//! numeric `cpu: 1` the API server keeps as a number, is imported and takes an update.

use std::time::Duration;

use acceptance_tests::cluster::repo_root;
use acceptance_tests::process::operator_kubeconfig;
use acceptance_tests::terraform::provider_block;
use acceptance_tests::{Cluster, OperatorProcess, Terraform, wait_for};

fn operator(cluster: &Cluster, ns: &str) -> OperatorProcess {
    let kubeconfig = operator_kubeconfig(cluster).expect("operator kubeconfig");
    OperatorProcess::start(
        cluster,
        &kubeconfig,
        ns,
        "fleet",
        &["--resync-seconds", "2"],
        &[],
    )
    .expect("operator starts")
}

fn terraform(cluster: &Cluster, ns: &str, main_tf: &str, extra_vars: &str) -> Terraform {
    let tf = Terraform::new(main_tf).expect("terraform folder");
    tf.write(
        "terraform.tfvars",
        &format!(
            "kubeconfig_path = \"{}\"\nnamespace = \"{ns}\"\n{extra_vars}",
            cluster.kubeconfig.display()
        ),
    )
    .unwrap();
    tf
}

fn has_attr(text: &str, name: &str, value: &str) -> bool {
    text.lines().any(|line| {
        let words: Vec<&str> = line.split_whitespace().filter(|w| *w != "+").collect();
        words == [name, "=", value]
    })
}

fn plan(tf: &Terraform, expected: i32, when: &str) -> String {
    let (code, text) = tf.plan_exit_code().unwrap();
    assert_eq!(code, expected, "{when}\n{text}");
    text
}

fn names(cluster: &Cluster, ns: &str, kinds: &str) -> Vec<String> {
    cluster
        .kubectl_ok(&["get", kinds, "-n", ns, "-o", "name"])
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

fn run_json(cluster: &Cluster, ns: &str, name: &str) -> serde_json::Value {
    serde_json::from_str(
        &cluster
            .kubectl_ok(&[
                "get",
                "trainingruns.modelfleet.io",
                "-n",
                ns,
                name,
                "-o",
                "json",
            ])
            .unwrap(),
    )
    .unwrap()
}

/// Writes `main_tf`, whose only change is the run's `intent`, checks that the plan updates it in place (a run's
/// intent is mutable), applies it and checks the run `name` holds `intent`.
fn change_intent_in_place(
    tf: &Terraform,
    main_tf: &str,
    cluster: &Cluster,
    ns: &str,
    name: &str,
    intent: &str,
) {
    tf.write("main.tf", main_tf).unwrap();
    let text = plan(tf, 2, "intent changed");
    assert!(
        text.contains("updated in-place") && !text.contains("must be replaced"),
        "{text}"
    );
    tf.apply().unwrap();
    assert_eq!(run_json(cluster, ns, name)["spec"]["intent"], intent);
}

#[tokio::test]
async fn dataset_example_completes_then_intent_update_replace_destroy() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-train")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let _operator = operator(&cluster, &ns);
    let main_tf = std::fs::read_to_string(
        repo_root().join("examples/terraform/training-with-dataset/main.tf"),
    )
    .unwrap();
    let tf = terraform(&cluster, &ns, &main_tf, "");

    let planned = tf.ok(&["plan", "-no-color"]).unwrap();
    assert!(
        has_attr(&planned, "job_name", "\"finetune-1\""),
        "{planned}"
    );
    let out = tf.apply().unwrap();
    assert!(out.contains("job_name = \"finetune-1\""), "{out}");
    let state = tf
        .ok(&["state", "show", "-no-color", "modelfleet_training.finetune"])
        .unwrap();
    assert!(has_attr(&state, "phase", "\"Succeeded\""), "{state}");
    assert_eq!(
        run_json(&cluster, &ns, "finetune-1")["status"]["phase"],
        "Succeeded"
    );
    plan(&tf, 0, "right after apply");
    tokio::time::sleep(Duration::from_secs(4)).await;
    plan(&tf, 0, "after the operator rewrote status");

    // intent changes in place (wait only for the operator to see it: a finished run stays so).
    let suspended = main_tf.replace(
        "wait_for = \"completed\"",
        "wait_for = \"reconciled\"\n  intent   = \"suspended\"",
    );
    assert_ne!(suspended, main_tf);
    change_intent_in_place(&tf, &suspended, &cluster, &ns, "finetune-1", "suspended");
    plan(&tf, 0, "after the intent update");

    // Any other spec change replaces the run.
    tf.write("main.tf", &main_tf).unwrap();
    tf.write(
        "terraform.tfvars",
        &format!(
            "kubeconfig_path = \"{}\"\nnamespace = \"{ns}\"\nimage = \"modelfleet.local/sim:v2\"\n",
            cluster.kubeconfig.display()
        ),
    )
    .unwrap();
    let text = plan(&tf, 2, "image changed");
    assert!(text.contains("must be replaced"), "{text}");
    tf.apply().unwrap();
    let run = run_json(&cluster, &ns, "finetune-1");
    assert_eq!(run["spec"]["container"]["image"], "modelfleet.local/sim:v2");
    assert_eq!(run["status"]["phase"], "Succeeded");
    plan(&tf, 0, "after the replacement");

    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
    assert!(
        names(
            &cluster,
            &ns,
            "trainingruns.modelfleet.io,datasets.modelfleet.io"
        )
        .is_empty()
    );
    wait_for("Jobs deleted", Duration::from_secs(60), || async {
        Ok(names(&cluster, &ns, "jobs").is_empty().then_some(()))
    })
    .await
    .unwrap();
}

/// Case P-01 for runs: `cpu = "1000"` is stored as written, plans clean, and rewriting it as `1k`
/// (same amount) is an in-place change of the written form, never a replacement of the run.
#[tokio::test]
async fn p01_quantities_keep_the_written_form() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-train-p01")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let provider = provider_block(&cluster.kubeconfig, &ns, "");
    let main_tf = |cpu: &str| {
        format!(
            r#"{provider}
resource "modelfleet_training" "big" {{
  name = "big"
  container {{
    image = "modelfleet.local/sim:never"
    resources {{
      requests = {{ cpu = "{cpu}" }}
    }}
  }}
}}
"#
        )
    };
    let tf = Terraform::new(&main_tf("1000")).unwrap();
    tf.apply().unwrap();
    assert_eq!(
        run_json(&cluster, &ns, "big")["spec"]["container"]["resources"]["requests"]["cpu"],
        "1000"
    );
    let state = tf
        .ok(&["state", "show", "-no-color", "modelfleet_training.big"])
        .unwrap();
    assert!(state.contains("\"1000\""), "{state}");
    plan(&tf, 0, "right after apply");
    tf.write("main.tf", &main_tf("1k")).unwrap();
    let text = plan(&tf, 2, "1000 rewritten as 1k");
    assert!(
        text.contains("updated in-place") && !text.contains("must be replaced"),
        "{text}"
    );
    tf.apply().unwrap();
    plan(&tf, 0, "after the rewrite");
    tf.write("main.tf", &main_tf("999")).unwrap();
    let text = plan(&tf, 2, "a different amount");
    assert!(text.contains("must be replaced"), "{text}");
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}

/// A new user's trial: a TrainingRun made with kubectl from YAML, whose `cpu: 1` the API server keeps as a JSON
/// number, then imported, plans clean; an update of `intent` must then go through. Before, `intent` conflicted with
/// kubectl, its owner, and with `force_conflicts` the provider sent `cpu = "1"` as a string, a change to server-side
/// apply of the immutable `container`, which the API server refused at every update of the run. The first write now
/// adopts what the import read, and every write sends the stored form of the values the plan found equal.
#[tokio::test]
async fn an_imported_run_with_a_numeric_quantity_takes_updates() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-train-import")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let run = serde_json::json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun",
        "metadata": {"name": "imported", "namespace": ns},
        "spec": {"intent": "suspended", "container": {"image": "modelfleet.local/sim:never",
            "resources": {"requests": {"cpu": 1, "memory": "1Gi"}}}}});
    cluster.kubectl_apply(&run, &[]).unwrap();
    let cpu = |cluster: &Cluster| {
        run_json(cluster, &ns, "imported")["spec"]["container"]["resources"]["requests"]["cpu"]
            .clone()
    };
    assert_eq!(
        cpu(&cluster),
        serde_json::json!(1),
        "kubectl stores a number"
    );
    let provider = provider_block(&cluster.kubeconfig, &ns, "");
    let main_tf = |intent: &str| {
        format!(
            r#"{provider}
resource "modelfleet_training" "imported" {{
  name   = "imported"
  intent = "{intent}"
  container {{
    image = "modelfleet.local/sim:never"
    resources {{
      requests = {{ cpu = "1", memory = "1Gi" }}
    }}
  }}
}}
"#
        )
    };
    let tf = Terraform::new(&main_tf("suspended")).unwrap();
    tf.ok(&[
        "import",
        "-no-color",
        "modelfleet_training.imported",
        &format!("{ns}/imported"),
    ])
    .unwrap();
    plan(&tf, 0, "right after the import");
    change_intent_in_place(&tf, &main_tf("active"), &cluster, &ns, "imported", "active");
    assert_eq!(
        cpu(&cluster),
        serde_json::json!(1),
        "the stored form is kept"
    );
    plan(&tf, 0, "after the update");
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}

/// `pod_security` (docs/security.md): applied as written and planned clean; `run_as_user = 0` under
/// `level = "restricted"` is refused by `terraform plan` itself (the CRD's rule, evaluated by the provider) naming the
/// block, with the run untouched; another user replaces the run (the pod template of a TrainingRun is immutable).
#[tokio::test]
async fn pod_security_round_trips_and_root_under_restricted_is_refused_at_plan() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-train-pss")
        .await
        .expect("namespace with the CRDs");
    let ns = ns.name().to_string();
    let provider = provider_block(&cluster.kubeconfig, &ns, "");
    let main_tf = |user: u32| {
        format!(
            r#"{provider}
resource "modelfleet_training" "locked" {{
  name = "locked"
  container {{
    image = "modelfleet.local/sim:never"
  }}
  pod_security {{
    level       = "restricted"
    run_as_user = {user}
    fs_group    = 65532
  }}
}}
"#
        )
    };
    let tf = Terraform::new(&main_tf(65532)).unwrap();
    tf.apply().unwrap();
    assert_eq!(
        run_json(&cluster, &ns, "locked")["spec"]["podSecurity"],
        serde_json::json!({"level": "restricted", "runAsUser": 65532, "fsGroup": 65532})
    );
    plan(&tf, 0, "right after apply");
    tf.write("main.tf", &main_tf(0)).unwrap();
    let refused = format!(
        "{:#}",
        tf.plan_exit_code().expect_err("root under restricted")
    );
    assert!(
        refused.contains("Invalid pod_security.run_as_user") && refused.contains("0 is root"),
        "{refused}"
    );
    assert_eq!(
        run_json(&cluster, &ns, "locked")["spec"]["podSecurity"]["runAsUser"],
        65532
    );
    tf.write("main.tf", &main_tf(1000)).unwrap();
    let text = plan(&tf, 2, "another user");
    assert!(text.contains("must be replaced"), "{text}");
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}
