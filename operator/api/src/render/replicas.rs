//! Who sets a Deployment's `spec.replicas`, and to what (DESIGN.md section 3, scaling rules; issue 24 cases 1 and 2,
//! the classes of keda#6421, #4733, #6982, #523, #947).
//!
//! Fixed replicas (no triggers) and a suspended service are owned by the operator's apply: `max(min, 1)`, or 0. Once
//! a ScaledObject owns the count, the operator's apply omits the field, and the count changes hands through a
//! separate field manager so dropping it never resets it to the API server's default of 1:
//! - a new Deployment is born at the autoscaler's floor (0 for a suspended one: no pod ever starts for a service
//!   that should be idle);
//! - when the operator still owns the field (it just stopped fixing it), the live count is handed over, raised to
//!   the floor (a service resumed from 0 to `active` gets its pod even when KEDA is slow or absent);
//! - when the autoscaler owns it but the live count is below the floor (someone scaled to 0 an `active` service),
//!   the floor is handed over again; otherwise the autoscaler's count is left alone (case O-04).

use super::inference::InferenceFacts;

/// What the live Deployment says about its replicas, as the controller read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveReplicas {
    /// `spec.replicas` of the live Deployment.
    pub replicas: i32,
    /// Whether the operator's own field manager owns `spec.replicas` (its managedFields `Apply` entry).
    pub owned_by_operator: bool,
}

/// How the apply step sets `spec.replicas`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaPlan {
    /// Apply with `spec.replicas = n`: the operator's field manager owns the count.
    Own(i32),
    /// First set `spec.replicas = n` through the hand-over field manager, then apply without the field.
    HandOver(i32),
    /// Apply without `spec.replicas`: the autoscaler's count stands.
    Leave,
}

impl ReplicaPlan {
    /// The `spec.replicas` the operator's apply carries (`None`: the field is omitted).
    pub fn applied(self) -> Option<i32> {
        match self {
            ReplicaPlan::Own(n) => Some(n),
            ReplicaPlan::HandOver(_) | ReplicaPlan::Leave => None,
        }
    }
}

/// The plan for a service with `facts`, given its live Deployment (`None` before it exists).
pub fn replica_plan(facts: &InferenceFacts, live: Option<LiveReplicas>) -> ReplicaPlan {
    if let Some(n) = facts.owned_replicas() {
        return ReplicaPlan::Own(n);
    }
    let floor = facts.autoscaler_floor.unwrap_or(0);
    match live {
        None => ReplicaPlan::Own(floor),
        Some(live) if live.owned_by_operator => ReplicaPlan::HandOver(live.replicas.max(floor)),
        // KEDA's idle count (`idleReplicaCount: 0`) is not below the floor: raising it would fight the autoscaler.
        Some(live) if live.replicas < floor && !(facts.idle_to_zero && live.replicas == 0) => {
            ReplicaPlan::HandOver(floor)
        }
        Some(_) => ReplicaPlan::Leave,
    }
}

#[cfg(test)]
mod tests;
