//! Kubernetes Events for decisions a user would want to see (DESIGN.md section 5), through kube's `Recorder`.
//!
//! Events are best effort: a failure to publish is logged and never fails a reconcile. Each Event is a write, so
//! reconcilers publish only on a change (a child created or pruned, a condition transition), never on a no-op
//! reconcile.

use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

/// Longest a reconcile waits for one Event to be published (seconds: 5); Events are best effort.
pub const PUBLISH_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the operator's Events go: the API client, and the operator as their reporter (`reportingController` is the
/// field manager, `reportingInstance` the process' identity).
///
/// Each Event is an object of its own, with its own note. kube's `Recorder` (like client-go's) folds every Event of
/// the same type, reason and action about one object within its cache time (6 minutes) into one series that keeps the
/// first note, so a later, different message read as the first one repeated (a review's finding: a Dataset its last
/// run let go showed `InUse (x2): in use by ml/ev-run: deletion is held`). The operator publishes on changes only, so
/// there is no stream of repeats to fold: each publish gets a fresh recorder.
#[derive(Clone)]
pub struct EventRecorder {
    client: Client,
    reporter: Reporter,
}

impl EventRecorder {
    /// Events written through `client`, reported by `reporter`.
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Self { client, reporter }
    }

    fn recorder(&self) -> Recorder {
        Recorder::new(self.client.clone(), self.reporter.clone())
    }
}

/// Publishes a `Normal` event about `regarding`.
pub async fn normal(
    recorder: &EventRecorder,
    regarding: &ObjectReference,
    reason: &str,
    action: &str,
    note: String,
) {
    publish(recorder, regarding, EventType::Normal, reason, action, note).await;
}

/// Publishes a `Warning` event about `regarding`.
pub async fn warning(
    recorder: &EventRecorder,
    regarding: &ObjectReference,
    reason: &str,
    action: &str,
    note: String,
) {
    publish(
        recorder,
        regarding,
        EventType::Warning,
        reason,
        action,
        note,
    )
    .await;
}

async fn publish(
    recorder: &EventRecorder,
    regarding: &ObjectReference,
    type_: EventType,
    reason: &str,
    action: &str,
    note: String,
) {
    let event = Event {
        type_,
        reason: reason.to_owned(),
        note: Some(truncate(note, 1024)),
        action: action.to_owned(),
        secondary: None,
    };
    let fresh = recorder.recorder();
    match tokio::time::timeout(PUBLISH_TIMEOUT, fresh.publish(&event, regarding)).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::warn!(%error, %reason, "could not publish an event"),
        Err(_) => tracing::warn!(%reason, "publishing an event timed out"),
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary (Events refuse notes over 1 kB).
fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// Reports an object of `kind` that does not deserialize into its Rust type (kube's
/// [`DeserializeGuard`](kube::core::DeserializeGuard) caught it): counted as step `validate`,
/// error `invalid_object` in the reconcile error metric, logged, and told to the user in a Warning Event. The watch, and so
/// every other object of the kind, is unaffected. Returns the action for the reconcile: wait for
/// the next change of the object.
pub async fn report_invalid<K>(
    ctx: &super::Context,
    kind: &str,
    object: &kube::core::DeserializeGuard<K>,
    invalid: &kube::core::error_boundary::InvalidObject,
) -> kube::runtime::controller::Action
where
    K: kube::Resource<DynamicType = ()>,
{
    use kube::Resource as _;
    let error = super::Error::Validate(super::error::Invalid::Schema(invalid.error.to_string()));
    ctx.count_error(kind, &error);
    tracing::warn!(object = %super::context::object_key(kind, object), %error, "invalid {kind}");
    warning(
        &ctx.recorder,
        &object.object_ref(&()),
        "InvalidObject",
        "Reconcile",
        format!(
            "the object does not match the {kind} schema: {}",
            invalid.error
        ),
    )
    .await;
    kube::runtime::controller::Action::await_change()
}

#[cfg(test)]
mod tests {
    use super::truncate;

    #[test]
    fn truncates_on_char_boundaries() {
        assert_eq!(truncate("abc".into(), 10), "abc");
        assert_eq!(truncate("abcdef".into(), 3), "abc");
        assert_eq!(truncate("ééé".into(), 3), "é");
    }
}
