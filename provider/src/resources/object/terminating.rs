//! An object being deleted: its `deletionTimestamp` is set and finalizers hold it. A delete that times out waiting
//! for it names what holds it ([`holders`]).

use kube::api::DynamicObject;
use serde_json::Value as Json;

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
