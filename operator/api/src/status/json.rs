//! Conditions read from the JSON status of children we have no typed model for (HTTPRoute, ScaledObject): the
//! `metav1.Condition` shape (`type`, `status`, `reason`, `message`, optional `observedGeneration`).

use serde_json::Value;

/// A condition read from JSON; absent strings read as empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsonCondition {
    /// `type`.
    pub type_: String,
    /// `status` (`True`, `False`, `Unknown`).
    pub status: String,
    /// `reason`.
    pub reason: String,
    /// `message`.
    pub message: String,
    /// `observedGeneration`: the generation of the object the condition describes, when the writer sets it.
    pub observed_generation: Option<i64>,
}

impl JsonCondition {
    /// The condition in its writer's words for a message: `REASON: MESSAGE`, `fallback` when the reason is empty, and
    /// the reason alone when the message is (KEDA leaves both empty on some conditions).
    pub fn words(&self, fallback: &str) -> String {
        let reason = if self.reason.is_empty() {
            fallback
        } else {
            &self.reason
        };
        if self.message.is_empty() {
            reason.to_owned()
        } else {
            format!("{reason}: {}", self.message)
        }
    }
}

/// The `conditions` list of a status object (empty when absent).
pub fn conditions_of(status: &Value) -> Vec<JsonCondition> {
    let text = |c: &Value, key: &str| {
        c.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    status
        .get("conditions")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|c| JsonCondition {
                    type_: text(c, "type"),
                    status: text(c, "status"),
                    reason: text(c, "reason"),
                    message: text(c, "message"),
                    observed_generation: c.get("observedGeneration").and_then(Value::as_i64),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The condition `type_` a Gateway controller wrote for parent `(namespace, name)` in a route's
/// `status.parents[]` (a parent entry without a namespace means the route's own namespace, `parent.0`).
pub fn parent_condition(
    status: &Value,
    parent: (&str, &str),
    type_: &str,
) -> Option<JsonCondition> {
    status.get("parents")?.as_array()?.iter().find_map(|entry| {
        let reference = entry.get("parentRef")?;
        let name = reference.get("name").and_then(Value::as_str)?;
        let namespace = reference
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or(parent.0);
        if (namespace, name) != parent {
            return None;
        }
        conditions_of(entry).into_iter().find(|c| c.type_ == type_)
    })
}
