//! Schedules (issue 22, "idle and scheduled suspend"): `spec.schedule` of both kinds and what the status reports
//! about it. The rules live in [`crate::schedule`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Intent;

/// When the operator suspends the object on its own (issue 22, "scheduled suspend"); the spec is never rewritten:
/// the schedule changes the effective intent, and `status.nextTransition` says what happens next.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    /// RFC 3339 time (e.g. `2026-12-31T18:00:00Z`) from which the object is suspended, as with `intent: suspended`
    /// (a service goes to 0 replicas with KEDA paused; a run's Job is suspended, resumable). A later time, or no
    /// schedule, resumes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 64),
        regex(pattern = crate::names::DATE_TIME_PATTERN),
        extend("format" = "date-time")
    )]
    pub expires_at: Option<String>,
}

/// The schedule of an InferenceService: [`Schedule`]'s `expiresAt`, and suspend after idle (issue 22, "idle and
/// scheduled suspend"). The spec is never rewritten: the schedule changes the effective intent, `status.nextTransition`
/// says what happens next and `status.idle` what the operator counted.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSchedule {
    /// RFC 3339 time (e.g. `2026-12-31T18:00:00Z`) from which the service is suspended, as with `intent: suspended`
    /// (0 replicas, KEDA paused). A later time, or none, resumes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 64),
        regex(pattern = crate::names::DATE_TIME_PATTERN),
        extend("format" = "date-time")
    )]
    pub expires_at: Option<String>,
    /// Seconds without an active KEDA trigger (the ScaledObject's `Active` condition False, idle since its
    /// `status.lastActiveTime`) after which the service is suspended as with `intent: suspended`: 0 replicas, KEDA
    /// paused, so nothing wakes it but a person. Any change to the spec (a new `metadata.generation`, e.g. `intent:
    /// active` from Terraform, or `/fleet start NAME` when the intent was not `active`) resumes it and restarts the
    /// count. Needs `scaling.triggers` (the only
    /// idle signal the operator can see). 1 to 2,592,000 (30 days); absent means never.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2_592_000))]
    pub suspend_after_idle_seconds: Option<i32>,
}

/// What the operator counted for `spec.schedule.suspendAfterIdleSeconds` (`status.idle`); kept across reconciles so a
/// resume is remembered (KEDA's own record stays idle while it is paused).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct IdleStatus {
    /// RFC 3339 start of the idle period counted: KEDA's `lastActiveTime` (or the ScaledObject's creation), but not
    /// before the last resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub since: Option<String>,
    /// RFC 3339 time the service was suspended for being idle; absent while it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub suspended_at: Option<String>,
    /// The `metadata.generation` this record belongs to: a newer generation resumes an idle suspension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

/// A transition the schedule will make (`status.nextTransition`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NextTransition {
    /// When, RFC 3339 (UTC).
    #[schemars(length(max = 64))]
    pub at: String,
    /// The effective intent from then on.
    pub intent: Intent,
}
