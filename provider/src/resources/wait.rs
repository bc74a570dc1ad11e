//! `wait_for` (DESIGN.md section 6): `none` (or null) returns right after the write; `reconciled` waits for the
//! operator to have processed the written generation (`status.observedGeneration == metadata.generation`); every
//! other value is the kind's own rule ([`Kind::wait`]), checked once the generation is reconciled. Pure: the object
//! comes in as JSON.

use serde_json::Value as Json;

use super::kind::{Kind, WaitState};
use crate::value::Value;

/// The default `wait_for`.
pub const NONE: &str = "none";
/// Waits until the operator processed this generation.
pub const RECONCILED: &str = "reconciled";

/// Evaluates `wait_for` of kind `K` on the object's JSON; `state` is the resource's new state.
pub fn check<K: Kind>(wait_for: &str, object: &Json, state: &Value) -> WaitState {
    if matches!(wait_for, "" | NONE) {
        return WaitState::Done;
    }
    if let Some(waiting) = unreconciled(object) {
        return waiting;
    }
    match wait_for {
        RECONCILED => WaitState::Done,
        other => K::wait(other, object, state),
    }
}

/// `Waiting` while the operator has not written a status for the object's current generation.
fn unreconciled(object: &Json) -> Option<WaitState> {
    let generation = object
        .pointer("/metadata/generation")
        .and_then(Json::as_i64);
    let observed = object
        .pointer("/status/observedGeneration")
        .and_then(Json::as_i64);
    match (object.get("status"), observed, generation) {
        (None | Some(Json::Null), _, _) => Some(WaitState::Waiting(
            "no status: is the operator running?".into(),
        )),
        (_, Some(o), Some(g)) if o >= g => None,
        (_, o, g) => Some(WaitState::Waiting(format!(
            "the operator has not processed generation {} yet (status.observedGeneration is {}): is the \
             operator running?",
            g.map_or("?".into(), |g| g.to_string()),
            o.map_or("absent".into(), |o| o.to_string()),
        ))),
    }
}

/// The condition of `type_` in the object's `status.conditions`, as JSON.
pub fn condition<'a>(object: &'a Json, type_: &str) -> Option<&'a Json> {
    object
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Json::as_str) == Some(type_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::inference::Inference;
    use serde_json::json;

    #[test]
    fn reconciled_needs_status_for_this_generation() {
        let no_status = json!({"metadata": {"generation": 1}});
        assert_eq!(
            check::<Inference>(RECONCILED, &no_status, &Value::Null),
            WaitState::Waiting("no status: is the operator running?".into())
        );
        let stale = json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 1}});
        assert!(matches!(
            check::<Inference>(RECONCILED, &stale, &Value::Null),
            WaitState::Waiting(m) if m.contains("generation 2")
        ));
        let current = json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2}});
        assert_eq!(
            check::<Inference>(RECONCILED, &current, &Value::Null),
            WaitState::Done
        );
        assert_eq!(
            check::<Inference>(NONE, &no_status, &Value::Null),
            WaitState::Done
        );
    }
}
