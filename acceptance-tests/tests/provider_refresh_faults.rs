//! Issue 18, "a missing CRD or the wrong cluster at refresh is an error, not 'gone, create it'"
//! (terraform-provider-kubernetes#2597, terraform-provider-kubectl#295): with the Dataset CRD removed, `terraform
//! plan` fails with a diagnostic naming the kind and the cluster, and the state keeps the resource; with the CRD back
//! the plan works again and destroy succeeds.
//!
//! Its own test binary on purpose: it deletes a cluster-wide CRD, and cargo runs test binaries one at a time, so no
//! other test sees the CRD missing.

use acceptance_tests::cluster::repo_root;
use acceptance_tests::{Cluster, Terraform, terraform};

const CRD: &str = "datasets.modelfleet.io";

/// Deletes the Dataset CRD, bounded. Datasets left by earlier test binaries may still carry the operator's in-use
/// finalizer with no operator left to release it, and the CRD's deletion would wait for them forever: their
/// finalizers are cleared first. The CRD is installed again when the returned guard is dropped, also when the test
/// fails first, so the test binaries after this one find it.
fn remove_crd(cluster: &Cluster) -> CrdRemoved<'_> {
    let listed = cluster
        .kubectl_ok(&[
            "get",
            CRD,
            "-A",
            "-o",
            "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{\"\\n\"}{end}",
        ])
        .unwrap();
    for line in listed.lines().filter(|l| !l.trim().is_empty()) {
        let (namespace, name) = line.split_once('/').expect("namespace/name");
        cluster
            .kubectl_ok(&[
                "patch",
                CRD,
                "-n",
                namespace,
                name,
                "--type=merge",
                "-p",
                r#"{"metadata":{"finalizers":null}}"#,
            ])
            .ok();
    }
    cluster
        .kubectl_ok(&["delete", "crd", CRD, "--wait=false"])
        .unwrap();
    let removed = CrdRemoved(cluster);
    cluster
        .kubectl_ok(&[
            "wait",
            "--for=delete",
            &format!("crd/{CRD}"),
            "--timeout=120s",
        ])
        .unwrap();
    removed
}

/// The Dataset CRD is deleted; dropping this installs it again from the chart and waits until it is Established.
struct CrdRemoved<'a>(&'a Cluster);

impl Drop for CrdRemoved<'_> {
    fn drop(&mut self) {
        let file = repo_root()
            .join("charts/model-fleet-operator/crds")
            .join(format!("{CRD}.yaml"));
        let restored = self
            .0
            .kubectl_ok(&[
                "apply",
                "--server-side",
                "--force-conflicts",
                "--field-manager=model-fleet-crds",
                "-f",
                &file.to_string_lossy(),
            ])
            .and_then(|_| {
                self.0.kubectl_ok(&[
                    "wait",
                    "--for=condition=Established",
                    "--timeout=60s",
                    &format!("crd/{CRD}"),
                ])
            });
        match restored {
            Ok(_) => {}
            Err(e) if std::thread::panicking() => {
                eprintln!("could not install the CRD again: {e:#}")
            }
            Err(e) => panic!("could not install the CRD again: {e:#}"),
        }
    }
}

#[tokio::test]
async fn a_refresh_without_the_crd_fails_and_keeps_the_state() {
    let cluster = Cluster::for_tests();
    let ns = cluster
        .model_fleet_namespace("tf-refresh-crd")
        .await
        .expect("namespace with the CRDs");
    let main_tf = format!(
        r#"{}
resource "modelfleet_dataset" "corpus" {{
  name    = "corpus"
  version = "1"
  source {{
    uri = "s3://bucket/corpus/v1/"
  }}
  allowed_service_accounts = ["default"]
}}
"#,
        terraform::provider_block(&cluster.kubeconfig, ns.name(), "")
    );
    let tf = Terraform::new(&main_tf).unwrap();
    tf.apply().unwrap();

    let removed = remove_crd(&cluster);
    let (succeeded, text) = tf.run_flat(&["plan", "-no-color", "-input=false"]).unwrap();
    let failed = !succeeded;
    let state = tf.ok(&["state", "list"]).unwrap_or_default();
    drop(removed);
    assert!(failed, "the plan succeeded without the CRD: {text}");
    assert!(
        text.contains(&format!(
            "Dataset API not found while trying to read {}/corpus",
            ns.name()
        )) && text.contains("a resource in state stays there")
            && text.contains("the kubeconfig's current context"),
        "{text}"
    );
    assert!(!text.contains("will be created"), "{text}");
    assert_eq!(
        state.trim(),
        "modelfleet_dataset.corpus",
        "the state lost the resource"
    );

    // The CRD is back (its objects went with it): the next plan sees the object gone, and the apply and destroy work.
    let (code, plan) = tf.plan_exit_code().unwrap();
    assert_eq!(code, 2, "{plan}");
    tf.apply().unwrap();
    tf.ok(&["destroy", "-auto-approve", "-no-color"]).unwrap();
}
