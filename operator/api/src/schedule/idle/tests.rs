use super::*;
use serde_json::json;

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// A service with a kafka trigger and `suspendAfterIdleSeconds: 600` at `generation`, with `status.idle`.
fn service(generation: i64, idle: Option<IdleStatus>) -> InferenceService {
    let mut isvc: InferenceService = serde_json::from_value(json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
        "metadata": {"name": "chat", "namespace": "ml", "generation": generation},
        "spec": {"model": {"name": "m"}, "container": {"image": "i"},
            "scaling": {"triggers": [{"type": "kafka", "metadata": {"topic": "t"}}]},
            "schedule": {"suspendAfterIdleSeconds": 600}}}))
    .unwrap();
    isvc.status = Some(crate::InferenceServiceStatus {
        idle,
        ..Default::default()
    });
    isvc
}

fn record(since: Option<&str>, suspended_at: Option<&str>, generation: i64) -> IdleStatus {
    IdleStatus {
        since: since.map(str::to_owned),
        suspended_at: suspended_at.map(str::to_owned),
        generation: Some(generation),
    }
}

fn quiet_since(last_active: &str) -> Option<Activity> {
    Some(Activity {
        active: false,
        last_active: Some(at(last_active)),
        created: Some(at("2026-01-01T00:00:00Z")),
    })
}

#[test]
fn keda_activity_is_read_from_the_scaled_object_status() {
    let object = json!({"metadata": {"creationTimestamp": "2026-12-04T01:00:00Z"},
        "status": {"lastActiveTime": "2026-12-04T02:00:00Z",
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "Active", "status": "False"}]}});
    assert_eq!(
        Activity::of_scaled_object(&object),
        Some(Activity {
            active: false,
            last_active: Some(at("2026-12-04T02:00:00Z")),
            created: Some(at("2026-12-04T01:00:00Z")),
        })
    );
    // KEDA has not written `Active` yet: nothing is known.
    assert_eq!(
        Activity::of_scaled_object(&json!({"status": {"conditions": []}})),
        None
    );
}

#[test]
fn the_count_starts_at_the_first_look_then_keeps_kedas_time_or_that_floor() {
    // First look at this generation: KEDA says idle since 01:00, but the count starts now (02:00).
    let first = evaluate(
        &service(3, None),
        quiet_since("2026-12-04T01:00:00Z"),
        at("2026-12-04T02:00:00Z"),
    );
    assert_eq!(
        first.status,
        Some(record(Some("2026-12-04T02:00:00Z"), None, 3))
    );
    assert_eq!(first.suspend_at, Some(at("2026-12-04T02:10:00Z")));
    assert_eq!(first.change, None);
    // Same generation, a later look: the floor holds; 10 min after it the service is suspended.
    let later = service(3, first.status.clone());
    let before = evaluate(
        &later,
        quiet_since("2026-12-04T01:00:00Z"),
        at("2026-12-04T02:09:59Z"),
    );
    assert_eq!(before.change, None);
    assert_eq!(before.status, first.status, "no status change: no write");
    let due = evaluate(
        &later,
        quiet_since("2026-12-04T01:00:00Z"),
        at("2026-12-04T02:10:00Z"),
    );
    assert_eq!(due.change, Some(IdleChange::Suspended));
    assert_eq!(
        due.status,
        Some(record(
            Some("2026-12-04T02:00:00Z"),
            Some("2026-12-04T02:10:00Z"),
            3
        ))
    );
    assert!(suspended(&service(3, due.status.clone())));
}

#[test]
fn activity_after_the_floor_moves_the_start() {
    let counted = service(3, Some(record(Some("2026-12-04T02:00:00Z"), None, 3)));
    let idle = evaluate(
        &counted,
        quiet_since("2026-12-04T02:05:00Z"),
        at("2026-12-04T02:12:00Z"),
    );
    assert_eq!(idle.change, None);
    assert_eq!(idle.suspend_at, Some(at("2026-12-04T02:15:00Z")));
    // Active now: the start is cleared, nothing is due.
    let active = Some(Activity {
        active: true,
        last_active: None,
        created: None,
    });
    let busy = evaluate(&counted, active, at("2026-12-04T03:00:00Z"));
    assert_eq!(busy.status, Some(record(None, None, 3)));
    assert_eq!((busy.suspend_at, busy.change), (None, None));
    // Idle again after that: KEDA's lastActiveTime is the start (no floor recorded).
    let after_busy = service(3, busy.status);
    let again = evaluate(
        &after_busy,
        quiet_since("2026-12-04T03:01:00Z"),
        at("2026-12-04T03:05:00Z"),
    );
    assert_eq!(again.suspend_at, Some(at("2026-12-04T03:11:00Z")));
}

#[test]
fn a_suspension_lasts_until_the_spec_changes_and_a_resume_restarts_the_count() {
    let suspended_record = record(
        Some("2026-12-04T02:00:00Z"),
        Some("2026-12-04T02:10:00Z"),
        3,
    );
    // Same generation: still suspended, whatever KEDA says (it is paused).
    let stays = evaluate(
        &service(3, Some(suspended_record.clone())),
        quiet_since("2026-12-04T01:00:00Z"),
        at("2026-12-05T00:00:00Z"),
    );
    assert_eq!(stays.status, Some(suspended_record.clone()));
    assert_eq!(stays.change, None);
    // A new generation resumes: counted from now, so KEDA's old lastActiveTime does not suspend it again at once.
    let resumed_service = service(4, Some(suspended_record));
    assert!(!suspended(&resumed_service));
    let resumed = evaluate(
        &resumed_service,
        quiet_since("2026-12-04T01:00:00Z"),
        at("2026-12-05T00:00:00Z"),
    );
    assert_eq!(resumed.change, Some(IdleChange::Resumed));
    assert_eq!(
        resumed.status,
        Some(record(Some("2026-12-05T00:00:00Z"), None, 4))
    );
    let next = evaluate(
        &service(4, resumed.status),
        quiet_since("2026-12-04T01:00:00Z"),
        at("2026-12-05T00:05:00Z"),
    );
    assert_eq!(next.change, None);
    assert_eq!(next.suspend_at, Some(at("2026-12-05T00:10:00Z")));
}

#[test]
fn unknown_activity_keeps_the_record_and_without_the_field_there_is_none() {
    let counted = record(Some("2026-12-04T02:00:00Z"), None, 3);
    let unknown = evaluate(
        &service(3, Some(counted.clone())),
        None,
        at("2026-12-04T05:00:00Z"),
    );
    assert_eq!(unknown.status, Some(counted.clone()));
    assert_eq!((unknown.suspend_at, unknown.change), (None, None));
    // A new generation while nothing is known: the count restarts at the next look.
    let fresh = evaluate(&service(4, Some(counted)), None, at("2026-12-04T05:00:00Z"));
    assert_eq!(
        fresh.status,
        Some(record(Some("2026-12-04T05:00:00Z"), None, 4))
    );

    let mut plain = service(
        3,
        Some(record(
            Some("2026-12-04T02:00:00Z"),
            Some("2026-12-04T02:10:00Z"),
            3,
        )),
    );
    plain.spec.schedule = None;
    assert!(!suspended(&plain), "the field removed: not suspended");
    assert_eq!(
        evaluate(&plain, None, at("2026-12-04T05:00:00Z")),
        Idle::default()
    );
}

#[test]
fn the_condition_says_idle_unless_the_spec_or_the_expiry_explains_the_suspension() {
    let isvc = service(3, None);
    let outcome = Idle {
        status: Some(record(
            Some("2026-12-04T02:00:00Z"),
            Some("2026-12-04T02:10:00Z"),
            3,
        )),
        ..Idle::default()
    };
    let suspended_by_intent = || {
        vec![DesiredCondition::new(
            ConditionType::Suspended,
            ConditionStatus::True,
            Reason::Suspended,
            "intent is suspended",
        )]
    };
    let mut conditions = suspended_by_intent();
    annotate(&isvc, &outcome, None, &mut conditions);
    assert_eq!(conditions[0].reason, Reason::Idle);
    assert!(
        conditions[0].message.contains("since 2026-12-04T02:00:00Z")
            && conditions[0]
                .message
                .contains("suspendAfterIdleSeconds: 600")
            && conditions[0].message.contains("to resume"),
        "{}",
        conditions[0].message
    );
    let mut with_ready = suspended_by_intent();
    with_ready.push(DesiredCondition::new(
        ConditionType::Ready,
        ConditionStatus::False,
        Reason::Suspended,
        "intent is suspended: 0 replicas",
    ));
    annotate(&isvc, &outcome, None, &mut with_ready);
    assert!(
        with_ready[1]
            .message
            .starts_with("suspended because no KEDA trigger was active for spec.schedule.suspendAfterIdleSeconds (600 s)"),
        "{}",
        with_ready[1].message
    );
    let mut own = suspended_by_intent();
    annotate(&isvc, &outcome, Some(Intent::Suspended), &mut own);
    assert_eq!(own[0].reason, Reason::Suspended);
    let mut expired = vec![DesiredCondition::new(
        ConditionType::Suspended,
        ConditionStatus::True,
        Reason::Expired,
        "expired",
    )];
    annotate(&isvc, &outcome, None, &mut expired);
    assert_eq!(expired[0].reason, Reason::Expired);
}

#[test]
fn the_view_is_suspended_while_idle_or_expired_and_the_spec_itself_otherwise() {
    let now = at("2026-12-05T00:00:00Z");
    let running = ScheduleState::of(None, now);
    let idle = service(3, Some(record(None, Some("2026-12-04T02:10:00Z"), 3)));
    let view = effective_view(&idle, &running);
    assert_eq!(view.spec.intent, Some(Intent::Suspended));
    assert_eq!(idle.spec.intent, None, "the spec itself is not rewritten");
    let counting = service(3, Some(record(Some("2026-12-04T02:00:00Z"), None, 3)));
    assert!(matches!(
        effective_view(&counting, &running),
        Cow::Borrowed(_)
    ));
    let expired = ScheduleState::of(Some("2026-12-01T00:00:00Z"), now);
    assert_eq!(
        effective_view(&counting, &expired).spec.intent,
        Some(Intent::Suspended)
    );
}
