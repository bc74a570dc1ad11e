//! What the bot shows about the fleet, as plain rows (pure): one row per InferenceService, TrainingRun and Dataset,
//! in the words `kubectl get` uses. [`super::blocks`] turns them into Block Kit.

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use model_fleet_api::conditions::{ConditionType, find};
use model_fleet_api::v1alpha1::{Dataset, InferenceService, Intent, TrainingPhase, TrainingRun};

/// One InferenceService.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceRow {
    /// `metadata.name`.
    pub name: String,
    /// `spec.intent` (absent = `automatic`).
    pub intent: String,
    /// `readyReplicas/replicas` from the status (`0/0` before the first reconcile).
    pub ready: String,
    /// `status.capacityClass`, or `-` for CPU-only services.
    pub capacity_class: String,
    /// `status.url`, or `-` without a gateway.
    pub url: String,
    /// `Ready`, the Ready condition's reason, `Reconciling` when the status is for an older generation, `-` before
    /// the first reconcile.
    pub state: String,
}

/// One TrainingRun.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRow {
    /// `metadata.name`.
    pub name: String,
    /// `status.phase` (with the reason of a failure), `-` before the first reconcile.
    pub phase: String,
    /// Age since creation, as `kubectl get` prints it (`45s`, `12m`, `3h`, `2d`).
    pub age: String,
}

/// One Dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetRow {
    /// `metadata.name`.
    pub name: String,
    /// `spec.version`.
    pub version: String,
    /// `status.usedBy`: the runs using it.
    pub used_by: Vec<String>,
}

/// A namespace's inventory.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Inventory {
    /// The namespace listed.
    pub namespace: String,
    /// Inference services, by name.
    pub services: Vec<ServiceRow>,
    /// Training runs, by name.
    pub runs: Vec<RunRow>,
    /// Datasets, by name.
    pub datasets: Vec<DatasetRow>,
}

/// Everything `training status` shows about one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunDetail {
    /// Namespace and name.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.intent`, and `cancelled` when `spec.cancel` is true.
    pub intent: String,
    /// As in [`RunRow`].
    pub phase: String,
    /// As in [`RunRow`].
    pub age: String,
    /// `status.jobName`.
    pub job: String,
    /// Pods `active / ready / succeeded / failed`.
    pub pods: String,
    /// Dataset references as `name@version`.
    pub datasets: Vec<String>,
    /// Messages of conditions that are not fine (`DatasetsReady` false, `Degraded` true), for the person to act on.
    pub problems: Vec<String>,
}

/// The row of an InferenceService.
pub fn service_row(isvc: &InferenceService) -> ServiceRow {
    let status = isvc.status.as_ref();
    let text = |value: Option<&String>| value.cloned().unwrap_or_else(|| "-".to_owned());
    let stale = status
        .and_then(|s| s.observed_generation)
        .zip(isvc.metadata.generation)
        .is_some_and(|(observed, current)| observed < current);
    let ready = find(
        status.and_then(|s| s.conditions.as_deref()).unwrap_or(&[]),
        ConditionType::Ready,
    );
    let state = match ready {
        _ if stale => "Reconciling".to_owned(),
        Some(c) if c.status == "True" => "Ready".to_owned(),
        Some(c) => c.reason.clone(),
        None => "-".to_owned(),
    };
    ServiceRow {
        name: isvc.name_any(),
        intent: isvc.spec.intent.unwrap_or_default().as_str().to_owned(),
        ready: format!(
            "{}/{}",
            status.and_then(|s| s.ready_replicas).unwrap_or(0),
            status.and_then(|s| s.replicas).unwrap_or(0)
        ),
        capacity_class: text(status.and_then(|s| s.capacity_class.as_ref())),
        url: text(status.and_then(|s| s.url.as_ref())),
        state,
    }
}

fn phase(run: &TrainingRun) -> String {
    let status = run.status.as_ref();
    match (
        status.and_then(|s| s.phase),
        status.and_then(|s| s.reason.as_ref()),
    ) {
        (Some(TrainingPhase::Failed), Some(reason)) => format!("Failed ({reason})"),
        (Some(phase), _) => format!("{phase:?}"),
        (None, _) => "-".to_owned(),
    }
}

fn run_age(run: &TrainingRun, now: Timestamp) -> String {
    run.metadata
        .creation_timestamp
        .as_ref()
        .map(|t| age(t.0, now))
        .unwrap_or_else(|| "-".to_owned())
}

/// The row of a TrainingRun, its age computed at `now`.
pub fn run_row(run: &TrainingRun, now: Timestamp) -> RunRow {
    RunRow {
        name: run.name_any(),
        phase: phase(run),
        age: run_age(run, now),
    }
}

/// The row of a Dataset.
pub fn dataset_row(dataset: &Dataset) -> DatasetRow {
    DatasetRow {
        name: dataset.name_any(),
        version: dataset.spec.version.clone(),
        used_by: dataset
            .status
            .as_ref()
            .and_then(|s| s.used_by.clone())
            .unwrap_or_default(),
    }
}

/// The detail of a TrainingRun, its age computed at `now`.
pub fn run_detail(run: &TrainingRun, now: Timestamp) -> RunDetail {
    let status = run.status.as_ref();
    let count = |v: Option<i32>| v.unwrap_or(0);
    let intent = if run.spec.cancel == Some(true) {
        "cancelled".to_owned()
    } else {
        run.spec
            .intent
            .unwrap_or(Intent::Automatic)
            .as_str()
            .to_owned()
    };
    let conditions = status.and_then(|s| s.conditions.as_deref()).unwrap_or(&[]);
    let problems = conditions
        .iter()
        .filter(|c| {
            (c.type_ == ConditionType::Degraded.as_str() && c.status == "True")
                || (c.type_ == ConditionType::DatasetsReady.as_str() && c.status == "False")
        })
        .map(|c| format!("{}: {}", c.reason, c.message))
        .collect();
    RunDetail {
        namespace: run.namespace().unwrap_or_default(),
        name: run.name_any(),
        intent,
        phase: phase(run),
        age: run_age(run, now),
        job: status
            .and_then(|s| s.job_name.clone())
            .unwrap_or_else(|| "-".to_owned()),
        pods: format!(
            "{} active / {} ready / {} succeeded / {} failed",
            count(status.and_then(|s| s.active)),
            count(status.and_then(|s| s.ready)),
            count(status.and_then(|s| s.succeeded)),
            count(status.and_then(|s| s.failed)),
        ),
        datasets: run
            .spec
            .datasets
            .iter()
            .flatten()
            .map(|d| format!("{}@{}", d.name, d.version))
            .collect(),
        problems,
    }
}

/// Age as `kubectl get` prints it: seconds under 2 minutes, minutes under 2 hours, hours under 2 days, then days.
pub fn age(from: Timestamp, now: Timestamp) -> String {
    let seconds = now.as_second().saturating_sub(from.as_second()).max(0);
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 2 * 3600 => format!("{}m", s / 60),
        s if s < 2 * 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn isvc(extra: serde_json::Value) -> InferenceService {
        let mut object = json!({
            "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
            "metadata": {"name": "llama", "namespace": "team-a", "generation": 2},
            "spec": {"model": {"name": "meta/llama"}, "container": {"image": "vllm"}},
        });
        object
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value(object).unwrap()
    }

    #[test]
    fn service_rows_read_spec_and_status() {
        let row = service_row(&isvc(json!({"status": {
            "observedGeneration": 2, "replicas": 2, "readyReplicas": 1, "capacityClass": "80gi",
            "url": "http://llama.example/", "conditions": [{"type": "Ready", "status": "False",
            "reason": "Progressing", "message": "1 of 2 ready", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})));
        assert_eq!(
            row,
            ServiceRow {
                name: "llama".into(),
                intent: "automatic".into(),
                ready: "1/2".into(),
                capacity_class: "80gi".into(),
                url: "http://llama.example/".into(),
                state: "Progressing".into(),
            }
        );
        let fresh = service_row(&isvc(json!({})));
        assert_eq!((fresh.ready.as_str(), fresh.state.as_str()), ("0/0", "-"));
        let stale = service_row(&isvc(json!({"status": {"observedGeneration": 1}})));
        assert_eq!(stale.state, "Reconciling");
    }

    #[test]
    fn runs_show_phase_reason_and_age() {
        let run: TrainingRun = serde_json::from_value(json!({
            "apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun",
            "metadata": {"name": "ft", "namespace": "team-a", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"container": {"image": "trainer"}, "cancel": true,
                     "datasets": [{"name": "corpus", "version": "3", "mountPath": "/data"}]},
            "status": {"phase": "Failed", "reason": "DeadlineExceeded", "jobName": "ft", "failed": 1,
                       "conditions": [{"type": "Degraded", "status": "True", "reason": "ReconcileError",
                       "message": "boom", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        }))
        .unwrap();
        let now: Timestamp = "2026-01-01T03:00:00Z".parse().unwrap();
        assert_eq!(
            run_row(&run, now),
            RunRow {
                name: "ft".into(),
                phase: "Failed (DeadlineExceeded)".into(),
                age: "3h".into()
            }
        );
        let detail = run_detail(&run, now);
        assert_eq!(detail.intent, "cancelled");
        assert_eq!(detail.datasets, vec!["corpus@3".to_owned()]);
        assert_eq!(detail.problems, vec!["ReconcileError: boom".to_owned()]);
        assert!(detail.pods.contains("1 failed"));
    }

    #[test]
    fn ages_like_kubectl() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let at = |s: i64| age(t0, Timestamp::from_second(t0.as_second() + s).unwrap());
        assert_eq!(at(5), "5s");
        assert_eq!(at(119), "119s");
        assert_eq!(at(600), "10m");
        assert_eq!(at(3 * 3600), "3h");
        assert_eq!(at(5 * 86400), "5d");
        assert_eq!(at(-10), "0s", "clock skew");
    }
}
