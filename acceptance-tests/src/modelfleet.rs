//! Model Fleet objects in tests: installing the CRDs, typed-free access to TrainingRuns and Datasets
//! (`DynamicObject`, so tests read the wire format users see), examples with their namespace
//! rewritten, the operator's reconcile-error metric, and a typed minimal TrainingRun for tests that drive the
//! operator's own code.

use std::collections::BTreeSet;
use std::sync::Mutex;

use anyhow::Context as _;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use model_fleet_api::TrainingRun;
use serde_json::{Value, json};

use crate::cluster::repo_root;
use crate::process::OperatorProcess;
use crate::wait_for;
use crate::{Cluster, TestNamespace};

impl Cluster {
    /// Installs the chart's Model Fleet CRDs (`charts/model-fleet-operator/crds/`, server-side
    /// apply, idempotent) and waits until they are Established; once per instance and test
    /// process (a test may use a second instance, e.g. one without the upstream CRDs).
    ///
    /// Errors: kubectl's message when the apply or the wait fails.
    pub fn install_model_fleet_crds(&self) -> anyhow::Result<()> {
        static DONE: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
        let mut done = DONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if done.contains(&self.instance) {
            return Ok(());
        }
        let dir = repo_root().join("charts/model-fleet-operator/crds");
        let dir = dir.to_str().context("non UTF-8 path")?;
        self.kubectl_ok(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=model-fleet-crds",
            "-f",
            dir,
        ])?;
        self.kubectl_ok(&[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/inferenceservices.modelfleet.io",
            "crd/trainingruns.modelfleet.io",
            "crd/datasets.modelfleet.io",
        ])?;
        done.insert(self.instance.clone());
        Ok(())
    }

    /// A fresh test namespace (`prefix-<n>`, deleted on drop) on an instance with the Model Fleet
    /// CRDs installed: the start of every Model Fleet test.
    ///
    /// Errors: those of [`Cluster::install_model_fleet_crds`] and [`Cluster::namespace`].
    pub async fn model_fleet_namespace(&self, prefix: &str) -> anyhow::Result<TestNamespace> {
        self.install_model_fleet_crds()?;
        self.namespace(prefix).await
    }
}

/// The `modelfleet.io/v1alpha1` resource of `kind` (`TrainingRun`, `Dataset`, `InferenceService`).
pub fn resource(kind: &str) -> ApiResource {
    let plural = format!("{}s", kind.to_ascii_lowercase());
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("modelfleet.io", "v1alpha1", kind),
        &plural,
    )
}

/// The API of Model Fleet `kind` in `namespace`.
pub fn api(client: &kube::Client, namespace: &str, kind: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), namespace, &resource(kind))
}

/// The documents of `examples/<file>` as JSON, each with `metadata.namespace` set to `namespace`.
///
/// Errors: the file is missing or not YAML.
pub fn example(file: &str, namespace: &str) -> anyhow::Result<Vec<Value>> {
    use serde::Deserialize;
    let path = repo_root().join("examples").join(file);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path:?}"))?;
    let mut docs = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(&text) {
        let mut value = Value::deserialize(doc)?;
        if value.is_null() {
            continue;
        }
        value["metadata"]["namespace"] = Value::String(namespace.to_owned());
        docs.push(value);
    }
    Ok(docs)
}

/// Creates a Model Fleet object given as JSON (its `kind` picks the API) in `namespace`.
///
/// Errors: the API server's refusal.
pub async fn create(
    client: &kube::Client,
    namespace: &str,
    mut object: Value,
) -> anyhow::Result<DynamicObject> {
    let kind = object["kind"]
        .as_str()
        .context("object without kind")?
        .to_owned();
    object["metadata"]["namespace"] = Value::String(namespace.to_owned());
    let object: DynamicObject = serde_json::from_value(object)?;
    Ok(api(client, namespace, &kind)
        .create(&PostParams::default(), &object)
        .await?)
}

/// Creates the smallest valid TrainingRun `name` through `api`: one container whose image never starts
/// (`modelfleet.local/sim:never`), for tests of what the operator does with a run rather than of the run itself.
///
/// Errors: the API server's refusal.
pub async fn create_training_run(
    api: &Api<TrainingRun>,
    name: &str,
) -> anyhow::Result<TrainingRun> {
    let object: TrainingRun = serde_json::from_value(json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun", "metadata": {"name": name},
        "spec": {"container": {"image": "modelfleet.local/sim:never"}},
    }))?;
    Ok(api.create(&PostParams::default(), &object).await?)
}

/// Sum of `model_fleet_reconcile_errors_total` for `kind` on the operator's `/metrics` (0 when no
/// error was ever counted).
///
/// Errors: `/metrics` did not answer 200.
pub fn reconcile_errors(operator: &OperatorProcess, kind: &str) -> anyhow::Result<f64> {
    let (code, body) = operator.http_get("/metrics")?;
    anyhow::ensure!(code == 200, "/metrics answered {code}");
    let prefix = "model_fleet_reconcile_errors_total{";
    let kind_label = format!("kind=\"{kind}\"");
    Ok(body
        .lines()
        .filter(|l| l.starts_with(prefix) && l.contains(&kind_label))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum())
}

/// Creates a PersistentVolume pre-bound to claim `ns/claim` and the claim itself (no provisioner
/// in the test cluster), so pods using it can be scheduled.
///
/// Errors: kubectl's message.
pub fn bound_claim(
    cluster: &Cluster,
    ns: &str,
    claim: &str,
    access_mode: &str,
) -> anyhow::Result<()> {
    let pv = format!("{ns}-{claim}");
    let docs = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "PersistentVolume",
         "metadata": {"name": pv, "labels": {"modelfleet.io/test": "true"}},
         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": [access_mode],
                  "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "",
                  "hostPath": {"path": format!("/tmp/{pv}")},
                  "claimRef": {"namespace": ns, "name": claim}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": claim, "namespace": ns},
         "spec": {"accessModes": [access_mode], "storageClassName": "", "volumeName": pv,
                  "resources": {"requests": {"storage": "1Gi"}}}}
    ]});
    cluster.kubectl_apply(&docs, &[])?;
    Ok(())
}

/// How long [`wait_for_object`] waits.
pub const OBJECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(90);

/// The object `kind/name` in `namespace` (as JSON, the wire format) once `accept` holds for it, waiting up to
/// [`OBJECT_TIMEOUT`]; `what` names the wait in the error.
///
/// Errors: the timeout, with the operator's log tail.
pub async fn wait_for_object(
    client: &kube::Client,
    namespace: &str,
    kind: &str,
    name: &str,
    what: &str,
    operator: &OperatorProcess,
    accept: impl Fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    let api = api(client, namespace, kind);
    wait_for(what, OBJECT_TIMEOUT, || {
        let api = api.clone();
        let accept = &accept;
        async move {
            let object = serde_json::to_value(api.get(name).await?)?;
            Ok(accept(&object).then_some(object))
        }
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))
}

/// An object's `Ready` condition as the tests compare it, with the object it was read from.
#[derive(Clone, Debug)]
pub struct Ready {
    /// `(status, reason)`, e.g. `("False", "Progressing")` (empty strings when absent).
    pub state: (String, String),
    /// The message (empty when absent).
    pub message: String,
    /// The whole object (JSON, as [`wait_for_object`] reads it).
    pub object: Value,
}

/// The `Ready` condition of `kind/name` once `accept` holds for its message (empty while it has none), waiting as
/// [`wait_for_object`] does.
///
/// Errors: those of [`wait_for_object`].
pub async fn wait_for_ready_message(
    client: &kube::Client,
    namespace: &str,
    kind: &str,
    name: &str,
    operator: &OperatorProcess,
    accept: impl Fn(&str) -> bool,
) -> anyhow::Result<Ready> {
    let what = format!("{kind} {name}'s Ready message");
    let object = wait_for_object(client, namespace, kind, name, &what, operator, |object| {
        accept(
            condition(object, "Ready")["message"]
                .as_str()
                .unwrap_or_default(),
        )
    })
    .await?;
    let ready = condition(&object, "Ready");
    let text = |key: &str| ready[key].as_str().unwrap_or_default().to_owned();
    Ok(Ready {
        state: (text("status"), text("reason")),
        message: text("message"),
        object,
    })
}

/// The condition of `type_` in an object's status (Null when absent).
pub fn condition(object: &Value, type_: &str) -> Value {
    object["status"]["conditions"]
        .as_array()
        .and_then(|list| list.iter().find(|c| c["type"] == type_))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The Events (`events.k8s.io/v1`) in `namespace` regarding the object named `name`: `(reason, note)` each.
pub async fn events(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> anyhow::Result<Vec<(String, String)>> {
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(client.clone(), namespace);
    Ok(events
        .list(&kube::api::ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
        .collect())
}
