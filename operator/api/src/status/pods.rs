//! Why a workload's pods do not run, from what the cluster says about them (shared by the InferenceService and
//! TrainingRun statuses): the scheduler's `PodScheduled` condition, the kubelet's container waiting reasons, and the
//! `FailedCreate` Events a workload controller records when the API server refuses its pods (Pod Security
//! admission, a ResourceQuota). Pure functions over objects the controllers list.

use k8s_openapi::api::core::v1::{ContainerStateTerminated, ContainerStatus, Event, Pod};
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
/// configuration the kubelet refuses (e.g. `runAsNonRoot` with an image that runs as root), an image it cannot pull
/// or inspect ([`PULL_REASONS`] and the rest of `pkg/kubelet/images/types.go`), a container that keeps crashing.
const STALLED_REASONS: &[&str] = &[
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
    "ErrImageNeverPull",
    "ImageInspectError",
    "CrashLoopBackOff",
    "RunContainerError",
];

/// The waiting reasons of one failing image pull, which the kubelet alternates between: the pull's own error
/// (`ErrImagePull`, or the runtime's `RegistryUnavailable` / `SignatureValidationFailed`) while it pulls, then
/// `ImagePullBackOff` while it waits to pull again (`pkg/kubelet/images/image_manager.go`, Kubernetes v1.35).
const PULL_REASONS: &[&str] = &[
    "ErrImagePull",
    "RegistryUnavailable",
    "SignatureValidationFailed",
    "ImagePullBackOff",
];

/// Why the first pod that cannot start is stuck: `pod POD: container NAME: DETAIL` from the first container (init
/// containers first) that cannot start, worded to stay the same from one kubelet retry to the next (`waiting_detail`:
/// a crash loop by its last exit, an image pull by its error); `None` when no pod is.
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

/// What a container that cannot start waits for, worded so that it stays the same from one retry of the kubelet to
/// the next (a status holding it is not rewritten at every retry):
///
/// - a crash loop as `CrashLoopBackOff: last exit: REASON (exit code N)` (e.g. `Error`, `OOMKilled`), whether the
///   kubelet shows the container waiting in `CrashLoopBackOff` (the exit from `lastState.terminated`; its own message,
///   `back-off 5m0s restarting failed container=...`, doubles at each crash) or, until its next sync, terminated with
///   a non-zero exit after a restart (the exit from `state.terminated`);
/// - an image pull as `cannot pull image "IMAGE": ERROR` for each of the [`PULL_REASONS`] ([`pull_error`]);
/// - any other of the [`STALLED_REASONS`] as `REASON: MESSAGE` (`CreateContainerConfigError: container has
///   runAsNonRoot and image will run as root`).
///
/// `None` when the container runs, or waits for another reason (`ContainerCreating`, `PodInitializing`).
fn waiting_detail(container: &ContainerStatus) -> Option<String> {
    let state = container.state.as_ref()?;
    let crashed = |t: &ContainerStateTerminated| {
        format!(
            "CrashLoopBackOff: last exit: {} (exit code {})",
            t.reason.as_deref().unwrap_or("unknown"),
            t.exit_code
        )
    };
    if let Some(t) = state.terminated.as_ref() {
        return (t.exit_code != 0 && container.restart_count >= 1).then(|| crashed(t));
    }
    let waiting = state.waiting.as_ref()?;
    let reason = waiting.reason.as_deref()?;
    let message = waiting.message.as_deref().filter(|m| !m.is_empty());
    if PULL_REASONS.contains(&reason) {
        let image = &container.image;
        return Some(match message.and_then(pull_error) {
            Some(error) => format!("cannot pull image {image:?}: {error}"),
            None => format!("cannot pull image {image:?}"),
        });
    }
    if !STALLED_REASONS.contains(&reason) {
        return None;
    }
    let last = container
        .last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref());
    Some(match (reason, last, message) {
        ("CrashLoopBackOff", Some(t), _) => crashed(t),
        (_, _, Some(message)) => format!("{reason}: {message}"),
        _ => reason.to_owned(),
    })
}

/// The pull error in the waiting message of a container in one of the [`PULL_REASONS`]: the message itself while it
/// pulls; while it backs off (`Back-off pulling image "IMAGE": NAME: ERROR`, where the kubelet stores the last error
/// as its name and text) the `ERROR` after the quoted image and the error's name. `None` when there is none (a
/// back-off message without an error, e.g. after a kubelet restart).
fn pull_error(message: &str) -> Option<&str> {
    let Some(quoted) = message.strip_prefix("Back-off pulling image \"") else {
        return Some(message);
    };
    let (_, error) = quoted.split_once("\": ")?;
    let named = PULL_REASONS
        .iter()
        .find_map(|name| error.strip_prefix(name)?.strip_prefix(": "));
    Some(named.unwrap_or(error)).filter(|e| !e.is_empty())
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
/// `exceeded quota: gpus, requested: ...` or `violates PodSecurity "restricted:latest": ...`. Only that leading head
/// is cut: a reason that itself says ` is forbidden: ` further on (a webhook's own words) is kept whole.
pub fn refusal_reason(message: &str) -> &str {
    let message = message
        .strip_prefix("(combined from similar events): ")
        .unwrap_or(message);
    let message = message.strip_prefix("Error creating: ").unwrap_or(message);
    message
        .strip_prefix("pods \"")
        .and_then(|rest| rest.split_once("\" is forbidden: "))
        .filter(|(name, _)| !name.contains(['"', ' ']))
        .map_or(message, |(_, reason)| reason)
}

#[cfg(test)]
mod tests;
