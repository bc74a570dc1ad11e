//! Dataset access checks for a TrainingRun (DESIGN.md section 3, TrainingRun datasets; cases
//! O-07 and O-08). Pure: the caller passes the Datasets it fetched.

use std::fmt;

use kube::{Resource, ResourceExt};

use super::RenderError;
use crate::conditions::Reason;
use crate::{Dataset, DatasetRef, TrainingRun, TrainingRunStatus};

/// Why a run may not use its Datasets: a `DatasetsReady=False` condition; no Job is created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetRefusal {
    /// Condition reason: `DatasetNotFound`, `VersionMismatch`, `AccessDenied` or `CrossNamespace`.
    pub reason: Reason,
    /// Condition message naming the dataset and the fix.
    pub message: String,
}

impl fmt::Display for DatasetRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.message)
    }
}

/// A reference resolved to its Dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedDataset<'a> {
    /// The reference in the run.
    pub reference: &'a DatasetRef,
    /// The Dataset.
    pub dataset: &'a Dataset,
}

/// Checks every `spec.datasets[]` of `run` against `datasets` (those the caller fetched from the
/// run's namespace). Order of checks: cross-namespace, existence, version, allowlist (with an
/// absent `serviceAccountName` checked as `default`). A run without a namespace (`render -f`) is
/// treated as being in `default`.
pub fn check_datasets<'a>(
    run: &'a TrainingRun,
    datasets: &'a [Dataset],
) -> Result<Vec<ResolvedDataset<'a>>, DatasetRefusal> {
    let run_ns = run.namespace().unwrap_or_else(|| "default".to_string());
    let sa = run
        .spec
        .service_account_name
        .as_deref()
        .unwrap_or("default");
    let mut out = Vec::new();
    for (i, r) in run.spec.datasets.iter().flatten().enumerate() {
        if let Some(ns) = r.namespace.as_deref().filter(|ns| *ns != run_ns) {
            return Err(DatasetRefusal {
                reason: Reason::CrossNamespace,
                message: format!(
                    "spec.datasets[{i}].namespace: Dataset {ns}/{} is in another namespace than the run ({run_ns}); register the Dataset in {run_ns}",
                    r.name
                ),
            });
        }
        let found = datasets
            .iter()
            .find(|d| d.name_any() == r.name && d.namespace().is_none_or(|ns| ns == run_ns))
            .ok_or_else(|| DatasetRefusal {
                reason: Reason::DatasetNotFound,
                message: format!("spec.datasets[{i}].name: Dataset {run_ns}/{} not found; create it or fix the name", r.name),
            })?;
        if found.meta().deletion_timestamp.is_some()
            && !TrainingRunStatus::job_recorded(run.status.as_ref())
        {
            // Its deletion waits for the runs that use it; a run that has no Job yet is refused, so its deletion is
            // not held for good by a run that would start after it (a hunt's finding: one was admitted). A run whose
            // Job exists keeps rendering (its headless Service is still kept) while the deletion waits for it.
            return Err(DatasetRefusal {
                reason: Reason::DatasetNotFound,
                message: format!(
                    "spec.datasets[{i}].name: Dataset {run_ns}/{} is being deleted; create it again once it is gone, or reference another",
                    r.name
                ),
            });
        }
        if found.spec.version != r.version {
            return Err(DatasetRefusal {
                reason: Reason::VersionMismatch,
                message: format!(
                    "spec.datasets[{i}].version: Dataset {} has version {:?}, the run asks for {:?}; reference the registered version",
                    r.name, found.spec.version, r.version
                ),
            });
        }
        let mut allowed = found.spec.allowed_service_accounts.iter().flatten();
        if !allowed.any(|a| a == sa) {
            return Err(DatasetRefusal {
                reason: Reason::AccessDenied,
                message: format!(
                    "spec.serviceAccountName: ServiceAccount {sa:?} is not in allowedServiceAccounts of Dataset {}; ask its owner to add it",
                    r.name
                ),
            });
        }
        out.push(ResolvedDataset {
            reference: r,
            dataset: found,
        });
    }
    Ok(out)
}

/// The claim rules of a run's mounts, one pass over its volumes (cases O-07 and O-08):
/// - a Dataset is never writable: `spec.datasets[].readOnly: false`, or a volume of a referenced Dataset's claim
///   without `readOnly: true`, is `WritableDatasetMount`;
/// - a volume of the claim of one of `datasets` (the run's namespace's) that no `resolved` Dataset holds is
///   `AccessDenied`: a Dataset is mounted through `spec.datasets`, which mounts it read-only, checks its
///   `allowedServiceAccounts` and holds its deletion while the run uses it, and a plain volume of its claim would skip
///   all three (a review's finding: a ServiceAccount not on the allowlist mounted the claim writable and the run
///   succeeded). A run whose Job was created keeps its mounts.
///
/// # Errors
/// The first refusal, naming the field.
pub fn refuse_dataset_claim_mounts(
    run: &TrainingRun,
    datasets: &[Dataset],
    resolved: &[ResolvedDataset<'_>],
) -> Result<(), RenderError> {
    for (i, r) in resolved.iter().enumerate() {
        if r.reference.read_only == Some(false) {
            return Err(RenderError::WritableDatasetMount(format!(
                "spec.datasets[{i}].readOnly: Invalid value: false: dataset mounts are always read-only"
            )));
        }
    }
    let started = TrainingRunStatus::job_recorded(run.status.as_ref());
    for (i, volume) in run.spec.volumes.iter().flatten().enumerate() {
        let Some(claim) = volume
            .persistent_volume_claim
            .as_ref()
            .map(|c| &c.claim_name)
        else {
            continue;
        };
        let holds = |d: &Dataset| d.spec.pvc.as_ref().is_some_and(|p| &p.claim_name == claim);
        if let Some(r) = resolved.iter().find(|r| holds(r.dataset)) {
            if volume.read_only != Some(true) {
                return Err(RenderError::WritableDatasetMount(format!(
                    "spec.volumes[].readOnly: Invalid value: volume {:?} mounts claim {claim:?} of Dataset {} \
                     writable: set readOnly: true or use spec.datasets",
                    volume.name, r.reference.name
                )));
            }
        } else if let Some(dataset) = datasets.iter().find(|d| holds(d)).filter(|_| !started) {
            return Err(RenderError::Datasets(DatasetRefusal {
                reason: Reason::AccessDenied,
                message: format!(
                    "spec.volumes[{i}].persistentVolumeClaim.claimName: claim {claim:?} holds Dataset {} (version \
                     {:?}); mount it through spec.datasets instead (read-only, checked against its \
                     allowedServiceAccounts, its deletion held while the run uses it)",
                    dataset.name_any(),
                    dataset.spec.version
                ),
            }));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dataset(name: &str, claim: &str) -> Dataset {
        let mut d: Dataset = serde_json::from_value(json!({
            "apiVersion": "modelfleet.io/v1alpha1", "kind": "Dataset",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {"version": "1", "source": {"uri": "s3://b/c"}, "pvc": {"claimName": claim},
                "allowedServiceAccounts": ["trainer"]}}))
        .unwrap();
        d.metadata.namespace = Some("ml".into());
        d
    }

    fn run(spec: serde_json::Value) -> TrainingRun {
        serde_json::from_value(json!({
            "apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun",
            "metadata": {"name": "r", "namespace": "ml"}, "spec": spec}))
        .unwrap()
    }

    /// A review's finding: a plain volume of a Dataset's claim skipped the allowlist, the read-only mount and the
    /// deletion hold. Refused unless the run references a Dataset of that claim; other claims are the run's own.
    #[test]
    fn a_dataset_claim_is_mounted_only_through_spec_datasets() {
        let datasets = [dataset("secret", "corpus-pvc")];
        let volume = |claim: &str| json!({"name": "data", "mountPath": "/data", "persistentVolumeClaim": {"claimName": claim}});
        let sneaky = run(json!({"container": {"image": "i"}, "volumes": [volume("corpus-pvc")]}));
        let resolved = check_datasets(&sneaky, &datasets).unwrap();
        let Err(RenderError::Datasets(refusal)) =
            refuse_dataset_claim_mounts(&sneaky, &datasets, &resolved)
        else {
            panic!("refused as a Dataset refusal")
        };
        assert_eq!(refusal.reason, Reason::AccessDenied);
        assert!(
            refusal.message.starts_with(
                "spec.volumes[0].persistentVolumeClaim.claimName: claim \"corpus-pvc\" holds Dataset secret"
            ),
            "{}",
            refusal.message
        );
        let own = run(json!({"container": {"image": "i"}, "volumes": [volume("scratch")]}));
        assert!(refuse_dataset_claim_mounts(&own, &datasets, &[]).is_ok());
        let referenced = run(
            json!({"container": {"image": "i"}, "serviceAccountName": "trainer",
            "datasets": [{"name": "secret", "version": "1", "mountPath": "/d"}],
            "volumes": [volume("corpus-pvc")]}),
        );
        let resolved = check_datasets(&referenced, &datasets).unwrap();
        // Referenced, the claim's volume must still be read-only (case O-07), and then it passes.
        assert!(matches!(
            refuse_dataset_claim_mounts(&referenced, &datasets, &resolved),
            Err(RenderError::WritableDatasetMount(_))
        ));
        let mut read_only = referenced.clone();
        read_only.spec.volumes.as_mut().unwrap()[0].read_only = Some(true);
        let resolved = check_datasets(&read_only, &datasets).unwrap();
        assert!(refuse_dataset_claim_mounts(&read_only, &datasets, &resolved).is_ok());
    }
}
