//! Helpers for end-to-end tests against the local control plane.
