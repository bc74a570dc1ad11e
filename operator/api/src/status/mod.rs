//! Status computation (DESIGN.md section 1: the status step): pure functions from what render decided (the facts)
//! and what the live children report to the desired status and conditions. The controllers fetch the children,
//! call these, and write the result through the status subresource; no rule about what a status says lives in the
//! controllers.
//!
//! - [`pods`]: why pods do not run (unscheduled, a container that cannot start, creation refused), for both workloads;
//! - [`inference`]: `Ready`, `Progressing`, `RouteReady`, `ScalingReady`, `Suspended`, `Degraded`;
//! - [`training`]: the run's `phase` derived from its Job, counts, times, `Ready`, `Suspended`, `DatasetsReady`,
//!   `Degraded`;
//! - [`dataset`]: `usedBy`, the in-use finalizer decision, `Ready`, `PVCBound`.

pub mod dataset;
pub mod inference;
mod json;
pub mod pods;
pub mod training;

pub use json::{JsonCondition, conditions_of, parent_condition};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::capacity::FitBudget;
use crate::conditions::{ConditionStatus, ConditionType, DesiredCondition, Reason};
use crate::{DatasetStatus, InferenceServiceStatus, TrainingRunStatus};

/// A desired status `S` (its `conditions` left empty) and the desired conditions the writer merges into it
/// ([`crate::conditions::merge`], which keeps transition times).
#[derive(Clone, Debug, PartialEq)]
pub struct Draft<S> {
    /// The status without conditions.
    pub status: S,
    /// The conditions, in the order they are written.
    pub conditions: Vec<DesiredCondition>,
}

/// A status with a `conditions` list (the three kinds' statuses), so one writer merges and writes them all.
pub trait HasConditions {
    /// The current conditions (empty when absent).
    fn conditions(&self) -> &[Condition];
    /// Replaces the conditions.
    fn set_conditions(&mut self, conditions: Vec<Condition>);
}

macro_rules! has_conditions {
    ($($status:ty),+) => {$(
        impl HasConditions for $status {
            fn conditions(&self) -> &[Condition] {
                self.conditions.as_deref().unwrap_or_default()
            }
            fn set_conditions(&mut self, conditions: Vec<Condition>) {
                self.conditions = Some(conditions);
            }
        }
    )+};
}

has_conditions!(InferenceServiceStatus, TrainingRunStatus, DatasetStatus);

/// What `Degraded=True, NeedsAttention` says of a `Ready` that reports a stall: `Ready: <its message>` when it is
/// `False, Progressing` with a message starting `rollout stalled: ` or `run stalled: `
/// ([`crate::conditions::says_stalled`]): the rollout or run cannot go on without a change (an image that cannot be
/// pulled, a crash loop, an admission refusal), which needs a human even though `Progressing` is not a warning
/// reason. `None` otherwise.
pub fn stall_problem(ready: &DesiredCondition) -> Option<String> {
    let stalled = ready.type_ == ConditionType::Ready
        && ready.status == ConditionStatus::False
        && ready.reason == Reason::Progressing
        && crate::conditions::says_stalled(&ready.message);
    stalled.then(|| format!("{}: {}", ConditionType::Ready, ready.message))
}

/// Adds the fit's headroom warning ([`FitBudget::headroom_warning`]) to `Degraded`: a False `Degraded` becomes
/// `True, FitWithoutHeadroom` with the warning as its message; a True one keeps its reason and gains the warning at
/// the end of its message. No budget, or one with headroom, changes nothing.
pub fn with_fit_warning(conditions: &mut [DesiredCondition], budget: Option<&FitBudget>) {
    let Some(warning) = budget.and_then(FitBudget::headroom_warning) else {
        return;
    };
    let Some(degraded) = conditions
        .iter_mut()
        .find(|c| c.type_ == ConditionType::Degraded)
    else {
        return;
    };
    if degraded.is_true() {
        degraded.message = format!(
            "{}; {}: {warning}",
            degraded.message,
            Reason::FitWithoutHeadroom
        );
    } else {
        *degraded = DesiredCondition::new(
            ConditionType::Degraded,
            ConditionStatus::True,
            Reason::FitWithoutHeadroom,
            warning,
        );
    }
}
