//! Suspend after idle in the reconcile (`spec.schedule.suspendAfterIdleSeconds`; issue 22): the pure rules are in
//! `model_fleet_api::schedule::idle`; this module feeds them the live ScaledObject, puts the outcome into the status
//! draft, announces transitions with Events and shortens the requeue to the coming suspension.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::Resource;
use kube::api::DynamicObject;
use model_fleet_api::schedule::idle::{self, Activity, Idle, IdleChange};
use model_fleet_api::schedule::requeue_until;
use model_fleet_api::status::Draft;
use model_fleet_api::{InferenceService, InferenceServiceStatus, Intent, NextTransition};

use crate::controller::context::Context;
use crate::controller::events;

/// Requeue after an idle suspension was decided (seconds: 1): the next reconcile renders the service suspended.
pub const APPLY_SUSPENSION: Duration = Duration::from_secs(1);

/// Evaluates idleness for `isvc` (effective intent `intent`) from its live ScaledObject, at `now`. KEDA's activity is
/// not counted while the service is suspended for any reason (KEDA is paused then).
pub fn evaluate(
    isvc: &InferenceService,
    intent: Intent,
    scaled_object: Option<&DynamicObject>,
    now: Timestamp,
) -> Idle {
    // Most services have no idle limit: no ScaledObject to read for them.
    if idle::after(isvc).is_none() {
        return Idle::default();
    }
    let activity = (intent != Intent::Suspended)
        .then(|| scaled_object.and_then(|so| serde_json::to_value(so).ok()))
        .flatten()
        .and_then(|so| Activity::of_scaled_object(&so));
    idle::evaluate(isvc, activity, now)
}

/// Puts `outcome` into `draft`: `status.idle`, the `Suspended=True, Idle` condition, and the coming suspension in
/// `status.nextTransition` when it is earlier than the one already there (`expiresAt`'s).
pub fn annotate(
    isvc: &InferenceService,
    outcome: &Idle,
    own_intent: Option<Intent>,
    draft: &mut Draft<InferenceServiceStatus>,
) {
    idle::annotate(isvc, outcome, own_intent, &mut draft.conditions);
    draft.status.idle = outcome.status.clone();
    let Some(at) = outcome
        .suspend_at
        .filter(|_| own_intent != Some(Intent::Suspended))
    else {
        return;
    };
    let earlier = draft
        .status
        .next_transition
        .as_ref()
        .and_then(|t| t.at.parse::<Timestamp>().ok())
        .is_none_or(|existing| at < existing);
    if earlier {
        draft.status.next_transition = Some(NextTransition {
            at: at.to_string(),
            intent: Intent::Suspended,
        });
    }
}

/// `requeue` shortened to reach the coming suspension (at least 1 s), or [`APPLY_SUSPENSION`] when it was just
/// decided.
pub fn requeue_within(outcome: &Idle, now: Timestamp, requeue: Duration) -> Duration {
    if outcome.change == Some(IdleChange::Suspended) {
        return APPLY_SUSPENSION;
    }
    requeue_until(now, outcome.suspend_at, requeue)
}

/// A Normal Event for a transition (`IdleSuspended`, `IdleResumed`).
pub async fn announce(ctx: &Context, isvc: &InferenceService, outcome: &Idle) {
    let (reason, note) = match outcome.change {
        Some(IdleChange::Suspended) => (
            "IdleSuspended",
            format!(
                "no KEDA trigger active since {}: suspended (spec.schedule.suspendAfterIdleSeconds); change the spec to \
                 resume",
                outcome
                    .status
                    .as_ref()
                    .and_then(|s| s.since.as_deref())
                    .unwrap_or("unknown")
            ),
        ),
        Some(IdleChange::Resumed) => (
            "IdleResumed",
            "the spec changed: resumed from the idle suspension; the idle count restarts"
                .to_string(),
        ),
        None => return,
    };
    events::normal(
        &ctx.recorder,
        &isvc.object_ref(&()),
        reason,
        "Schedule",
        note,
    )
    .await;
}
