//! Issue 17, "at most one API request per resource per refresh": a refresh of many objects of one kind in one
//! namespace reads them with one LIST after the first few GETs (`provider/src/resources/snapshot.rs`), counted in the
//! audit log (the policy records every verb of the user `model-fleet-test-provider`); and what the snapshot serves is
//! still exact: a spec edited outside Terraform plans an update, an object deleted outside Terraform plans a create
//! (the snapshot does not hold it, and the GET that follows says it is gone); credentials that may `get` but not
//! `list` still refresh (every read goes back to a GET).

use acceptance_tests::audit::AuditEvent;
use acceptance_tests::rbac::kubeconfig_with_exact_rules;
use acceptance_tests::{Cluster, Terraform, terraform};
use serde_json::json;

const USER: &str = "model-fleet-test-provider";
const COUNT: usize = 12;
/// `provider/src/resources/snapshot.rs` `LIST_AFTER`: the reads served with a GET before the namespace is listed.
const LIST_AFTER: usize = 8;

fn verbs(events: &[AuditEvent], verb: &str) -> usize {
    events
        .iter()
        .filter(|e| e.user.username == USER && e.verb == verb)
        .count()
}

#[tokio::test]
async fn a_refresh_of_many_objects_lists_once_and_stays_exact() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-refresh-list")
        .await
        .expect("namespace with the CRDs");
    let kubeconfig = cluster
        .user_kubeconfig(USER, &["system:masters"])
        .expect("test user kubeconfig");
    let main_tf = |kubeconfig: &std::path::Path| {
        format!(
            r#"{}
resource "modelfleet_inference" "m" {{
  count = {COUNT}
  name  = "m-${{count.index}}"
  model {{
    name = "m"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
  }}
}}
"#,
            terraform::provider_block(kubeconfig, ns.name(), "")
        )
    };
    let tf = Terraform::new(&main_tf(&kubeconfig)).unwrap();
    tf.apply().unwrap();
    let audit = cluster.audit_log();

    // Default threshold: the first reads are GETs, then one LIST serves the rest.
    let mark = audit.mark().unwrap();
    let (code, text) = tf.plan_exit_code().unwrap();
    assert_eq!(code, 0, "no changes expected\n{text}");
    let events = mark.requests_on("inferenceservices").unwrap();
    assert_eq!(verbs(&events, "list"), 1, "one LIST: {events:#?}");
    assert_eq!(verbs(&events, "get"), LIST_AFTER, "GETs before the LIST");

    // Credentials that may get but not list: the refused LIST sends every read back to a GET.
    let get_only = kubeconfig_with_exact_rules(
        &cluster,
        "model-fleet-test-get-only",
        &[json!({"apiGroups": ["modelfleet.io"], "resources": ["inferenceservices"], "verbs": ["get"]})],
    )
    .unwrap();
    tf.write("main.tf", &main_tf(&get_only)).unwrap();
    let out = tf
        .command(&["plan", "-detailed-exitcode", "-no-color", "-input=false"])
        .env("MODELFLEET_REFRESH_LIST_AFTER", "0")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "no changes expected without list permission\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    tf.write("main.tf", &main_tf(&kubeconfig)).unwrap();

    // Drift seen through the snapshot (listing at the first read): an edited spec and a deleted object.
    cluster
        .kubectl_ok(&[
            "patch",
            "inferenceservices.modelfleet.io",
            "-n",
            ns.name(),
            "m-3",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"container":{"image":"hashicorp/http-echo:0.2.3"}}}"#,
        ])
        .unwrap();
    cluster
        .kubectl_ok(&[
            "delete",
            "inferenceservices.modelfleet.io",
            "-n",
            ns.name(),
            "m-5",
        ])
        .unwrap();
    let mark = audit.mark().unwrap();
    let out = tf
        .command(&["plan", "-detailed-exitcode", "-no-color", "-input=false"])
        .env("MODELFLEET_REFRESH_LIST_AFTER", "0")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "changes expected\n{text}");
    assert!(
        text.contains("modelfleet_inference.m[3] will be updated in-place"),
        "{text}"
    );
    assert!(
        text.contains("modelfleet_inference.m[5] will be created"),
        "{text}"
    );
    assert!(
        text.contains("Plan: 1 to add, 1 to change, 0 to destroy."),
        "{text}"
    );
    let events = mark.requests_on("inferenceservices").unwrap();
    assert_eq!(verbs(&events, "list"), 1, "one LIST: {events:#?}");
    assert_eq!(
        verbs(&events, "get"),
        1,
        "one GET, for the object the LIST did not hold"
    );

    tf.ok(&["destroy", "-auto-approve", "-no-color", "-input=false"])
        .unwrap();
}
