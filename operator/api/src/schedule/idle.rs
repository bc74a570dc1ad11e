//! Suspend after idle (`spec.schedule.suspendAfterIdleSeconds`, InferenceService; issue 22). Pure: the controller
//! passes KEDA's activity and `now`.
//!
//! The idle signal is KEDA's: a ScaledObject whose `Active` condition is False has had no active trigger since its
//! `status.lastActiveTime` (or, never active, since its creation). Once a service has been idle for the given seconds
//! its effective intent is `suspended` (0 replicas, KEDA paused) until its spec changes. The count is kept in
//! `status.idle` ([`IdleStatus`]) because KEDA's own record stays idle while it is paused, and it restarts at every new
//! `metadata.generation` (a resume must not suspend again at once on KEDA's old `lastActiveTime`). The spec is never
//! rewritten, for the same reason as `expiresAt` (a Terraform-owned field edited by the operator is a perpetual diff).

use std::borrow::Cow;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::Value;

use super::ScheduleState;
use crate::conditions::{ConditionStatus, ConditionType, DesiredCondition, Reason};
use crate::{IdleStatus, InferenceService, Intent};

/// What KEDA reports about a ScaledObject's triggers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Activity {
    /// The `Active` condition is True: a trigger is active now.
    pub active: bool,
    /// `status.lastActiveTime`: when a trigger was last active (`None` if never).
    pub last_active: Option<Timestamp>,
    /// `metadata.creationTimestamp` of the ScaledObject: the start of idleness for one never active.
    pub created: Option<Timestamp>,
}

impl Activity {
    /// KEDA's activity from a live ScaledObject (JSON): `None` until KEDA has written the `Active` condition (a
    /// ScaledObject KEDA has not processed says nothing about idleness).
    pub fn of_scaled_object(object: &Value) -> Option<Activity> {
        let time = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .and_then(|t| t.parse::<Timestamp>().ok())
        };
        let active = object
            .pointer("/status/conditions")?
            .as_array()?
            .iter()
            .find(|c| c["type"] == "Active")?;
        Some(Activity {
            active: active["status"] == "True",
            last_active: time("/status/lastActiveTime"),
            created: time("/metadata/creationTimestamp"),
        })
    }
}

/// What happened at this evaluation, for an Event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleChange {
    /// The service has just been suspended for being idle.
    Suspended,
    /// A new generation resumed an idle suspension.
    Resumed,
}

/// The outcome of one evaluation.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Idle {
    /// `status.idle` to write (`None` without `suspendAfterIdleSeconds`).
    pub status: Option<IdleStatus>,
    /// When the service will be suspended if it stays idle (for `status.nextTransition` and the requeue).
    pub suspend_at: Option<Timestamp>,
    /// A transition to announce.
    pub change: Option<IdleChange>,
}

/// `spec.schedule.suspendAfterIdleSeconds` as a duration.
pub fn after(isvc: &InferenceService) -> Option<Duration> {
    let seconds = isvc.spec.schedule.as_ref()?.suspend_after_idle_seconds?;
    Some(Duration::from_secs(u64::try_from(seconds).ok()?))
}

/// Whether `isvc` is suspended for being idle: `status.idle.suspendedAt` is set for its current generation (and the
/// spec still asks for it). Decided before rendering, from the last status the operator wrote.
pub fn suspended(isvc: &InferenceService) -> bool {
    after(isvc).is_some() && current(isvc).is_some_and(|idle| idle.suspended_at.is_some())
}

/// `isvc` as every step of a reconcile sees it (render, status, the error report): `spec.intent: suspended` while
/// `schedule` has expired (`spec.schedule.expiresAt`, [`ScheduleState::effective`]) or the service is [`suspended`]
/// for being idle; otherwise `isvc` itself, borrowed.
pub fn effective_view<'a>(
    isvc: &'a InferenceService,
    schedule: &ScheduleState,
) -> Cow<'a, InferenceService> {
    let mut effective = schedule.effective(isvc);
    if suspended(isvc) && effective.spec.intent != Some(Intent::Suspended) {
        effective.to_mut().spec.intent = Some(Intent::Suspended);
    }
    effective
}

/// `status.idle` when it belongs to the current generation.
fn current(isvc: &InferenceService) -> Option<&IdleStatus> {
    let idle = isvc.status.as_ref()?.idle.as_ref()?;
    (idle.generation == isvc.metadata.generation).then_some(idle)
}

fn parse(text: Option<&str>) -> Option<Timestamp> {
    text?.parse().ok()
}

/// The next `status.idle`, given KEDA's `activity` (`None`: unknown, or the service is suspended for another reason,
/// so idleness is not counted) at `now`.
pub fn evaluate(isvc: &InferenceService, activity: Option<Activity>, now: Timestamp) -> Idle {
    let Some(after) = after(isvc) else {
        return Idle::default();
    };
    let generation = isvc.metadata.generation;
    let previous = isvc.status.as_ref().and_then(|s| s.idle.clone());
    let same_generation = previous
        .as_ref()
        .is_some_and(|p| p.generation == generation);
    let record = |since: Option<Timestamp>, suspended_at: Option<Timestamp>| IdleStatus {
        since: since.map(|t| t.to_string()),
        suspended_at: suspended_at.map(|t| t.to_string()),
        generation,
    };
    if let Some(previous) = previous.as_ref().filter(|p| p.suspended_at.is_some()) {
        if same_generation {
            return Idle {
                status: Some(previous.clone()),
                ..Idle::default()
            };
        }
        return Idle {
            status: Some(record(Some(now), None)),
            suspend_at: Some(later(now, after)),
            change: Some(IdleChange::Resumed),
        };
    }
    // The count never starts before the current generation was first seen (nor before the recorded start).
    let floor = match previous.as_ref().filter(|_| same_generation) {
        Some(previous) => parse(previous.since.as_deref()),
        None => Some(now),
    };
    let Some(activity) = activity else {
        let status = match previous.filter(|_| same_generation) {
            Some(previous) => previous,
            None => record(Some(now), None),
        };
        return Idle {
            status: Some(status),
            ..Idle::default()
        };
    };
    if activity.active {
        return Idle {
            status: Some(record(None, None)),
            ..Idle::default()
        };
    }
    let idle_from = activity.last_active.or(activity.created).unwrap_or(now);
    let since = floor.map_or(idle_from, |floor| floor.max(idle_from));
    let suspend_at = later(since, after);
    if suspend_at <= now {
        return Idle {
            status: Some(record(Some(since), Some(now))),
            suspend_at: None,
            change: Some(IdleChange::Suspended),
        };
    }
    Idle {
        status: Some(record(Some(since), None)),
        suspend_at: Some(suspend_at),
        change: None,
    }
}

fn later(t: Timestamp, after: Duration) -> Timestamp {
    SignedDuration::try_from(after)
        .ok()
        .and_then(|d| t.checked_add(d).ok())
        .unwrap_or(t)
}

/// While suspended for being idle, the `Suspended` condition says so: `True, Idle` with the times, unless the spec
/// itself asks for the suspension (`intent: suspended`) or another cause (`Expired`) already explains it.
pub fn annotate(
    isvc: &InferenceService,
    idle: &Idle,
    own_intent: Option<Intent>,
    conditions: &mut [DesiredCondition],
) {
    let Some(status) = idle.status.as_ref().filter(|s| s.suspended_at.is_some()) else {
        return;
    };
    if own_intent == Some(Intent::Suspended) {
        return;
    }
    let seconds = after(isvc).map_or(0, |d| d.as_secs());
    let Some(condition) = conditions
        .iter_mut()
        .find(|c| c.type_ == ConditionType::Suspended && c.reason == Reason::Suspended)
    else {
        return;
    };
    *condition = DesiredCondition::new(
        ConditionType::Suspended,
        ConditionStatus::True,
        Reason::Idle,
        format!(
            "no KEDA trigger active since {} (spec.schedule.suspendAfterIdleSeconds: {seconds}): suspended at {} as \
             with intent: suspended; change the spec (e.g. set intent: active, or /fleet start NAME) to resume",
            status.since.as_deref().unwrap_or("unknown"),
            status.suspended_at.as_deref().unwrap_or("unknown"),
        ),
    );
    super::ready_says_why(
        conditions,
        &format!(
            "no KEDA trigger was active for spec.schedule.suspendAfterIdleSeconds ({seconds} s)"
        ),
    );
}

#[cfg(test)]
mod tests;
