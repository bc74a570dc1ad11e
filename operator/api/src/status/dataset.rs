//! Dataset status, computed (DESIGN.md section 3, Dataset): which runs use a Dataset, whether its deletion is held
//! by the in-use finalizer, and the `Ready` / `PVCBound` conditions.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::{Resource, ResourceExt};

use super::training::is_finished;
use crate::conditions::{self, ConditionStatus, ConditionType, DesiredCondition, Reason};
use crate::{Dataset, TrainingRun, TrainingRunStatus};

/// Finalizer that holds a Dataset's deletion while an unfinished TrainingRun uses it.
pub const FINALIZER: &str = "modelfleet.io/dataset-in-use";

/// Whether `run` uses `dataset`: same namespace, a `spec.datasets[]` entry naming it (without another namespace)
/// with its version, the run is not finished (Succeeded, Failed, Cancelled) nor being deleted, and either its Job was
/// created (`status.jobName`: its mounts are fixed, whatever the allowlist says since) or its status shows no
/// refusal by this Dataset ([`refused_by`]). A run referencing another version does not use this one. A run this
/// Dataset refused (its allowlist, or its deletion: [`check_datasets`]) does not start while that holds, so it does
/// not hold the deletion (a hunt saw one wait on such a run for good). Any other run holds it: one not refused yet, or
/// refused by another of its Datasets, may be creating its Job right now (a review's finding: a run refused for a
/// missing Dataset let go of the others, and one deleted the moment the missing one was created was gone while the
/// run's new Job used it).
///
/// [`check_datasets`]: crate::render::check_datasets
pub fn uses(run: &TrainingRun, dataset: &Dataset) -> bool {
    let namespace = dataset.namespace();
    let status = run.status.as_ref();
    let name = dataset.name_any();
    let exempt = !TrainingRunStatus::job_recorded(status) && refused_by(run, &name);
    if run.namespace() != namespace
        || run.meta().deletion_timestamp.is_some()
        || is_finished(status.and_then(|s| s.phase))
        || exempt
    {
        return false;
    }
    run.spec.datasets.iter().flatten().any(|r| {
        r.name == name
            && r.version == dataset.spec.version
            && r.namespace
                .as_ref()
                .is_none_or(|ns| Some(ns) == namespace.as_ref())
    })
}

/// Whether the Dataset refusal `run`'s status records (`DatasetsReady=False`) is about the Dataset named `name`. The
/// message says ([`check_datasets`]'s words): it starts with the reference `spec.datasets[i]` (not found, being
/// deleted, another version or namespace), or names the Dataset whose allowlist lacks the run's ServiceAccount.
///
/// [`check_datasets`]: crate::render::check_datasets
fn refused_by(run: &TrainingRun, name: &str) -> bool {
    let Some(refusal) = run
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .and_then(|c| conditions::find(c, ConditionType::DatasetsReady))
        .filter(|c| c.status == ConditionStatus::False.as_str())
    else {
        return false;
    };
    let message = refusal.message.as_str();
    let index = message
        .strip_prefix("spec.datasets[")
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(index, _)| index.parse::<usize>().ok());
    match index {
        Some(index) => run
            .spec
            .datasets
            .iter()
            .flatten()
            .nth(index)
            .is_some_and(|r| r.name == name),
        None => message.contains(&format!("allowedServiceAccounts of Dataset {name};")),
    }
}

/// `namespace/name` of every run in `runs` that [`uses`] `dataset`, sorted (the `usedBy` status field).
pub fn used_by(runs: &[&TrainingRun], dataset: &Dataset) -> Vec<String> {
    let mut names: Vec<String> = runs
        .iter()
        .filter(|run| uses(run, dataset))
        .map(|run| format!("{}/{}", run.namespace().unwrap_or_default(), run.name_any()))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// What to do with [`FINALIZER`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FinalizerChange {
    /// Add it: the Dataset is in use and not being deleted.
    Add,
    /// Remove it: no unfinished run uses the Dataset (its pending deletion, if any, proceeds).
    Remove,
    /// Leave the list as it is.
    Keep,
}

/// The finalizer decision. A finalizer is never added to an object that is being deleted (case O-03's rule): a
/// Dataset deleted before any run used it goes away at once.
pub fn finalizer_change(has_finalizer: bool, deleting: bool, in_use: bool) -> FinalizerChange {
    match (has_finalizer, deleting, in_use) {
        (false, false, true) => FinalizerChange::Add,
        (true, _, false) => FinalizerChange::Remove,
        _ => FinalizerChange::Keep,
    }
}

/// `PVCBound` for the claim named `claim_name` (`claim` is the live claim, `None` when it does not exist).
pub fn pvc_bound(claim_name: &str, claim: Option<&PersistentVolumeClaim>) -> DesiredCondition {
    let Some(claim) = claim else {
        return DesiredCondition::new(
            ConditionType::PVCBound,
            false,
            Reason::ClaimNotFound,
            format!(
                "PersistentVolumeClaim {claim_name} does not exist in the Dataset's namespace: create it (a Dataset is \
                 immutable: to name another claim, register a new Dataset)"
            ),
        );
    };
    let phase = claim
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("Pending");
    match phase {
        "Bound" => DesiredCondition::new(
            ConditionType::PVCBound,
            true,
            Reason::Bound,
            format!("PersistentVolumeClaim {claim_name} is Bound"),
        ),
        "Lost" => DesiredCondition::new(
            ConditionType::PVCBound,
            false,
            Reason::ClaimLost,
            format!(
                "PersistentVolumeClaim {claim_name} is Lost: its PersistentVolume is gone, and with it the data; \
                 restore the data into a claim and register a new Dataset"
            ),
        ),
        _ => DesiredCondition::new(
            ConditionType::PVCBound,
            false,
            Reason::ClaimPending,
            format!(
                "PersistentVolumeClaim {claim_name} is {phase}, not Bound: it waits for a volume (its StorageClass' \
                 provisioner, or a matching PersistentVolume); `kubectl describe pvc {claim_name}` says why"
            ),
        ),
    }
}

/// `Ready`: the data is usable (no claim, or the claim is Bound; registration never checks remote data). While a
/// deletion waits for runs, `Ready=False, InUse` names them.
pub fn ready(
    pvc: Option<&DesiredCondition>,
    deleting: bool,
    used_by: &[String],
) -> DesiredCondition {
    if deleting && !used_by.is_empty() {
        return DesiredCondition::new(
            ConditionType::Ready,
            false,
            Reason::InUse,
            format!(
                "deletion waits until these runs finish: {}",
                used_by.join(", ")
            ),
        );
    }
    match pvc {
        Some(c) if c.status != ConditionStatus::True => {
            DesiredCondition::new(ConditionType::Ready, false, c.reason, c.message.clone())
        }
        _ => DesiredCondition::new(
            ConditionType::Ready,
            true,
            Reason::AsExpected,
            "registered (remote data is not checked)",
        ),
    }
}

#[cfg(test)]
mod tests;
