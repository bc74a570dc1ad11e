//! Pure rules of the Dataset controller (DESIGN.md section 3, Dataset): which runs use a Dataset, whether its
//! deletion is held by the finalizer, and the `Ready` / `PVCBound` conditions.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::{Resource, ResourceExt};

use super::super::conditions::{DesiredCondition, reasons, types};
use crate::api::{Dataset, TrainingRun};
use crate::controller::training::phase::is_finished;

/// Finalizer that holds a Dataset's deletion while an unfinished TrainingRun uses it.
pub const FINALIZER: &str = "modelfleet.io/dataset-in-use";

/// `PVCBound=True` reason: the claim is Bound.
pub const BOUND: &str = "Bound";

/// `Ready=False` reason while the deletion of a Dataset waits for the runs using it.
pub const IN_USE: &str = "InUse";

/// Whether `run` uses `dataset`: same namespace, a `spec.datasets[]` entry naming it (without another namespace)
/// with its version, and the run is not finished (Succeeded, Failed, Cancelled) nor being deleted. A run referencing
/// another version does not use this one (its Job is refused).
pub fn uses(run: &TrainingRun, dataset: &Dataset) -> bool {
    let namespace = dataset.namespace();
    if run.namespace() != namespace
        || run.meta().deletion_timestamp.is_some()
        || is_finished(run.status.as_ref().and_then(|s| s.phase))
    {
        return false;
    }
    let name = dataset.name_any();
    run.spec.datasets.iter().flatten().any(|r| {
        r.name == name
            && r.version == dataset.spec.version
            && r.namespace
                .as_ref()
                .is_none_or(|ns| Some(ns) == namespace.as_ref())
    })
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
            types::PVC_BOUND,
            false,
            reasons::CLAIM_NOT_FOUND,
            format!("PersistentVolumeClaim {claim_name} does not exist in the Dataset's namespace"),
        );
    };
    let phase = claim
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("Pending");
    if phase == "Bound" {
        DesiredCondition::new(
            types::PVC_BOUND,
            true,
            BOUND,
            format!("PersistentVolumeClaim {claim_name} is Bound"),
        )
    } else {
        DesiredCondition::new(
            types::PVC_BOUND,
            false,
            reasons::CLAIM_PENDING,
            format!("PersistentVolumeClaim {claim_name} is {phase}, not Bound"),
        )
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
            types::READY,
            false,
            IN_USE,
            format!(
                "deletion waits until these runs finish: {}",
                used_by.join(", ")
            ),
        );
    }
    match pvc {
        Some(c) if c.status != super::super::conditions::ConditionStatus::True => {
            DesiredCondition::new(types::READY, false, &c.reason, c.message.clone())
        }
        _ => DesiredCondition::new(
            types::READY,
            true,
            reasons::AS_EXPECTED,
            "registered (remote data is not checked)",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{DatasetSpec, TrainingPhase, TrainingRunSpec, TrainingRunStatus};
    use crate::controller::conditions::ConditionStatus;
    use k8s_openapi::api::core::v1::PersistentVolumeClaimStatus;
    use serde_json::json;

    fn dataset(version: &str) -> Dataset {
        let mut d = Dataset::new(
            "corpus",
            serde_json::from_value::<DatasetSpec>(
                json!({"version": version, "source": {"uri": "s3://b/c"}}),
            )
            .unwrap(),
        );
        d.metadata.namespace = Some("ml".into());
        d
    }

    fn run(
        name: &str,
        ns: &str,
        refs: serde_json::Value,
        phase: Option<TrainingPhase>,
    ) -> TrainingRun {
        let spec: TrainingRunSpec = serde_json::from_value(json!({
            "container": {"image": "x"},
            "datasets": refs,
        }))
        .unwrap();
        let mut r = TrainingRun::new(name, spec);
        r.metadata.namespace = Some(ns.into());
        r.status = Some(TrainingRunStatus {
            phase,
            ..Default::default()
        });
        r
    }

    #[test]
    fn only_unfinished_runs_of_the_same_namespace_and_version_use_a_dataset() {
        let d = dataset("3");
        let r = |v: &str| json!([{"name": "corpus", "version": v, "mountPath": "/d"}]);
        let running = run("a", "ml", r("3"), Some(TrainingPhase::Running));
        let pending = run("b", "ml", r("3"), None);
        let done = run("c", "ml", r("3"), Some(TrainingPhase::Succeeded));
        let cancelled = run("d", "ml", r("3"), Some(TrainingPhase::Cancelled));
        let other_version = run("e", "ml", r("4"), None);
        let other_ns = run("f", "team-b", r("3"), None);
        let all = [
            &running,
            &pending,
            &done,
            &cancelled,
            &other_version,
            &other_ns,
        ];
        assert_eq!(used_by(&all, &d), vec!["ml/a", "ml/b"]);
    }

    #[test]
    fn finalizer_is_never_added_while_deleting() {
        assert_eq!(finalizer_change(false, false, true), FinalizerChange::Add);
        assert_eq!(finalizer_change(false, true, true), FinalizerChange::Keep);
        assert_eq!(finalizer_change(true, true, true), FinalizerChange::Keep);
        assert_eq!(finalizer_change(true, true, false), FinalizerChange::Remove);
        assert_eq!(
            finalizer_change(true, false, false),
            FinalizerChange::Remove
        );
        assert_eq!(finalizer_change(false, false, false), FinalizerChange::Keep);
    }

    #[test]
    fn pvc_bound_reasons() {
        assert_eq!(pvc_bound("c", None).reason, "ClaimNotFound");
        let claim = |phase: &str| PersistentVolumeClaim {
            status: Some(PersistentVolumeClaimStatus {
                phase: Some(phase.into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            pvc_bound("c", Some(&claim("Pending"))).reason,
            "ClaimPending"
        );
        let bound = pvc_bound("c", Some(&claim("Bound")));
        assert_eq!(
            (bound.status, bound.reason.as_str()),
            (ConditionStatus::True, "Bound")
        );
        assert_eq!(
            ready(Some(&bound), false, &[]).status,
            ConditionStatus::True
        );
        let pending = pvc_bound("c", Some(&claim("Pending")));
        assert_eq!(ready(Some(&pending), false, &[]).reason, "ClaimPending");
        assert_eq!(ready(None, true, &["ml/a".into()]).reason, IN_USE);
        assert_eq!(ready(None, false, &[]).status, ConditionStatus::True);
    }
}
