//! `wait_for` (DESIGN.md section 6): `none` (or null) returns right after the write; `reconciled` waits for the
//! operator to have processed the written generation (`status.observedGeneration == metadata.generation`); every
//! other value is the kind's own rule ([`Kind::wait`]), checked once the generation is reconciled. Pure: the object
//! comes in as JSON.

use serde_json::Value as Json;

use model_fleet_api::conditions::{ConditionType, Reason};

use super::kind::{Kind, WaitState};
use crate::value::Value;

/// The default `wait_for`.
pub const NONE: &str = "none";
/// Waits until the operator processed this generation.
pub const RECONCILED: &str = "reconciled";

/// The `Ready` reasons by which the operator refuses a spec as written (docs/CONDITIONS.md): no retry changes them,
/// only a new spec does, so a wait ends on them at once.
const REFUSALS: [Reason; 4] = [
    Reason::FitTooLarge,
    Reason::FitUnsplittable,
    Reason::InvalidSpec,
    Reason::WritableDatasetMount,
];

/// Evaluates `wait_for` of kind `K` on the object's JSON; `state` is the resource's new state. Any `wait_for` but
/// `none` fails once the operator refused the current generation ([`REFUSALS`]).
pub fn check<K: Kind>(wait_for: &str, object: &Json, state: &Value) -> WaitState {
    if matches!(wait_for, "" | NONE) {
        return WaitState::Done;
    }
    if let Some(waiting) = unreconciled(object) {
        return waiting;
    }
    if let Some(refused) = refused(object) {
        return refused;
    }
    match wait_for {
        RECONCILED => WaitState::Done,
        other => suspended(object).unwrap_or_else(|| K::wait(other, object, state)),
    }
}

/// `Failed` when the operator reports the current generation suspended (`Ready=False, Suspended`: intent
/// `suspended`, a passed `schedule.expires_at`, or an idle service): only a change of the spec resumes it, so no wait
/// for readiness or completion can end (a user's finding: such a wait ran out its 20 minutes and tainted the object).
fn suspended(object: &Json) -> Option<WaitState> {
    let (reason, message) = ready_for_this_generation(object)?;
    (reason == Reason::Suspended.as_str()).then(|| {
        WaitState::Failed(format!(
            "it is suspended (Ready=False, Suspended: {message}), and only a change of the configuration resumes it: \
             set intent to \"active\" or \"automatic\", move or remove schedule.expires_at, or set wait_for = \
             \"reconciled\" for an object meant to stay suspended"
        ))
    })
}

/// `Ready=False` as the operator wrote it for the object's current generation: `(reason, message)`.
fn ready_for_this_generation(object: &Json) -> Option<(&str, &str)> {
    let generation = object
        .pointer("/metadata/generation")
        .and_then(Json::as_i64);
    ready_for(object, generation)
}

/// `Ready=False` in `object`'s `status` (a whole object's JSON, or a `DynamicObject`'s `data`, which has no
/// `metadata`) when the operator wrote it for `generation`: `(reason, message)`.
fn ready_for(object: &Json, generation: Option<i64>) -> Option<(&str, &str)> {
    let ready = condition(object, ConditionType::Ready.as_str())?;
    let text = |key: &str| ready.get(key).and_then(Json::as_str);
    let current = ready.get("observedGeneration").and_then(Json::as_i64) == generation;
    (current && text("status") == Some("False")).then(|| {
        (
            text("reason").unwrap_or_default(),
            text("message").unwrap_or_default(),
        )
    })
}

/// The advice after a wait timed out in [`WaitState::Waiting`]: it may only need more time.
pub const SLOW_ADVICE: &str = "Raise the timeouts block to wait longer.";

/// The advice after a wait timed out in [`WaitState::Stalled`]: it waits for a change, so a longer wait is not the
/// advice.
pub const STALLED_ADVICE: &str = "Fix what it names: a stalled rollout or run waits for a change (the image, a \
                                  setting, the namespace's policy, a quota others hold), so a longer timeout alone \
                                  does not help.";

/// `Failed` when the operator refused the current generation.
fn refused(object: &Json) -> Option<WaitState> {
    let generation = object
        .pointer("/metadata/generation")
        .and_then(Json::as_i64);
    let (reason, message) = refusal(object, generation)?;
    Some(WaitState::Failed(format!(
        "the operator refused this spec (Ready=False, {reason}): {message}; change the configuration"
    )))
}

/// `(reason, message)` of `Ready=False` when the operator refused `generation`, the object's current one, as written
/// ([`REFUSALS`]): only a new spec changes it. `object` holds the `status` ([`ready_for`]), so a refresh reads a live
/// `DynamicObject`'s `data` without serializing the whole object.
pub fn refusal(object: &Json, generation: Option<i64>) -> Option<(&str, &str)> {
    let (reason, message) = ready_for(object, generation)?;
    REFUSALS
        .iter()
        .any(|r| r.as_str() == reason)
        .then_some((reason, message))
}

/// `Waiting` while the operator has not written a status for the object's current generation. When its last
/// reconcile of that generation failed (`Ready=False` for it, e.g. `ReconcileError`), it is `Stalled`, quoting that
/// error rather than asking whether the operator runs.
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
        (_, o, g) => {
            let g = g.map_or("?".into(), |g| g.to_string());
            Some(match ready_for_this_generation(object) {
                Some((reason, message)) => WaitState::Stalled(format!(
                    "the operator's reconcile of generation {g} fails (Ready=False, {reason}): {message}; it \
                     retries with backoff"
                )),
                None => WaitState::Waiting(format!(
                    "the operator has not processed generation {g} yet (status.observedGeneration is {}): is the \
                     operator running?",
                    o.map_or("absent".into(), |o| o.to_string()),
                )),
            })
        }
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

/// The condition of `type_` when its `status` is `status` (`"True"` or `"False"`) and, with `reason`, its reason is
/// that one; `None` otherwise (absent included).
pub fn condition_is<'a>(
    object: &'a Json,
    type_: ConditionType,
    status: &str,
    reason: Option<Reason>,
) -> Option<&'a Json> {
    let text = |c: &'a Json, key: &str| c.get(key).and_then(Json::as_str);
    condition(object, type_.as_str()).filter(|c| {
        text(c, "status") == Some(status)
            && reason.is_none_or(|r| text(c, "reason") == Some(r.as_str()))
    })
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

    #[test]
    fn a_failing_reconcile_is_quoted_and_a_refusal_ends_the_wait() {
        let ready = |generation: i64, reason: &str| {
            json!({"metadata": {"generation": 5}, "status": {"observedGeneration": 4, "conditions": [
                {"type": "Ready", "status": "False", "reason": reason, "observedGeneration": generation,
                 "message": "apply Deployment/chat: duplicate entries for key [name=\"A\"]"}]}})
        };
        let WaitState::Stalled(why) =
            check::<Inference>(RECONCILED, &ready(5, "ReconcileError"), &Value::Null)
        else {
            panic!("still waiting, stalled")
        };
        assert_eq!(
            why,
            "the operator's reconcile of generation 5 fails (Ready=False, ReconcileError): apply Deployment/chat: \
             duplicate entries for key [name=\"A\"]; it retries with backoff"
        );
        // The error of an older generation says nothing about this one.
        assert!(matches!(
            check::<Inference>(RECONCILED, &ready(4, "ReconcileError"), &Value::Null),
            WaitState::Waiting(m) if m.contains("is the operator running?")
        ));
        // A refusal of the current generation ends every wait but `none`.
        let refused = json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "conditions": [
            {"type": "Ready", "status": "False", "reason": "InvalidSpec", "observedGeneration": 2,
             "message": "volume name dshm is reserved"}]}});
        for wait_for in [RECONCILED, "ready"] {
            assert_eq!(
                check::<Inference>(wait_for, &refused, &Value::Null),
                WaitState::Failed(
                    "the operator refused this spec (Ready=False, InvalidSpec): volume name dshm is reserved; \
                     change the configuration"
                        .into()
                )
            );
        }
        assert_eq!(
            check::<Inference>(NONE, &refused, &Value::Null),
            WaitState::Done
        );
    }

    /// A user's finding: `wait_for = "ready"` on a suspended service (by its intent, its expiry or idleness) waited
    /// out its timeout. Suspended for this generation ends the wait at once; for an older generation it says nothing.
    #[test]
    fn a_suspended_object_ends_a_wait_for_readiness() {
        let suspended = |generation: i64| {
            json!({"metadata": {"generation": 3}, "status": {"observedGeneration": 3, "conditions": [
                {"type": "Ready", "status": "False", "reason": "Suspended", "observedGeneration": generation,
                 "message": "intent is suspended: 0 replicas"}]}})
        };
        let WaitState::Failed(why) = check::<Inference>("ready", &suspended(3), &Value::Null)
        else {
            panic!("a suspended service never becomes ready by itself")
        };
        assert!(
            why.starts_with(
                "it is suspended (Ready=False, Suspended: intent is suspended: 0 replicas)"
            ) && why.contains("wait_for = \"reconciled\""),
            "{why}"
        );
        assert_eq!(
            check::<Inference>(RECONCILED, &suspended(3), &Value::Null),
            WaitState::Done,
            "reconciled is what a suspended object can wait for"
        );
        assert!(matches!(
            check::<Inference>("ready", &suspended(2), &Value::Null),
            WaitState::Waiting(_)
        ));
    }
}
