use super::*;

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn state(expires_at: Option<&str>, now: &str) -> ScheduleState {
    ScheduleState::of(expires_at, at(now))
}

#[test]
fn before_the_time_the_intent_is_the_specs_and_the_transition_is_announced() {
    let s = state(Some("2026-12-02T18:00:00Z"), "2026-12-02T17:59:00Z");
    assert!(!s.expired());
    assert_eq!(s.intent(Some(Intent::Active)), Some(Intent::Active));
    assert_eq!(s.intent(None), None);
    assert_eq!(
        s.next_transition(None),
        Some(NextTransition {
            at: "2026-12-02T18:00:00Z".into(),
            intent: Intent::Suspended
        })
    );
    // Already suspended by the spec: nothing to announce.
    assert_eq!(s.next_transition(Some(Intent::Suspended)), None);
    assert_eq!(
        s.requeue_within(Duration::from_secs(300)),
        Duration::from_secs(60)
    );
    assert_eq!(
        s.requeue_within(Duration::from_secs(10)),
        Duration::from_secs(10)
    );
}

#[test]
fn from_the_time_on_it_is_suspended_and_says_why() {
    let s = state(Some("2026-12-02T18:00:00Z"), "2026-12-02T18:00:00Z");
    assert!(s.expired());
    assert_eq!(s.intent(Some(Intent::Active)), Some(Intent::Suspended));
    assert_eq!(s.next_transition(None), None);
    assert_eq!(
        s.requeue_within(Duration::from_secs(300)),
        Duration::from_secs(300)
    );
    let mut conditions = vec![
        DesiredCondition::new(
            ConditionType::Ready,
            false,
            Reason::Suspended,
            "intent is suspended",
        ),
        DesiredCondition::new(
            ConditionType::Suspended,
            true,
            Reason::Suspended,
            "intent is suspended",
        ),
    ];
    s.annotate(Some(Intent::Active), &mut conditions);
    assert_eq!(conditions[1].reason, Reason::Expired);
    assert!(
        conditions[1]
            .message
            .starts_with("spec.schedule.expiresAt 2026-12-02T18:00:00Z has passed"),
        "{}",
        conditions[1].message
    );
    assert_eq!(conditions[0].reason, Reason::Suspended);
    assert_eq!(
        conditions[0].message,
        "suspended because spec.schedule.expiresAt 2026-12-02T18:00:00Z has passed (the Suspended condition says \
         how to resume)",
        "a user's finding: Ready said \"intent is suspended\" for an intent of automatic"
    );
}

#[test]
fn the_specs_own_suspension_and_a_cancel_keep_their_reasons() {
    let s = state(Some("2026-12-02T18:00:00Z"), "2026-12-03T00:00:00Z");
    let own = DesiredCondition::new(
        ConditionType::Suspended,
        true,
        Reason::Suspended,
        "intent is suspended",
    );
    let mut conditions = vec![own.clone()];
    s.annotate(Some(Intent::Suspended), &mut conditions);
    assert_eq!(conditions, vec![own]);
    let cancelled = DesiredCondition::new(
        ConditionType::Suspended,
        true,
        Reason::Cancelled,
        "spec.cancel is true",
    );
    let mut conditions = vec![cancelled.clone()];
    s.annotate(None, &mut conditions);
    assert_eq!(conditions, vec![cancelled]);
}

#[test]
fn no_schedule_or_unparsable_text_changes_nothing() {
    for s in [
        ScheduleState::of(None, at("2026-12-02T18:00:00Z")),
        state(Some("tomorrow"), "2026-12-02T18:00:00Z"),
    ] {
        assert!(!s.expired());
        assert_eq!(s.intent(Some(Intent::Active)), Some(Intent::Active));
        assert_eq!(s.next_transition(None), None);
        assert_eq!(
            s.requeue_within(Duration::from_secs(7)),
            Duration::from_secs(7)
        );
    }
}

// A hunt found `9999-12-31T18:00:00Z` taken by the API server and refused by `render -f` and the provider; ten fraction
// digits likewise. The first is after the last instant the operator represents: a schedule that never suspends. The
// second is read to the nanosecond.
#[test]
fn a_time_past_the_last_representable_instant_never_suspends_and_long_fractions_are_read() {
    let s = state(Some("9999-12-31T18:00:00Z"), "2026-12-02T18:00:00Z");
    assert_eq!(s.expires_at, None);
    assert!(!s.expired());
    assert_eq!(s.next_transition(None), None);
    let s = state(
        Some("2026-12-02T18:00:00.0000000001Z"),
        "2026-12-02T18:00:00Z",
    );
    assert!(
        s.expired(),
        "the eleventh digit is dropped: 18:00:00 exactly"
    );
}
