//! Dataset access checks for a TrainingRun (DESIGN.md section 3, TrainingRun datasets; cases
//! O-07 and O-08). Pure: the caller passes the Datasets it fetched.

use std::fmt;

use kube::{Resource, ResourceExt};

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
