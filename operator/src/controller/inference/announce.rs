//! events of one InferenceService reconcile (DESIGN.md section 5: Events for decisions a user would want to see).
//!
//! What a reconcile announces, planned by the pure [`plan`] and published by [`publish`]:
//! - one `Normal` Event `Created` naming every child the reconcile created (one write, not one per child);
//! - one Event per `Ready` or warning condition whose status or reason changed, with the condition's reason as the
//!   Event's reason (`Warning` for a warning, [`status::is_warning`]: a refused spec's `Ready=False` and a fit
//!   without headroom among them);
//! - a new object's first `Ready` state is not a transition: it is told in the `Created` Event of the same reconcile
//!   (`created Service/chat, Deployment/chat; Ready is False: ...`) instead of an Event of its own. Every Event is a
//!   write to the API server; a new service's first reconcile publishes one instead of two.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::Resource as _;
use model_fleet_api::conditions::{self, ConditionType, DesiredCondition};
use model_fleet_api::status::inference as status;

use crate::controller::context::Context;
use crate::controller::events;
use model_fleet_api::InferenceService;

/// One Event to publish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// `Warning` (true) or `Normal`.
    pub warning: bool,
    /// The Event's reason: `Created` or a condition's reason.
    pub reason: String,
    /// The Event's action: `Apply` or `Reconcile`.
    pub action: &'static str,
    /// The Event's note.
    pub note: String,
}

/// The Events of a reconcile that created the children `created` (`Kind/name`, empty when none) and moved the
/// conditions from `before` (the live status) to `after`; `after` is empty when the status was not written. Pure.
pub fn plan(created: &[String], before: &[Condition], after: &[DesiredCondition]) -> Vec<Planned> {
    let mut planned = Vec::new();
    let mut first_ready = None;
    for want in after {
        let warning = status::is_warning(want);
        let previous = conditions::find(before, want.type_);
        let changed = previous
            .is_none_or(|p| p.status != want.status.as_str() || p.reason != want.reason.as_str());
        if !changed || !(want.type_ == ConditionType::Ready || warning) {
            continue;
        }
        let note = format!(
            "{} is {}: {}",
            want.type_,
            want.status.as_str(),
            want.message
        );
        let is_first_ready = want.type_ == ConditionType::Ready && !warning && previous.is_none();
        if is_first_ready && !created.is_empty() {
            first_ready = Some(note);
            continue;
        }
        planned.push(Planned {
            warning,
            reason: want.reason.as_str().to_owned(),
            action: "Reconcile",
            note,
        });
    }
    if !created.is_empty() {
        let mut note = format!("created {}", created.join(", "));
        if let Some(ready) = first_ready {
            note = format!("{note}; {ready}");
        }
        let created = Planned {
            warning: false,
            reason: "Created".to_owned(),
            action: "Apply",
            note,
        };
        planned.insert(0, created);
    }
    planned
}

/// Publishes the [`plan`] on `isvc`, in order (best effort: see [`events`]).
pub async fn publish(
    ctx: &Context,
    isvc: &InferenceService,
    created: &[String],
    before: &[Condition],
    after: &[DesiredCondition],
) {
    let regarding = isvc.object_ref(&());
    for event in plan(created, before, after) {
        let Planned {
            warning,
            reason,
            action,
            note,
        } = event;
        if warning {
            events::warning(&ctx.recorder, &regarding, &reason, action, note).await;
        } else {
            events::normal(&ctx.recorder, &regarding, &reason, action, note).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;
    use model_fleet_api::conditions::ConditionStatus::{False, True};
    use model_fleet_api::conditions::ConditionType::{Degraded, Ready, RouteReady};
    use model_fleet_api::conditions::{ConditionStatus, Reason};

    fn desired(type_: ConditionType, status: ConditionStatus, reason: Reason) -> DesiredCondition {
        DesiredCondition::new(type_, status, reason, "why")
    }

    fn live(want: &DesiredCondition) -> Condition {
        Condition {
            type_: want.type_.to_string(),
            status: want.status.as_str().to_owned(),
            reason: want.reason.as_str().to_owned(),
            message: want.message.clone(),
            observed_generation: None,
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
        }
    }

    fn summary(planned: &[Planned]) -> Vec<(bool, &str, &str, &str)> {
        planned
            .iter()
            .map(|p| (p.warning, p.reason.as_str(), p.action, p.note.as_str()))
            .collect()
    }

    #[test]
    fn a_new_service_gets_one_created_event_carrying_its_first_ready_state() {
        let ready = desired(Ready, False, Reason::Suspended);
        let created = ["Service/chat".to_owned(), "Deployment/chat".to_owned()];
        assert_eq!(
            summary(&plan(&created, &[], std::slice::from_ref(&ready))),
            [(
                false,
                "Created",
                "Apply",
                "created Service/chat, Deployment/chat; Ready is False: why"
            )]
        );
    }

    #[test]
    fn a_transition_and_a_warning_keep_their_own_events_after_created() {
        let suspended = desired(Ready, False, Reason::Suspended);
        let progressing = desired(Ready, False, Reason::Progressing);
        let conflict = desired(RouteReady, False, Reason::HostnameConflict);
        // A child re-created while Ready moves on: the transition is news of its own.
        let created = ["Service/chat".to_owned()];
        let planned = plan(
            &created,
            &[live(&suspended)],
            &[progressing.clone(), conflict.clone()],
        );
        assert_eq!(
            summary(&planned),
            [
                (false, "Created", "Apply", "created Service/chat"),
                (false, "Progressing", "Reconcile", "Ready is False: why"),
                (
                    true,
                    "HostnameConflict",
                    "Reconcile",
                    "RouteReady is False: why"
                ),
            ]
        );
        // The first Ready state with nothing created (e.g. a refused spec) is announced on its own.
        assert_eq!(
            summary(&plan(&[], &[], std::slice::from_ref(&suspended))),
            [(false, "Suspended", "Reconcile", "Ready is False: why")]
        );
    }

    #[test]
    fn a_refused_spec_and_a_fit_without_headroom_are_warnings_once() {
        let serving = desired(Ready, True, Reason::AsExpected);
        let refused = [
            desired(Ready, False, Reason::FitTooLarge),
            desired(Degraded, True, Reason::FitTooLarge),
        ];
        assert_eq!(
            summary(&plan(&[], &[live(&serving)], &refused)),
            [(true, "FitTooLarge", "Reconcile", "Ready is False: why")]
        );
        let headroom = desired(Degraded, True, Reason::FitWithoutHeadroom);
        let fine = desired(Degraded, False, Reason::AsExpected);
        assert_eq!(
            summary(&plan(&[], &[live(&fine)], std::slice::from_ref(&headroom))),
            [(
                true,
                "FitWithoutHeadroom",
                "Reconcile",
                "Degraded is True: why"
            )]
        );
        assert!(plan(&[], &[live(&headroom)], std::slice::from_ref(&headroom)).is_empty());
    }

    #[test]
    fn nothing_changed_nothing_published() {
        let ready = desired(Ready, True, Reason::AsExpected);
        assert!(plan(&[], &[live(&ready)], std::slice::from_ref(&ready)).is_empty());
        // A status that was not written (after empty) with children created: Created alone.
        assert_eq!(
            summary(&plan(&["HTTPRoute/chat".to_owned()], &[live(&ready)], &[])),
            [(false, "Created", "Apply", "created HTTPRoute/chat")]
        );
    }
}
