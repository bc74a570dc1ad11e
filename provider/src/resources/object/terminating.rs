//! An object being deleted: its `deletionTimestamp` is set and finalizers hold it. A refresh keeps it in state (it
//! exists) with a warning ([`CustomResource::refreshed`]); a delete that times out waiting for it names what holds it
//! ([`holders`]). A refresh also warns while the operator refuses the object's current spec ([`refused`]).

use kube::api::DynamicObject;
use serde_json::Value as Json;

use super::super::attributes::ID;
use super::super::kind::Kind;
use super::super::wait;
use super::CustomResource;
use crate::diag::Diagnostics;
use crate::value::Value;

impl<K: Kind> CustomResource<K> {
    /// The refreshed state of `state` from `live`, its object ([`Self::state_from_live`]; null when it is gone, so
    /// Terraform plans a create), and a warning when `live` is being deleted or its spec refused (pure).
    ///
    /// A Terminating object is kept in state, not read as gone: it still exists, a destroy that timed out waiting
    /// for it must be retried on it, and an apply to it fails ("being deleted") rather than creating it twice. But
    /// the plan would show no change for an object that is about to disappear, so the warning says what holds it and
    /// what comes next.
    pub(super) fn refreshed(
        &self,
        field_manager: &str,
        state: &Value,
        live: Option<&DynamicObject>,
    ) -> (Value, Diagnostics) {
        let Some(live) = live else {
            let object = state.get(ID).and_then(Value::as_str).unwrap_or_default();
            tracing::info!(%object, "object is gone; removing it from state");
            return (Value::Null, Diagnostics::new());
        };
        let refreshed = self.state_from_live(field_manager, state, live);
        let mut warnings = Diagnostics::new();
        if live.metadata.deletion_timestamp.is_some() {
            let object = format!(
                "{}/{}",
                live.metadata.namespace.as_deref().unwrap_or_default(),
                live.metadata.name.as_deref().unwrap_or_default()
            );
            let held = holders(live).unwrap_or_else(|| {
                "no finalizers are set; the API server has not finished deleting it".to_string()
            });
            warnings.push_warning(
                None,
                format!("{} {object} is being deleted", self.api.kind),
                format!(
                    "It stays in state while it exists, so the plan may show no changes for it, but it is going: \
                     {held}. Once it is gone, the next plan creates it again; until then an apply that changes it \
                     fails, and a destroy waits for it."
                ),
            );
        }
        warnings.extend(refused(&self.api.kind, live));
        (refreshed, warnings)
    }
}

/// A warning when the operator refused the live object's current spec ([`wait::refusal`]): the write succeeded, so
/// the plan shows no change, while the children of the last accepted spec keep running (a breaker's finding: after an
/// apply with `wait_for = "none"`, or after the one error of a wait, every later plan was clean and said nothing).
fn refused(kind: &str, live: &DynamicObject) -> Diagnostics {
    let mut warnings = Diagnostics::new();
    // Read from the object's `data` (its spec and status): a refresh of every resource in a plan passes here, and
    // serializing each whole object only to read one condition was work for nothing.
    if let Some((reason, message)) = wait::refusal(&live.data, live.metadata.generation) {
        let id = format!(
            "{}/{}",
            live.metadata.namespace.as_deref().unwrap_or_default(),
            live.metadata.name.as_deref().unwrap_or_default()
        );
        warnings.push_warning(
            None,
            format!("The operator refuses the spec of {kind} {id} ({reason})"),
            format!(
                "Ready=False, {reason}: {message}. The operator applies nothing of this spec: what its last accepted \
                 spec made keeps running, though the plan may show no change. Fix the configuration (or a field \
                 another manager set on the object)."
            ),
        );
    }
    warnings
}

/// The unfinished runs holding `object` (a Dataset's `status.usedBy`, `namespace/name` each); empty when none.
pub(super) fn used_by(object: &DynamicObject) -> Vec<String> {
    object
        .data
        .pointer("/status/usedBy")
        .and_then(Json::as_array)
        .map(|runs| {
            runs.iter()
                .filter_map(Json::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// What keeps `object` from going (`held by finalizers: ...`, then the runs of [`used_by`] with what to do about
/// them), or `None` when nothing does.
pub(super) fn holders(object: &DynamicObject) -> Option<String> {
    let finalizers = object.metadata.finalizers.clone().unwrap_or_default();
    let runs = used_by(object);
    let mut parts = Vec::new();
    if !finalizers.is_empty() {
        parts.push(format!(
            "it is held by finalizers: {}",
            finalizers.join(", ")
        ));
    }
    if !runs.is_empty() {
        let noun = if runs.len() == 1 {
            "TrainingRun"
        } else {
            "TrainingRuns"
        };
        let them = if runs.len() == 1 { "it" } else { "them" };
        parts.push(format!(
            "used by unfinished {noun} {}: cancel or delete {them}, or wait for {them} to finish",
            runs.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use kube::api::ObjectMeta;
    use serde_json::json;

    use std::time::Duration;

    use super::super::write::delete_timed_out;
    use super::*;
    use crate::resources::dataset::dataset;

    /// The Dataset `ml/corpus` with `finalizers`, `status` and, when `deleting`, a deletion timestamp.
    fn corpus(deleting: bool, finalizers: &[&str], status: Json) -> DynamicObject {
        let timestamp = || serde_json::from_value(json!("2026-12-07T20:00:00Z")).unwrap();
        DynamicObject {
            types: None,
            metadata: ObjectMeta {
                name: Some("corpus".into()),
                namespace: Some("ml".into()),
                deletion_timestamp: deleting.then(timestamp),
                finalizers: Some(finalizers.iter().map(ToString::to_string).collect()),
                ..ObjectMeta::default()
            },
            data: json!({"spec": {"version": "1", "format": "jsonl",
                "source": {"uri": "s3://b/corpus"}}, "status": status}),
        }
    }

    fn state_of(live: &DynamicObject) -> Value {
        let resource = dataset();
        let state = resource.state_from_live("terraform-modelfleet", &Value::Null, live);
        resource
            .refreshed("terraform-modelfleet", &state, Some(live))
            .0
    }

    // A user trial: after a destroy timed out on the in-use finalizer, the block put back planned "No changes" while
    // the Dataset was Terminating, and a create once it was gone. It stays in state, with a warning.
    #[test]
    fn a_terminating_object_stays_in_state_with_a_warning() {
        let resource = dataset();
        let live = corpus(
            true,
            &["modelfleet.io/dataset-in-use"],
            json!({"usedBy": ["ml/long-1", "ml/long-2"]}),
        );
        let state = state_of(&live);
        let (refreshed, warnings) = resource.refreshed("terraform-modelfleet", &state, Some(&live));
        assert_eq!(refreshed, state, "kept: it exists");
        assert_eq!(refreshed.get("id"), Some(&Value::string("ml/corpus")));
        assert_eq!(warnings.0.len(), 1, "{warnings:?}");
        let warning = &warnings.0[0];
        assert_eq!(warning.severity, crate::diag::Severity::Warning);
        assert_eq!(warning.summary, "Dataset ml/corpus is being deleted");
        assert_eq!(
            warning.detail,
            "It stays in state while it exists, so the plan may show no changes for it, but it is going: it is \
             held by finalizers: modelfleet.io/dataset-in-use, used by unfinished TrainingRuns ml/long-1, \
             ml/long-2: cancel or delete them, or wait for them to finish. Once it is gone, the next plan creates \
             it again; until then an apply that changes it fails, and a destroy waits for it."
        );
        // Not being deleted (a finalizer and users are normal then): no warning.
        let live = corpus(
            false,
            &["modelfleet.io/dataset-in-use"],
            json!({"usedBy": ["ml/long-1"]}),
        );
        let (_, warnings) = resource.refreshed("terraform-modelfleet", &state, Some(&live));
        assert!(warnings.0.is_empty(), "{warnings:?}");
        // Gone: null, so Terraform plans a create.
        let (gone, warnings) = resource.refreshed("terraform-modelfleet", &state, None);
        assert!(gone.is_null() && warnings.0.is_empty());
    }

    // A user trial: the timeout named the finalizer but not the runs in status.usedBy, and said to raise
    // timeouts.delete, which a destroy does not read (it takes the timeouts in state).
    #[test]
    fn a_delete_timeout_names_the_runs_and_how_to_wait_longer() {
        let timeout = Duration::from_secs(300);
        let live = corpus(
            true,
            &["modelfleet.io/dataset-in-use"],
            json!({"usedBy": ["ml/long-1"]}),
        );
        let diags = delete_timed_out("Dataset", "ml/corpus", timeout, &live);
        assert_eq!(diags.0[0].summary, "Timed out deleting Dataset ml/corpus");
        assert_eq!(
            diags.0[0].detail,
            "The object still exists after 300s: it is held by finalizers: modelfleet.io/dataset-in-use, used by \
             unfinished TrainingRun ml/long-1: cancel or delete it, or wait for it to finish. The resource stays \
             in state, so destroy can be retried: each try waits up to timeouts.delete (300s) again. A destroy \
             takes its timeouts from the state, not the configuration: to wait longer per try, set timeouts { \
             delete = \"30m\" } in the resource's block and run terraform apply first (put the block back if it \
             was removed), then destroy."
        );
        // Without users: the finalizer's controller, as before.
        let foreign = corpus(true, &["example.test/hold"], json!({}));
        let detail = &delete_timed_out("Dataset", "ml/corpus", timeout, &foreign).0[0].detail;
        assert!(
            detail.starts_with(
                "The object still exists after 300s: it is held by finalizers: example.test/hold. The controller \
                 owning a finalizer must remove it"
            ),
            "{detail}"
        );
        let none = corpus(true, &[], json!(null));
        let detail = &delete_timed_out("Dataset", "ml/corpus", timeout, &none).0[0].detail;
        assert!(detail.contains("no finalizers are set"), "{detail}");
    }

    // A breaker's finding: once an apply wrote a spec the operator refuses (with `wait_for = "none"`, or after the
    // wait's one error), every later plan was clean and said nothing. The refresh warns while the refusal describes
    // the current generation; an older generation's, or a reason that is not a refusal, says nothing.
    #[test]
    fn a_refused_spec_is_a_warning_at_every_refresh() {
        let resource = crate::resources::inference::inference();
        let service = |ready_generation: i64, reason: &str| DynamicObject {
            types: None,
            metadata: ObjectMeta {
                name: Some("chat".into()),
                namespace: Some("ml".into()),
                generation: Some(3),
                ..ObjectMeta::default()
            },
            data: json!({"spec": {"model": {"name": "m"}, "container": {"image": "i"}},
                "status": {"observedGeneration": 3, "conditions": [{"type": "Ready", "status": "False",
                    "reason": reason, "message": "volume shm at /dev/shm", "observedGeneration": ready_generation}]}}),
        };
        let live = service(3, "InvalidSpec");
        let state = resource.state_from_live("terraform-modelfleet", &Value::Null, &live);
        let (refreshed, warnings) = resource.refreshed("terraform-modelfleet", &state, Some(&live));
        assert_eq!(refreshed, state);
        assert_eq!(warnings.0.len(), 1, "{warnings:?}");
        assert_eq!(warnings.0[0].severity, crate::diag::Severity::Warning);
        assert_eq!(
            warnings.0[0].summary,
            "The operator refuses the spec of InferenceService ml/chat (InvalidSpec)"
        );
        assert!(
            warnings.0[0].detail.starts_with(
                "Ready=False, InvalidSpec: volume shm at /dev/shm. The operator applies nothing"
            ),
            "{}",
            warnings.0[0].detail
        );
        for quiet in [service(2, "InvalidSpec"), service(3, "Progressing")] {
            let (_, warnings) = resource.refreshed("terraform-modelfleet", &state, Some(&quiet));
            assert!(warnings.0.is_empty(), "{warnings:?}");
        }
    }

    #[test]
    fn holders_name_the_finalizers_and_the_runs() {
        let one = corpus(
            true,
            &["modelfleet.io/dataset-in-use"],
            json!({"usedBy": ["ml/long-1"]}),
        );
        assert_eq!(
            holders(&one).unwrap(),
            "it is held by finalizers: modelfleet.io/dataset-in-use, used by unfinished TrainingRun ml/long-1: \
             cancel or delete it, or wait for it to finish"
        );
        let foreign = corpus(true, &["example.test/hold"], json!({}));
        assert_eq!(
            holders(&foreign).unwrap(),
            "it is held by finalizers: example.test/hold"
        );
        assert_eq!(holders(&corpus(true, &[], json!(null))), None);
        assert!(used_by(&corpus(true, &[], json!({"usedBy": []}))).is_empty());
    }
}
