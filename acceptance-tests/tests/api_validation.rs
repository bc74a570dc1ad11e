//! The Model Fleet API on a real API server (issue 3): the CRDs generated from the Rust types
//! install; every example is accepted; every manifest of the invalid corpus
//! (`operator/tests/invalid/`, one per CEL rule, enum and range) is refused with its field path and
//! message; cases O-05(a) and O-09 (immutability refused with 422 naming the field, while label
//! edits and status writes still succeed).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use acceptance_tests::Cluster;
use acceptance_tests::cluster::repo_root;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

fn docs(text: &str) -> Vec<Value> {
    use serde::Deserialize;
    serde_yaml::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).expect("YAML"))
        .filter(|v| !v.is_null())
        .collect()
}

/// `kubectl VERB -n NS -f -` with `doc` (its namespace replaced by `ns`) on stdin.
fn kubectl_stdin(cluster: &Cluster, args: &[&str], ns: &str, mut doc: Value) -> Output {
    doc["metadata"]["namespace"] = json!(ns);
    let mut child = cluster
        .kubectl()
        .args(args)
        .args(["-n", ns, "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(&doc).unwrap().as_bytes())
        .unwrap();
    child.wait_with_output().expect("kubectl output")
}

#[tokio::test]
async fn generated_crds_install_with_short_names() -> anyhow::Result<()> {
    let cluster = Cluster::for_tests();
    cluster
        .install_model_fleet_crds()
        .expect("Model Fleet CRDs install");
    let out = cluster.kubectl_ok(&["api-resources", "--api-group=modelfleet.io", "-o", "name"])?;
    for r in ["inferenceservices", "trainingruns", "datasets"] {
        assert!(out.contains(r), "{r} missing from {out}");
    }
    let names = cluster.kubectl_ok(&["api-resources", "--api-group=modelfleet.io"])?;
    for short in ["isvc", "trun", "mfds"] {
        assert!(names.contains(short), "short name {short} missing: {names}");
    }
    Ok(())
}

#[tokio::test]
async fn every_example_is_accepted() -> anyhow::Result<()> {
    let cluster = Cluster::for_tests();
    cluster
        .install_model_fleet_crds()
        .expect("Model Fleet CRDs install");
    let ns = cluster.namespace("api-examples").await?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo_root().join("examples"))?
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        // Files that are not Model Fleet objects (the Slack app manifest and chart values) live in
        // subdirectories (examples/slack/, checked by tests/slack.rs), so only top-level files are read.
        .collect();
    files.sort();
    assert!(files.len() >= 5, "examples are missing");
    for file in files {
        for doc in docs(&std::fs::read_to_string(&file)?) {
            let out = kubectl_stdin(&cluster, &["create"], ns.name(), doc);
            assert!(
                out.status.success(),
                "{} refused: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    Ok(())
}

/// One file of the invalid corpus.
struct Case {
    file: String,
    path: String,
    message: String,
    docs: Vec<Value>,
}

fn corpus() -> Vec<Case> {
    let dir = repo_root().join("operator/tests/invalid");
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(dir).expect("operator/tests/invalid") {
        let p = entry.unwrap().path();
        if p.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let header = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("# {key}: ")))
                .unwrap_or_else(|| panic!("{}: no {key} header", p.display()))
                .trim()
                .to_owned()
        };
        cases.push(Case {
            file: p.file_name().unwrap().to_string_lossy().into_owned(),
            path: header("expect-path"),
            message: header("expect-message"),
            docs: docs(&text),
        });
    }
    cases.sort_by(|a, b| a.file.cmp(&b.file));
    cases
}

/// Whether the API server's error names `path` with a message containing `fragment`, e.g.
/// `* spec.replicas.min: Invalid value: ...` (one error per line, or after `is invalid: `).
fn names_field(stderr: &str, path: &str, fragment: &str) -> bool {
    stderr
        .replace("is invalid: ", "is invalid: \n")
        .lines()
        .map(|l| l.trim().trim_start_matches("* "))
        .any(|l| l.starts_with(&format!("{path}:")) && l.contains(fragment))
}

#[tokio::test]
async fn every_invalid_manifest_is_refused_with_its_path_and_message() -> anyhow::Result<()> {
    let cluster = Cluster::for_tests();
    cluster
        .install_model_fleet_crds()
        .expect("Model Fleet CRDs install");
    let ns = cluster.namespace("api-invalid").await?;
    let cases = corpus();
    assert!(cases.len() > 50, "the invalid corpus is missing");
    let mut failures = Vec::new();
    for (i, case) in cases.into_iter().enumerate() {
        let name = format!("case-{i}");
        let mut docs = case.docs;
        for d in &mut docs {
            d["metadata"]["name"] = json!(name);
        }
        let out = if docs.len() == 2 {
            let created = kubectl_stdin(&cluster, &["create"], ns.name(), docs[0].clone());
            if !created.status.success() {
                failures.push(format!(
                    "{}: the original was refused: {}",
                    case.file,
                    String::from_utf8_lossy(&created.stderr)
                ));
                continue;
            }
            kubectl_stdin(&cluster, &["replace"], ns.name(), docs[1].clone())
        } else {
            kubectl_stdin(
                &cluster,
                &["create", "--dry-run=server"],
                ns.name(),
                docs[0].clone(),
            )
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() || !names_field(&stderr, &case.path, &case.message) {
            failures.push(format!(
                "{}: expected `{}: ...{}...`, got: {}",
                case.file, case.path, case.message, stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

fn api(client: kube::Client, ns: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("modelfleet.io", "v1alpha1", kind);
    Api::namespaced_with(client, ns, &ApiResource::from_gvk_with_plural(&gvk, plural))
}

fn object(value: Value) -> DynamicObject {
    serde_json::from_value(value).expect("object")
}

/// Asserts a 422 whose message names `field`.
fn assert_refused(result: Result<DynamicObject, kube::Error>, field: &str) {
    match result {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 422, "{e:?}");
            assert!(
                e.message.contains(field),
                "{field} not named in {}",
                e.message
            );
        }
        other => panic!("expected 422 naming {field}, got {other:?}"),
    }
}

// Case O-09: immutability that can be bypassed (add, remove, change, replace the whole spec).
#[tokio::test]
async fn o09_dataset_spec_is_immutable_but_labels_and_status_are_not() -> anyhow::Result<()> {
    let cluster = Cluster::for_tests();
    cluster
        .install_model_fleet_crds()
        .expect("Model Fleet CRDs install");
    let ns = cluster.namespace("api-o09").await?;
    let datasets = api(cluster.client().await?, ns.name(), "Dataset", "datasets");
    let created = datasets
        .create(
            &PostParams::default(),
            &object(json!({
                "apiVersion": "modelfleet.io/v1alpha1", "kind": "Dataset",
                "metadata": {"name": "corpus"},
                "spec": {"version": "3", "description": "d", "source": {"uri": "s3://b/c"},
                         "allowedServiceAccounts": ["default"]}
            })),
        )
        .await?;
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut v = serde_json::to_value(&created).unwrap();
        f(&mut v["spec"]);
        object(v)
    };
    let pp = PostParams::default();
    assert_refused(
        datasets
            .replace(
                "corpus",
                &pp,
                &edit(&|s| s["pvc"] = json!({"claimName": "c"})),
            )
            .await,
        "spec.pvc",
    );
    assert_refused(
        datasets
            .replace(
                "corpus",
                &pp,
                &edit(&|s| {
                    s.as_object_mut().unwrap().remove("description");
                }),
            )
            .await,
        "spec.description",
    );
    assert_refused(
        datasets
            .replace("corpus", &pp, &edit(&|s| s["version"] = json!("4")))
            .await,
        "spec.version",
    );
    assert_refused(
        datasets
            .replace(
                "corpus",
                &pp,
                &edit(&|s| {
                    *s =
                        json!({"version": "9", "source": {"uri": "s3://other"}, "format": "jsonl"});
                }),
            )
            .await,
        "spec.version",
    );
    // The one mutable field, labels and status still change.
    datasets
        .replace(
            "corpus",
            &pp,
            &edit(&|s| s["allowedServiceAccounts"] = json!(["default", "trainer"])),
        )
        .await?;
    let ssa = PatchParams::apply("api-validation-test").force();
    datasets
        .patch(
            "corpus",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"team": "a"}}})),
        )
        .await?;
    datasets
        .patch_status(
            "corpus",
            &ssa,
            &Patch::Apply(json!({
                "apiVersion": "modelfleet.io/v1alpha1", "kind": "Dataset",
                "status": {"observedGeneration": 1, "usedBy": ["ns/run"]}
            })),
        )
        .await?;
    let got = datasets.get("corpus").await?;
    assert_eq!(got.data["status"]["usedBy"], json!(["ns/run"]));
    assert_eq!(got.metadata.labels.unwrap()["team"], "a");
    Ok(())
}

// Case O-05(a): the TrainingRun's template fields are immutable; intent and cancel are not.
#[tokio::test]
async fn o05_training_run_template_is_immutable() -> anyhow::Result<()> {
    let cluster = Cluster::for_tests();
    cluster
        .install_model_fleet_crds()
        .expect("Model Fleet CRDs install");
    let ns = cluster.namespace("api-o05").await?;
    let runs = api(
        cluster.client().await?,
        ns.name(),
        "TrainingRun",
        "trainingruns",
    );
    let created = runs
        .create(
            &PostParams::default(),
            &object(json!({
                "apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun",
                "metadata": {"name": "ft-1"},
                "spec": {"container": {"image": "trainer:1"}, "retries": 2}
            })),
        )
        .await?;
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut v = serde_json::to_value(&created).unwrap();
        f(&mut v["spec"]);
        object(v)
    };
    let pp = PostParams::default();
    assert_refused(
        runs.replace(
            "ft-1",
            &pp,
            &edit(&|s| s["container"]["image"] = json!("trainer:2")),
        )
        .await,
        "spec.container",
    );
    assert_refused(
        runs.replace("ft-1", &pp, &edit(&|s| s["deadlineSeconds"] = json!(60)))
            .await,
        "spec.deadlineSeconds",
    );
    let suspended = runs
        .replace("ft-1", &pp, &edit(&|s| s["intent"] = json!("suspended")))
        .await?;
    let mut cancel = serde_json::to_value(&suspended)?;
    cancel["spec"]["cancel"] = json!(true);
    let cancelled = runs.replace("ft-1", &pp, &object(cancel)).await?;
    let mut undo = serde_json::to_value(&cancelled)?;
    undo["spec"]["cancel"] = json!(false);
    assert_refused(
        runs.replace("ft-1", &pp, &object(undo)).await,
        "spec.cancel",
    );
    let mut resume = serde_json::to_value(&cancelled)?;
    resume["spec"]["intent"] = json!("active");
    assert_refused(
        runs.replace("ft-1", &pp, &object(resume)).await,
        "spec.intent",
    );
    Ok(())
}
