//! Scheduled suspend (`spec.schedule.expiresAt`, both kinds; issue 22): from a time on, the object's effective intent
//! is `suspended`. Pure: the controller passes `now`.
//!
//! The spec is never rewritten (a Terraform-owned `intent` edited by the operator would be a perpetual diff and a
//! field-manager fight): the controller renders the object with its effective intent ([`ScheduleState::intent`]),
//! reports the coming change in `status.nextTransition` ([`ScheduleState::next_transition`]), says why it is
//! suspended with `Suspended=True, Expired` ([`ScheduleState::annotate`]) and requeues at the time
//! ([`ScheduleState::requeue_within`]). A later `expiresAt`, or none, resumes the object.

use std::borrow::Cow;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use crate::conditions::{ConditionStatus, ConditionType, DesiredCondition, Reason};
use crate::{InferenceService, Intent, NextTransition, TrainingRun};

/// A kind with `spec.intent` and `spec.schedule` (InferenceService, TrainingRun).
pub trait Scheduled: Clone {
    /// `spec.intent`.
    fn intent(&self) -> Option<Intent>;
    /// Replaces `spec.intent`.
    fn set_intent(&mut self, intent: Option<Intent>);
    /// `spec.schedule.expiresAt`.
    fn expires_at(&self) -> Option<&str>;
}

macro_rules! scheduled {
    ($($kind:ty),+) => {$(
        impl Scheduled for $kind {
            fn intent(&self) -> Option<Intent> {
                self.spec.intent
            }
            fn set_intent(&mut self, intent: Option<Intent>) {
                self.spec.intent = intent;
            }
            fn expires_at(&self) -> Option<&str> {
                self.spec.schedule.as_ref()?.expires_at.as_deref()
            }
        }
    )+};
}

scheduled!(InferenceService, TrainingRun);

/// The schedule of one object at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduleState {
    /// `expiresAt`, parsed; `None` without one, for an instant no clock reaches (after 9999-12-30T22:00Z) and for text
    /// the CRD refuses ([`crate::validate::format::parse_date_time`]).
    pub expires_at: Option<Timestamp>,
    /// The instant the state was computed for.
    pub now: Timestamp,
}

impl ScheduleState {
    /// The state at `now` of a schedule expiring at `expires_at` (RFC 3339, [`Scheduled::expires_at`]).
    pub fn of(expires_at: Option<&str>, now: Timestamp) -> ScheduleState {
        let expires_at = expires_at.and_then(|text| {
            crate::validate::format::parse_date_time(text)
                .ok()
                .flatten()
        });
        ScheduleState { expires_at, now }
    }

    /// `object` with the intent its schedule makes effective: borrowed when that is its own intent, else a copy with
    /// `spec.intent: suspended` (what render and every later step see).
    pub fn effective<'a, K: Scheduled>(&self, object: &'a K) -> Cow<'a, K> {
        let intent = self.intent(object.intent());
        if intent == object.intent() {
            return Cow::Borrowed(object);
        }
        let mut effective = object.clone();
        effective.set_intent(intent);
        Cow::Owned(effective)
    }

    /// Whether `expiresAt` has passed (the effective intent is `suspended`).
    pub fn expired(&self) -> bool {
        self.expires_at.is_some_and(|at| at <= self.now)
    }

    /// The effective intent for a spec whose own intent is `intent`: `suspended` once expired, else `intent`.
    pub fn intent(&self, intent: Option<Intent>) -> Option<Intent> {
        if self.expired() {
            Some(Intent::Suspended)
        } else {
            intent
        }
    }

    /// `status.nextTransition`: the coming suspend, while `expiresAt` is ahead and the spec is not suspended already.
    pub fn next_transition(&self, intent: Option<Intent>) -> Option<NextTransition> {
        let at = self.expires_at.filter(|at| *at > self.now)?;
        (intent != Some(Intent::Suspended)).then(|| NextTransition {
            at: at.to_string(),
            intent: Intent::Suspended,
        })
    }

    /// `requeue` shortened to reach the next transition ([`requeue_until`]).
    pub fn requeue_within(&self, requeue: Duration) -> Duration {
        requeue_until(self.now, self.expires_at, requeue)
    }

    /// Once expired, the `Suspended` condition says so: `True, Expired` with the time, unless the spec itself asks for
    /// the suspension (`intent: suspended`) or the run is cancelled (`Cancelled` stays).
    pub fn annotate(&self, intent: Option<Intent>, conditions: &mut [DesiredCondition]) {
        let Some(at) = self.expires_at.filter(|_| self.expired()) else {
            return;
        };
        if intent == Some(Intent::Suspended) {
            return;
        }
        if let Some(suspended) = conditions
            .iter_mut()
            .find(|c| c.type_ == ConditionType::Suspended && c.reason != Reason::Cancelled)
        {
            *suspended = DesiredCondition::new(
                ConditionType::Suspended,
                ConditionStatus::True,
                Reason::Expired,
                format!(
                    "spec.schedule.expiresAt {at} has passed: suspended as with intent: suspended (set a later \
                     expiresAt, or remove it, to resume)"
                ),
            );
            ready_says_why(
                conditions,
                &format!("spec.schedule.expiresAt {at} has passed"),
            );
        }
    }
}

/// Gives a `Ready=False, Suspended` in `conditions` the cause of a suspension the spec's intent does not explain
/// (`why`: an expiry, idleness), as its `Suspended` condition has it: a user read "intent is suspended" on an object
/// whose intent was `automatic`.
pub(crate) fn ready_says_why(conditions: &mut [DesiredCondition], why: &str) {
    if let Some(ready) = conditions
        .iter_mut()
        .find(|c| c.type_ == ConditionType::Ready && c.reason == Reason::Suspended)
    {
        ready.message =
            format!("suspended because {why} (the Suspended condition says how to resume)");
    }
}

/// `requeue` shortened to reach `at` when it lies ahead of `now` (at least 1 s later, so a clock at the boundary does
/// not spin); `requeue` unchanged without a time ahead. Shared by `expiresAt` and suspend after idle.
pub fn requeue_until(now: Timestamp, at: Option<Timestamp>, requeue: Duration) -> Duration {
    let Some(at) = at.filter(|at| *at > now) else {
        return requeue;
    };
    let until = Duration::try_from(at.duration_since(now)).unwrap_or(requeue);
    requeue.min(until.max(Duration::from_secs(1)))
}

pub mod idle;

#[cfg(test)]
mod tests;
