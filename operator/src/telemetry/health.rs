//! The facts behind `/healthz` and `/readyz`, shared between the runtime (which sets them) and the server.
//!
//! - **healthz (liveness)**: the process is able to do its job: the HTTP server answers and the leader-election loop
//!   has not died. A failing liveness probe makes the kubelet restart the pod, so only unrecoverable states count.
//! - **readyz (readiness)**: the operator has reached the API server through leader election (it knows whether it
//!   leads) **and**, when it leads, every controller is running with its caches synced (initial list done). A standby
//!   replica that does not lead is ready as soon as it knows it does not lead: rolling updates run two pods, and a
//!   standby that never became ready would stall the rollout. During shutdown it reports not ready.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Process-wide health facts; all methods are lock-free. Share it behind an `Arc`.
#[derive(Debug, Default)]
pub struct Health {
    lease_known: AtomicBool,
    leading: AtomicBool,
    controllers_expected: AtomicUsize,
    /// The leadership term (high 32 bits) and how many controllers synced in it (low 32 bits), in one word so that a
    /// marker of an earlier term never counts in a later one.
    controllers_synced: AtomicU64,
    lease_failed: AtomicBool,
    shutting_down: AtomicBool,
}

impl Health {
    /// Creates health facts for a process that will run `controllers` controllers while it leads.
    pub fn new(controllers: usize) -> Self {
        let health = Self::default();
        health
            .controllers_expected
            .store(controllers, Ordering::SeqCst);
        health
    }

    /// Records the current leader-election state (the first call also marks the lease as known).
    /// Losing the lead resets the synced-controller count: controllers stop and restart from scratch.
    pub fn set_leading(&self, leading: bool) {
        self.leading.store(leading, Ordering::SeqCst);
        self.lease_known.store(true, Ordering::SeqCst);
        if !leading {
            self.controllers_stopped();
        }
    }

    /// Whether this process currently holds the Lease.
    pub fn is_leading(&self) -> bool {
        self.leading.load(Ordering::SeqCst)
    }

    /// The current leadership term: a controller started now passes it to [`Health::controller_synced`].
    pub fn term(&self) -> u64 {
        self.controllers_synced.load(Ordering::SeqCst) >> 32
    }

    /// Records that one more controller, started in leadership `term` ([`Health::term`]), finished its initial list;
    /// nothing when the controllers stopped since (a review's finding: a marker that fired just after a lost Lease
    /// counted in the next leadership, which then reported ready with one controller unsynced).
    pub fn controller_synced(&self, term: u64) {
        let _ = self
            .controllers_synced
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |word| {
                (word >> 32 == term).then_some(word + 1)
            });
    }

    /// Records that the controllers stopped (lost lease or shutdown): readiness waits for them again, in a new term.
    pub fn controllers_stopped(&self) {
        let _ = self
            .controllers_synced
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |word| {
                Some(((word >> 32) + 1) << 32)
            });
    }

    /// Marks the leader-election loop as dead: `/healthz` fails from now on.
    pub fn set_lease_failed(&self) {
        self.lease_failed.store(true, Ordering::SeqCst);
    }

    /// Marks the process as shutting down: `/readyz` fails from now on.
    pub fn set_shutting_down(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }

    /// Liveness as served at `/healthz` (see the module docs).
    pub fn is_healthy(&self) -> bool {
        !self.lease_failed.load(Ordering::SeqCst)
    }

    /// Readiness as served at `/readyz` (see the module docs).
    pub fn is_ready(&self) -> bool {
        if self.shutting_down.load(Ordering::SeqCst) || !self.is_healthy() {
            return false;
        }
        if !self.lease_known.load(Ordering::SeqCst) {
            return false;
        }
        !self.is_leading()
            || (self.controllers_synced.load(Ordering::SeqCst) & u64::from(u32::MAX))
                >= self.controllers_expected.load(Ordering::SeqCst) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_ready_before_the_lease_state_is_known() {
        let health = Health::new(1);
        assert!(health.is_healthy());
        assert!(!health.is_ready());
    }

    #[test]
    fn standby_is_ready_once_it_knows_it_does_not_lead() {
        let health = Health::new(1);
        health.set_leading(false);
        assert!(health.is_ready());
    }

    #[test]
    fn leader_is_ready_only_when_every_controller_synced() {
        let health = Health::new(2);
        health.set_leading(true);
        assert!(!health.is_ready());
        let term = health.term();
        health.controller_synced(term);
        assert!(!health.is_ready());
        health.controller_synced(term);
        assert!(health.is_ready());
        health.controllers_stopped();
        assert!(!health.is_ready());
        // A marker of the stopped term counts no more.
        health.controller_synced(term);
        health.controller_synced(term);
        assert!(!health.is_ready());
        health.controller_synced(health.term());
        health.controller_synced(health.term());
        assert!(health.is_ready());
    }

    #[test]
    fn shutdown_and_lease_failure_flip_probes() {
        let health = Health::new(0);
        health.set_leading(true);
        assert!(health.is_ready());
        health.set_shutting_down();
        assert!(!health.is_ready());
        assert!(health.is_healthy());
        health.set_lease_failed();
        assert!(!health.is_healthy());
    }
}
