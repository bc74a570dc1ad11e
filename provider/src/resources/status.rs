//! Run-time facts and wait conditions read from a custom resource's `status` (DESIGN.md sections
//! 3 and 6). Pure: the object comes in as JSON, no I/O.
//!
//! Facts (Computed, refreshed on read): inference `ready` (the `Ready` condition is `True`) and
//! `ready_replicas` (`status.readyReplicas`, 0 when absent); training `phase` (`status.phase`,
//! null before the operator wrote one).
//!
//! `wait_for`: `none` (or null) returns right after the write; `reconciled` waits for
//! `status.observedGeneration == metadata.generation`; `ready` (inference) also waits for `Ready`
//! True; `completed` (training) waits for phase `Succeeded` and fails early on `Failed` or
//! `Cancelled`.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::computed::WorkloadKind;
use crate::value::{Number, Value};

/// `wait_for` values accepted by `kind`, the first being the default.
pub fn wait_values(kind: WorkloadKind) -> &'static [&'static str] {
    match kind {
        WorkloadKind::Inference => &["none", "reconciled", "ready"],
        WorkloadKind::Training => &["none", "reconciled", "completed"],
    }
}

/// Names of the run-time fact attributes of `kind`.
pub fn fact_attributes(kind: WorkloadKind) -> &'static [&'static str] {
    match kind {
        WorkloadKind::Inference => &["ready", "ready_replicas"],
        WorkloadKind::Training => &["phase"],
    }
}

/// The run-time facts of `kind` from the object's JSON (all names of [`fact_attributes`]).
pub fn facts(kind: WorkloadKind, object: &Json) -> BTreeMap<String, Value> {
    let status = object.get("status");
    match kind {
        WorkloadKind::Inference => {
            let ready = condition(object, "Ready")
                .is_some_and(|c| c.get("status").and_then(Json::as_str) == Some("True"));
            let replicas = status
                .and_then(|s| s.get("readyReplicas"))
                .and_then(Json::as_i64)
                .unwrap_or(0);
            BTreeMap::from([
                ("ready".to_string(), Value::Bool(ready)),
                (
                    "ready_replicas".to_string(),
                    Value::Number(Number::from(replicas)),
                ),
            ])
        }
        WorkloadKind::Training => {
            let phase = status
                .and_then(|s| s.get("phase"))
                .and_then(Json::as_str)
                .map_or(Value::Null, Value::string);
            BTreeMap::from([("phase".to_string(), phase)])
        }
    }
}

fn condition<'a>(object: &'a Json, type_: &str) -> Option<&'a Json> {
    object
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Json::as_str) == Some(type_))
}

/// Where a wait stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitState {
    /// The condition holds.
    Done,
    /// Not yet; the text says what is missing (shown when the wait times out).
    Waiting(String),
    /// It can no longer hold (a failed or cancelled run); the text says why.
    Failed(String),
}

/// Evaluates `wait_for` on the object's JSON. `capacity_class` (from the plan, when known) makes
/// an Unschedulable message name the class no node offers.
pub fn check(
    kind: WorkloadKind,
    wait_for: &str,
    object: &Json,
    capacity_class: Option<&str>,
) -> WaitState {
    if matches!(wait_for, "" | "none") {
        return WaitState::Done;
    }
    let generation = object
        .pointer("/metadata/generation")
        .and_then(Json::as_i64);
    let observed = object
        .pointer("/status/observedGeneration")
        .and_then(Json::as_i64);
    match (object.get("status"), observed, generation) {
        (None | Some(Json::Null), _, _) => {
            return WaitState::Waiting("no status: is the operator running?".into());
        }
        (_, Some(o), Some(g)) if o >= g => {}
        (_, o, g) => {
            return WaitState::Waiting(format!(
                "the operator has not processed generation {} yet (status.observedGeneration is \
                 {}): is the operator running?",
                g.map_or("?".into(), |g| g.to_string()),
                o.map_or("absent".into(), |o| o.to_string()),
            ));
        }
    }
    match (kind, wait_for) {
        (_, "reconciled") => WaitState::Done,
        (WorkloadKind::Inference, "ready") => ready_state(object, capacity_class),
        (WorkloadKind::Training, "completed") => completed_state(object),
        (_, other) => WaitState::Failed(format!("unknown wait_for {other:?}")),
    }
}

fn ready_state(object: &Json, capacity_class: Option<&str>) -> WaitState {
    let Some(ready) = condition(object, "Ready") else {
        return WaitState::Waiting("the Ready condition is not set yet".into());
    };
    let text = |key: &str| ready.get(key).and_then(Json::as_str).unwrap_or_default();
    if text("status") == "True" {
        return WaitState::Done;
    }
    let (reason, message) = (text("reason"), text("message"));
    if reason == "Unschedulable" {
        let class = capacity_class
            .map(|c| format!(": no node of class {c}"))
            .unwrap_or_default();
        return WaitState::Waiting(format!("pods Unschedulable{class} ({message})"));
    }
    WaitState::Waiting(format!("not Ready: {reason}: {message}"))
}

fn completed_state(object: &Json) -> WaitState {
    let phase = object
        .pointer("/status/phase")
        .and_then(Json::as_str)
        .unwrap_or("none");
    let reason = object
        .pointer("/status/reason")
        .and_then(Json::as_str)
        .unwrap_or("no reason given");
    match phase {
        "Succeeded" => WaitState::Done,
        "Failed" => WaitState::Failed(format!("the run failed: {reason}")),
        "Cancelled" => WaitState::Failed("the run was cancelled".into()),
        other => {
            let detail = condition(object, "Ready")
                .or_else(|| condition(object, "DatasetsReady"))
                .and_then(|c| c.get("message"))
                .and_then(Json::as_str)
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            WaitState::Waiting(format!("phase is {other}, not Succeeded{detail}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(generation: i64, status: Json) -> Json {
        json!({"metadata": {"generation": generation}, "status": status})
    }

    #[test]
    fn reconciled_needs_status_for_this_generation() {
        let kind = WorkloadKind::Inference;
        let no_status = json!({"metadata": {"generation": 1}});
        assert_eq!(
            check(kind, "reconciled", &no_status, None),
            WaitState::Waiting("no status: is the operator running?".into())
        );
        let stale = object(2, json!({"observedGeneration": 1}));
        assert!(matches!(
            check(kind, "reconciled", &stale, None),
            WaitState::Waiting(m) if m.contains("generation 2")
        ));
        let current = object(2, json!({"observedGeneration": 2}));
        assert_eq!(check(kind, "reconciled", &current, None), WaitState::Done);
        assert_eq!(check(kind, "none", &no_status, None), WaitState::Done);
    }

    #[test]
    fn ready_names_the_unschedulable_class() {
        let kind = WorkloadKind::Inference;
        let stuck = object(
            1,
            json!({"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "False",
                "reason": "Unschedulable", "message": "0/3 nodes are available"}]}),
        );
        assert_eq!(
            check(kind, "ready", &stuck, Some("141gi")),
            WaitState::Waiting(
                "pods Unschedulable: no node of class 141gi (0/3 nodes are available)".into()
            )
        );
        let ready = object(
            1,
            json!({"observedGeneration": 1, "readyReplicas": 2,
                "conditions": [{"type": "Ready", "status": "True"}]}),
        );
        assert_eq!(check(kind, "ready", &ready, None), WaitState::Done);
        assert_eq!(
            facts(kind, &ready),
            BTreeMap::from([
                ("ready".to_string(), Value::Bool(true)),
                (
                    "ready_replicas".to_string(),
                    Value::Number(Number::from(2i64))
                ),
            ])
        );
        assert_eq!(
            facts(kind, &json!({}))["ready_replicas"],
            Value::Number(Number::from(0i64))
        );
    }

    #[test]
    fn completed_follows_the_phase() {
        let kind = WorkloadKind::Training;
        let run = |phase: &str| object(1, json!({"observedGeneration": 1, "phase": phase}));
        assert_eq!(
            check(kind, "completed", &run("Succeeded"), None),
            WaitState::Done
        );
        assert!(matches!(
            check(kind, "completed", &run("Running"), None),
            WaitState::Waiting(_)
        ));
        assert!(matches!(
            check(kind, "completed", &run("Failed"), None),
            WaitState::Failed(_)
        ));
        assert_eq!(
            facts(kind, &run("Running"))["phase"],
            Value::string("Running")
        );
        assert_eq!(facts(kind, &json!({}))["phase"], Value::Null);
    }
}
