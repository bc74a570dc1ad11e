//! Dataset access checks for a TrainingRun (DESIGN.md section 3, TrainingRun datasets; cases
//! O-07 and O-08). Pure: the caller passes the Datasets it fetched.

use std::fmt;

use kube::{Resource, ResourceExt};

use super::RenderError;
use crate::conditions::{self, ConditionStatus, ConditionType, Reason};
use crate::v1alpha1::Volume;
use crate::{Dataset, DatasetRef, InferenceService, TrainingRun, TrainingRunStatus};

/// Why a run may not use its Datasets: a `DatasetsReady=False` condition; no Job is created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetRefusal {
    /// Condition reason: `DatasetNotFound`, `VersionMismatch`, `AccessDenied`, `CrossNamespace`, or the Dataset's own
    /// `ClaimNotFound` / `ClaimLost`.
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
/// absent `serviceAccountName` checked as `default`), then the Dataset's claim ([`claim_refusal`]). A run without a
/// namespace (`render -f`) is treated as being in `default`.
///
/// # Errors
/// The first refusal, its message starting with the field (`spec.datasets[i]...`, or `spec.serviceAccountName` for
/// the allowlist) and saying the fix.
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
        if let Some(refusal) = claim_refusal(i, found)
            .filter(|_| !TrainingRunStatus::job_recorded(run.status.as_ref()))
        {
            return Err(refusal);
        }
        out.push(ResolvedDataset {
            reference: r,
            dataset: found,
        });
    }
    Ok(out)
}

/// The refusal of reference `i` to `dataset` when the Dataset's own status says its claim cannot be mounted:
/// `PVCBound=False` with `ClaimNotFound` (the claim does not exist) or `ClaimLost` (its PersistentVolume is gone).
/// A Job created then would wait `Pending` for a volume that is not there ("persistentvolumeclaim not found"),
/// using up its `activeDeadlineSeconds`; refused, the run is retried when the Dataset's status changes (the
/// controller watches Datasets). `ClaimPending` is not refused: a claim of a `WaitForFirstConsumer` StorageClass
/// binds only once a pod uses it. A Dataset whose status was not written yet is not refused either, and a run whose
/// Job exists keeps it (the caller's check).
fn claim_refusal(i: usize, dataset: &Dataset) -> Option<DatasetRefusal> {
    let claim = &dataset.spec.pvc.as_ref()?.claim_name;
    let bound = dataset.status.as_ref()?.conditions.as_deref()?;
    let reason = conditions::find(bound, ConditionType::PVCBound)
        .filter(|c| c.status == ConditionStatus::False.as_str())
        .and_then(|c| Reason::parse(&c.reason))?;
    let (state, fix) = match reason {
        Reason::ClaimNotFound => (
            "does not exist",
            "create the PersistentVolumeClaim; the Job is created once it exists",
        ),
        Reason::ClaimLost => (
            "is Lost (its PersistentVolume is gone, and with it the data)",
            "restore the data into a claim, register it as a new Dataset and reference that",
        ),
        _ => return None,
    };
    Some(DatasetRefusal {
        reason,
        message: format!(
            "spec.datasets[{i}].name: the claim {claim:?} of Dataset {} {state} (the Dataset's PVCBound is {reason}): {fix}",
            dataset.name_any()
        ),
    })
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
        if let Some(r) = resolved.iter().find(|r| holds_claim(r.dataset, claim)) {
            if volume.read_only != Some(true) {
                return Err(RenderError::WritableDatasetMount(format!(
                    "spec.volumes[{i}].readOnly: Invalid value: volume {:?} mounts claim {claim:?} of Dataset {} \
                     writable: set readOnly: true or use spec.datasets",
                    volume.name, r.reference.name
                )));
            }
        } else if let Some(dataset) = datasets
            .iter()
            .find(|d| holds_claim(d, claim))
            .filter(|_| !started)
        {
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

/// The claim rules of an InferenceService's mounts. A service has no `spec.datasets`; a volume of the claim of one of
/// `datasets` (those of the service's namespace) gets the rules a run's reference gets, so the allowlist cannot be
/// skipped by serving where training is refused:
/// - the service's ServiceAccount (absent means `default`) must be in the Dataset's `allowedServiceAccounts`, else
///   `AccessDenied`;
/// - the volume must be `readOnly: true` (a Dataset is never writable, case O-07), else `WritableDatasetMount`.
///
/// A service does not hold the Dataset's deletion (`usedBy` lists runs); Kubernetes' `kubernetes.io/pvc-protection`
/// keeps the claim itself while pods mount it. Like every refusal of a service, nothing is applied: a Deployment of
/// an earlier accepted spec keeps its mounts.
///
/// # Errors
/// The first refusal, naming the volume (`spec.volumes[i]`), the claim, the Dataset and the fix.
pub fn refuse_service_dataset_claims(
    isvc: &InferenceService,
    datasets: &[Dataset],
) -> Result<(), RenderError> {
    let sa = isvc
        .spec
        .service_account_name
        .as_deref()
        .unwrap_or("default");
    for (i, volume, claim, dataset) in dataset_claim_volumes(isvc.spec.volumes.as_deref(), datasets)
    {
        let mut allowed = dataset.spec.allowed_service_accounts.iter().flatten();
        if !allowed.any(|a| a == sa) {
            return Err(RenderError::Datasets(DatasetRefusal {
                reason: Reason::AccessDenied,
                message: format!(
                    "spec.volumes[{i}].persistentVolumeClaim.claimName: claim {claim:?} holds Dataset {} and \
                     ServiceAccount {sa:?} (spec.serviceAccountName) is not in its allowedServiceAccounts; ask its \
                     owner to add it, or serve under an allowed account",
                    dataset.name_any()
                ),
            }));
        }
        if volume.read_only != Some(true) {
            return Err(RenderError::WritableDatasetMount(format!(
                "spec.volumes[{i}].readOnly: Invalid value: volume {:?} mounts claim {claim:?} of Dataset {} \
                 writable: set readOnly: true",
                volume.name,
                dataset.name_any()
            )));
        }
    }
    Ok(())
}

/// Each pair of one of `volumes` and one of `datasets` whose claim it mounts: the volume's index, the volume, the
/// claim name and the Dataset. Two Datasets may name one claim (two versions on one volume): a volume then pairs with
/// each, and must pass the rules of each.
fn dataset_claim_volumes<'a>(
    volumes: Option<&'a [Volume]>,
    datasets: &'a [Dataset],
) -> impl Iterator<Item = (usize, &'a Volume, &'a str, &'a Dataset)> {
    let claims = volumes
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, volume)| {
            let claim = volume.persistent_volume_claim.as_ref()?.claim_name.as_str();
            Some((i, volume, claim))
        });
    claims.flat_map(move |(i, volume, claim)| {
        datasets
            .iter()
            .filter(move |d| holds_claim(d, claim))
            .map(move |d| (i, volume, claim, d))
    })
}

/// Whether `dataset` names the PersistentVolumeClaim `claim` (`pvc.claimName`).
pub fn holds_claim(dataset: &Dataset, claim: &str) -> bool {
    dataset
        .spec
        .pvc
        .as_ref()
        .is_some_and(|p| p.claim_name == claim)
}

/// Whether any of `volumes` mounts the PersistentVolumeClaim `claim` (what the InferenceService controller's
/// Dataset watch maps a Dataset's claim back to).
pub fn mounts_claim(volumes: Option<&[Volume]>, claim: &str) -> bool {
    volumes.into_iter().flatten().any(|v| {
        v.persistent_volume_claim
            .as_ref()
            .is_some_and(|c| c.claim_name == claim)
    })
}

/// Whether any of `volumes` mounts a PersistentVolumeClaim: only then can a Dataset's claim be among them, and only
/// then does the operator read the namespace's Datasets to check ([`refuse_service_dataset_claims`],
/// [`refuse_dataset_claim_mounts`]).
pub fn mounts_a_claim(volumes: Option<&[Volume]>) -> bool {
    volumes
        .into_iter()
        .flatten()
        .any(|v| v.persistent_volume_claim.is_some())
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

    /// A Dataset whose status says its claim is missing or `Lost` refuses a run that has no Job yet (the Job would
    /// wait `Pending` and use up its deadline); a pending claim, an unwritten status or a created Job does not.
    #[test]
    fn a_missing_or_lost_claim_refuses_a_run_without_a_job() {
        let with_bound = |reason: Option<(&str, &str)>| {
            let mut d = dataset("corpus", "corpus-pvc");
            d.status = reason.map(|(status, reason)| {
                serde_json::from_value(json!({"conditions": [{"type": "PVCBound", "status": status,
                    "reason": reason, "message": "", "lastTransitionTime": "2026-12-07T00:00:00Z"}]}))
                .unwrap()
            });
            [d]
        };
        let mut r = run(
            json!({"container": {"image": "i"}, "serviceAccountName": "trainer",
            "datasets": [{"name": "corpus", "version": "1", "mountPath": "/d"}]}),
        );
        for (status, reason) in [("False", "ClaimNotFound"), ("False", "ClaimLost")] {
            let refusal = check_datasets(&r, &with_bound(Some((status, reason)))).unwrap_err();
            assert_eq!(refusal.reason.as_str(), reason);
            assert!(
                refusal.message.starts_with(
                    "spec.datasets[0].name: the claim \"corpus-pvc\" of Dataset corpus "
                ),
                "{}",
                refusal.message
            );
        }
        let missing =
            check_datasets(&r, &with_bound(Some(("False", "ClaimNotFound")))).unwrap_err();
        assert!(
            missing
                .message
                .ends_with("create the PersistentVolumeClaim; the Job is created once it exists")
        );
        for usable in [
            None,
            Some(("False", "ClaimPending")),
            Some(("True", "Bound")),
        ] {
            assert!(
                check_datasets(&r, &with_bound(usable)).is_ok(),
                "{usable:?}"
            );
        }
        r.status = Some(TrainingRunStatus {
            job_name: Some("r".into()),
            ..Default::default()
        });
        assert!(check_datasets(&r, &with_bound(Some(("False", "ClaimLost")))).is_ok());
    }

    /// An InferenceService has no `spec.datasets`: a volume of a Dataset's claim must pass that Dataset's allowlist
    /// and be read-only, for every Dataset naming the claim.
    #[test]
    fn a_service_mounts_a_dataset_claim_only_allowed_and_read_only() {
        let service = |sa: Option<&str>,
                       claim: &str,
                       read_only: Option<bool>|
         -> InferenceService {
            serde_json::from_value(json!({
                "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
                "metadata": {"name": "s", "namespace": "ml"},
                "spec": {"model": {"name": "m"}, "container": {"image": "i"}, "serviceAccountName": sa,
                    "volumes": [{"name": "data", "mountPath": "/data", "readOnly": read_only,
                        "persistentVolumeClaim": {"claimName": claim}}]}}))
            .unwrap()
        };
        let datasets = [dataset("corpus", "corpus-pvc")];
        let Err(RenderError::Datasets(denied)) =
            refuse_service_dataset_claims(&service(None, "corpus-pvc", Some(true)), &datasets)
        else {
            panic!("the default ServiceAccount is not on the allowlist")
        };
        assert_eq!(denied.reason, Reason::AccessDenied);
        assert!(
            denied.message.starts_with(
                "spec.volumes[0].persistentVolumeClaim.claimName: claim \"corpus-pvc\" holds Dataset corpus and \
                 ServiceAccount \"default\" (spec.serviceAccountName) is not in its allowedServiceAccounts"
            ),
            "{}",
            denied.message
        );
        let writable =
            refuse_service_dataset_claims(&service(Some("trainer"), "corpus-pvc", None), &datasets);
        assert!(
            matches!(writable, Err(RenderError::WritableDatasetMount(m)) if m.starts_with("spec.volumes[0].readOnly"))
        );
        let allowed = service(Some("trainer"), "corpus-pvc", Some(true));
        assert!(refuse_service_dataset_claims(&allowed, &datasets).is_ok());
        assert!(refuse_service_dataset_claims(&service(None, "scratch", None), &datasets).is_ok());
        // A second Dataset on the same claim that does not allow the account refuses it too.
        let mut strict = dataset("corpus-v2", "corpus-pvc");
        strict.spec.allowed_service_accounts = Some(vec!["someone-else".into()]);
        let both = [datasets[0].clone(), strict];
        let Err(RenderError::Datasets(denied)) = refuse_service_dataset_claims(&allowed, &both)
        else {
            panic!("refused by the second Dataset")
        };
        assert!(
            denied.message.contains("holds Dataset corpus-v2 and"),
            "{}",
            denied.message
        );
        assert!(mounts_a_claim(allowed.spec.volumes.as_deref()));
        assert!(!mounts_a_claim(None));
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
