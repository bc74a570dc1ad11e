use super::*;
use k8s_openapi::jiff::Timestamp;

fn at(seconds: i64) -> Time {
    Time(Timestamp::from_second(seconds).unwrap())
}

fn ready(status: bool, reason: Reason) -> DesiredCondition {
    DesiredCondition::new(ConditionType::Ready, status, reason, "")
}

#[test]
fn wire_spelling_is_the_variant_name_and_parses_back() {
    assert_eq!(
        Reason::ScaleToZeroUnwakeable.as_str(),
        "ScaleToZeroUnwakeable"
    );
    assert_eq!(ConditionType::PVCBound.as_str(), "PVCBound");
    for reason in Reason::ALL {
        assert_eq!(Reason::parse(reason.as_str()), Some(*reason));
    }
    for type_ in ConditionType::ALL {
        assert_eq!(ConditionType::parse(type_.as_str()), Some(*type_));
    }
    assert_eq!(Reason::parse("NoSuchReason"), None);
}

#[test]
fn after_error_replaces_ready_and_keeps_the_rest() {
    let observed = merge(
        &[],
        &[
            ready(true, Reason::AsExpected),
            DesiredCondition::new(
                ConditionType::RouteReady,
                true,
                Reason::Accepted,
                "accepted",
            ),
            DesiredCondition::new(
                ConditionType::ScalingReady,
                ConditionStatus::Unknown,
                Reason::Progressing,
                "",
            ),
        ],
        Some(1),
        &at(100),
    );
    let mut with_foreign = observed.clone();
    with_foreign.push(Condition {
        type_: "Foreign".into(),
        status: "True".into(),
        reason: "Other".into(),
        message: String::new(),
        observed_generation: None,
        last_transition_time: at(1),
    });
    let after = after_error(
        &with_foreign,
        Reason::ReconcileError,
        &"apply Deployment: 500",
    );
    let carried = |c: DesiredCondition| DesiredCondition { carried: true, ..c };
    assert_eq!(
        after,
        [
            DesiredCondition::new(
                ConditionType::Ready,
                false,
                Reason::ReconcileError,
                "apply Deployment: 500"
            ),
            carried(DesiredCondition::new(
                ConditionType::RouteReady,
                true,
                Reason::Accepted,
                "accepted"
            )),
            carried(DesiredCondition::new(
                ConditionType::ScalingReady,
                ConditionStatus::Unknown,
                Reason::Progressing,
                ""
            )),
        ]
    );
    // Written for generation 2, the carried conditions still describe generation 1 (a hunt's finding: they were
    // stamped 2); Ready, the failure, describes 2.
    let written = merge(&observed, &after, Some(2), &at(200));
    let generation = |type_: &str| {
        written
            .iter()
            .find(|c| c.type_ == type_)
            .unwrap()
            .observed_generation
    };
    assert_eq!(generation("Ready"), Some(2));
    assert_eq!(generation("RouteReady"), Some(1));
    assert_eq!(generation("ScalingReady"), Some(1));
    assert_eq!(ConditionStatus::parse("maybe"), ConditionStatus::Unknown);
}

#[test]
fn new_conditions_get_now() {
    let merged = merge(&[], &[ready(false, Reason::Progressing)], Some(3), &at(100));
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].status, "False");
    assert_eq!(merged[0].reason, "Progressing");
    assert_eq!(merged[0].observed_generation, Some(3));
    assert_eq!(merged[0].last_transition_time, at(100));
}

#[test]
fn unchanged_status_keeps_the_transition_time_even_if_reason_changes() {
    let current = merge(&[], &[ready(false, Reason::Progressing)], Some(1), &at(100));
    let merged = merge(
        &current,
        &[ready(false, Reason::Unschedulable)],
        Some(2),
        &at(200),
    );
    assert_eq!(merged[0].last_transition_time, at(100));
    assert_eq!(merged[0].reason, "Unschedulable");
    assert_eq!(merged[0].observed_generation, Some(2));
}

#[test]
fn changed_status_is_a_transition() {
    let current = merge(&[], &[ready(false, Reason::Progressing)], Some(1), &at(100));
    let merged = merge(
        &current,
        &[ready(true, Reason::AsExpected)],
        Some(1),
        &at(200),
    );
    assert_eq!(merged[0].last_transition_time, at(200));
    assert!(is_true(&merged, ConditionType::Ready));
}

#[test]
fn merging_twice_is_idempotent_and_drops_stale_types() {
    let desired = [
        ready(true, Reason::AsExpected),
        DesiredCondition::new(
            ConditionType::RouteReady,
            false,
            Reason::NotRequested,
            "no gateway",
        ),
    ];
    let mut current = merge(&[], &desired, Some(1), &at(100));
    current.push(Condition {
        type_: "Stale".into(),
        status: "True".into(),
        reason: "Old".into(),
        message: String::new(),
        observed_generation: None,
        last_transition_time: at(1),
    });
    let once = merge(&current, &desired, Some(1), &at(500));
    let twice = merge(&once, &desired, Some(1), &at(900));
    assert_eq!(once, twice);
    assert!(once.iter().all(|c| c.type_ != "Stale"));
    assert_eq!(
        find(&once, ConditionType::RouteReady)
            .unwrap()
            .last_transition_time,
        at(100)
    );
}
