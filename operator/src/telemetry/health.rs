//! The facts behind `/healthz` and `/readyz`, shared between the runtime (which sets them) and the server.
//!
//! - **healthz (liveness)**: the process is able to do its job: the HTTP server answers and the leader-election loop
//!   has not died. A failing liveness probe makes the kubelet restart the pod, so only unrecoverable states count.
//! - **readyz (readiness)**: the operator has reached the API server through leader election (it knows whether it
//!   leads) **and**, when it leads, every controller is running with its caches synced (initial list done). A standby
//!   replica that does not lead is ready as soon as it knows it does not lead: rolling updates run two pods, and a
//!   standby that never became ready would stall the rollout. During shutdown it reports not ready.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Process-wide health facts; all methods are lock-free. Share it behind an `Arc`.
#[derive(Debug, Default)]
pub struct Health {
    lease_known: AtomicBool,
    leading: AtomicBool,
    controllers_expected: AtomicUsize,
    controllers_synced: AtomicUsize,
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
            self.controllers_synced.store(0, Ordering::SeqCst);
        }
    }

    /// Whether this process currently holds the Lease.
    pub fn is_leading(&self) -> bool {
        self.leading.load(Ordering::SeqCst)
    }

    /// Records that one more controller has started and its caches finished the initial list.
    pub fn controller_synced(&self) {
        self.controllers_synced.fetch_add(1, Ordering::SeqCst);
    }

    /// Records that the controllers stopped (lost lease or shutdown): readiness waits for them again.
    pub fn controllers_stopped(&self) {
        self.controllers_synced.store(0, Ordering::SeqCst);
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
            || self.controllers_synced.load(Ordering::SeqCst)
                >= self.controllers_expected.load(Ordering::SeqCst)
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
        health.controller_synced();
        assert!(!health.is_ready());
        health.controller_synced();
        assert!(health.is_ready());
        health.controllers_stopped();
        assert!(!health.is_ready());
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
