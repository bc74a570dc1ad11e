//! Why a workload's pods do not run, from what the cluster says about them (shared by the InferenceService and
//! TrainingRun statuses): the scheduler's `PodScheduled` condition, the kubelet's container waiting reasons, and the
//! `FailedCreate` Events a workload controller records when the API server refuses its pods (Pod Security
//! admission, a ResourceQuota). Pure functions over objects the controllers list.

use k8s_openapi::api::core::v1::{ContainerStatus, Event, Pod};
use k8s_openapi::jiff::Timestamp;

/// The scheduler's message of the first pod it could not place (`PodScheduled=False`, reason `Unschedulable`).
pub fn unschedulable_message(pods: &[Pod]) -> Option<String> {
    pods.iter().find_map(|pod| {
        pod.status
            .as_ref()?
            .conditions
            .as_ref()?
            .iter()
            .find(|c| {
                c.type_ == "PodScheduled"
                    && c.status == "False"
                    && c.reason.as_deref() == Some("Unschedulable")
            })
            .map(|c| {
                c.message
                    .clone()
                    .unwrap_or_else(|| "pods cannot be scheduled".to_owned())
            })
    })
}

/// Container waiting reasons that mean the container will not start without a change (the kubelet's words): a
/// configuration the kubelet refuses (e.g. `runAsNonRoot` with an image that runs as root), an image it cannot pull,
/// a container that keeps crashing.
const STALLED_REASONS: &[&str] = &[
    "CreateContainerConfigError",
    "CreateContainerError",
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CrashLoopBackOff",
    "RunContainerError",
];

/// Why the first pod that cannot start is stuck: `pod POD: container NAME: DETAIL` from the first container (init
/// containers first) waiting for one of the [`STALLED_REASONS`] ([`waiting_detail`]); `None` when no pod is.
pub fn stalled_pod_message(pods: &[Pod]) -> Option<String> {
    pods.iter().find_map(|pod| {
        let status = pod.status.as_ref()?;
        let containers = status.init_container_statuses.iter().flatten();
        containers
            .chain(status.container_statuses.iter().flatten())
            .find_map(|c| {
                let detail = waiting_detail(c)?;
                let pod = pod.metadata.name.as_deref().unwrap_or_default();
                Some(format!("pod {pod}: container {}: {detail}", c.name))
            })
    })
}

/// What a container waiting for one of the [`STALLED_REASONS`] waits for, worded so that it stays the same from one
/// retry of the kubelet to the next (a status holding it is not rewritten at every retry):
///
/// - `CrashLoopBackOff: last exit: REASON (exit code N)` from `lastState.terminated` (e.g. `Error`, `OOMKilled`),
///   instead of the kubelet's `back-off 5m0s restarting failed container=...`, whose delay doubles at each crash;
/// - `cannot pull image "IMAGE": ERROR` for both `ErrImagePull` (its message is the error) and `ImagePullBackOff`
///   (its message is `Back-off pulling image "IMAGE": ERROR`, the same error), which the kubelet alternates between;
/// - any other reason as `REASON: MESSAGE` (`CreateContainerConfigError: container has runAsNonRoot and image will
///   run as root`).
///
/// `None` when the container does not wait, or waits for another reason (`ContainerCreating`, `PodInitializing`).
pub fn waiting_detail(container: &ContainerStatus) -> Option<String> {
    let waiting = container.state.as_ref()?.waiting.as_ref()?;
    let reason = waiting.reason.as_deref()?;
    if !STALLED_REASONS.contains(&reason) {
        return None;
    }
    let message = waiting.message.as_deref().filter(|m| !m.is_empty());
    Some(match reason {
        "CrashLoopBackOff" => {
            let last = container
                .last_state
                .as_ref()
                .and_then(|s| s.terminated.as_ref());
            match last {
                Some(t) => format!(
                    "CrashLoopBackOff: last exit: {} (exit code {})",
                    t.reason.as_deref().unwrap_or("unknown"),
                    t.exit_code
                ),
                None => reason.to_owned(),
            }
        }
        "ErrImagePull" | "ImagePullBackOff" => {
            let image = &container.image;
            let back_off = format!("Back-off pulling image {image:?}");
            let error = message
                .map(|m| m.strip_prefix(back_off.as_str()).unwrap_or(m))
                .map(|m| m.strip_prefix(": ").unwrap_or(m))
                .filter(|m| !m.is_empty());
            match error {
                Some(error) => format!("cannot pull image {image:?}: {error}"),
                None => format!("cannot pull image {image:?}"),
            }
        }
        _ => match message {
            Some(message) => format!("{reason}: {message}"),
            None => reason.to_owned(),
        },
    })
}

/// Reason of the Event a workload controller (the Job controller, the ReplicaSet controller) records on its object
/// when the API server refuses a pod it creates (`Error creating: pods "..." is forbidden: ...`).
pub const FAILED_CREATE: &str = "FailedCreate";

/// Why pods cannot be created: the latest [`FAILED_CREATE`] Event among `events` (core/v1 Events of one object) that
/// happened at or after `since` (older ones speak of an earlier attempt: before a resume, or before the newest pod),
/// latest by the Event's own last time (`series.lastObservedTime`, else `lastTimestamp`, else `eventTime`, else
/// `firstTimestamp`); `None` when there is none. The Job controller has no status condition for this (unlike a
/// Deployment's `ReplicaFailure`), so its Events are the only place the refusal is written.
///
/// The message is the API server's reason alone ([`refusal_reason`]), so it stays the same from one retry to the
/// next and a status holding it is not rewritten at every retry.
pub fn failed_create_message(events: &[Event], since: Option<Timestamp>) -> Option<&str> {
    let when = |e: &Event| {
        e.series
            .as_ref()
            .and_then(|s| s.last_observed_time.as_ref().map(|t| t.0))
            .or(e.last_timestamp.as_ref().map(|t| t.0))
            .or(e.event_time.as_ref().map(|t| t.0))
            .or(e.first_timestamp.as_ref().map(|t| t.0))
    };
    events
        .iter()
        .filter(|e| e.reason.as_deref() == Some(FAILED_CREATE))
        .filter(|e| since.is_none_or(|since| when(e).is_some_and(|at| at >= since)))
        .max_by_key(|e| when(e))
        .map(|e| refusal_reason(e.message.as_deref().unwrap_or("pod creation refused")))
}

/// The API server's reason in a [`FAILED_CREATE`] message, without what changes at every retry: the event library's
/// `(combined from similar events): ` prefix, the controller's `Error creating: ` and the head
/// `pods "NAME" is forbidden: ` (the API server names each new pod before admission refuses it). E.g.
/// `exceeded quota: gpus, requested: ...` or `violates PodSecurity "restricted:latest": ...`.
pub fn refusal_reason(message: &str) -> &str {
    let message = message
        .strip_prefix("(combined from similar events): ")
        .unwrap_or(message);
    let message = message.strip_prefix("Error creating: ").unwrap_or(message);
    message
        .split_once(" is forbidden: ")
        .map_or(message, |(_, reason)| reason)
}

#[cfg(test)]
mod tests;
