use super::*;
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateWaiting, ContainerStatus, EventSeries, ObjectReference,
    PodCondition, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;

#[test]
fn finds_unschedulable_pods() {
    let pod = |reason: &str| Pod {
        status: Some(PodStatus {
            conditions: Some(vec![PodCondition {
                type_: "PodScheduled".into(),
                status: "False".into(),
                reason: Some(reason.into()),
                message: Some("0/4 nodes are available".into()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        unschedulable_message(&[Pod::default(), pod("Unschedulable")]).as_deref(),
        Some("0/4 nodes are available")
    );
    assert_eq!(unschedulable_message(&[pod("SchedulingGated")]), None);
}

/// The first container (init containers first) waiting for a reason the kubelet will not get past alone is named;
/// waiting for an image to be created or a container starting is not stalled.
#[test]
fn a_container_the_kubelet_will_not_start_is_named() {
    let waiting = |name: &str, reason: &str, message: Option<&str>| ContainerStatus {
        name: name.into(),
        state: Some(ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some(reason.into()),
                message: message.map(Into::into),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let pod = |init: Vec<ContainerStatus>, main: Vec<ContainerStatus>| Pod {
        metadata: ObjectMeta {
            name: Some("echo-1".into()),
            ..Default::default()
        },
        status: Some(PodStatus {
            init_container_statuses: Some(init),
            container_statuses: Some(main),
            ..Default::default()
        }),
        ..Default::default()
    };
    let refused = "container has runAsNonRoot and image will run as root";
    let stuck = pod(
        vec![],
        vec![waiting("main", "CreateContainerConfigError", Some(refused))],
    );
    assert_eq!(
        stalled_pod_message(&[
            pod(vec![], vec![waiting("main", "ContainerCreating", None)]),
            stuck.clone()
        ])
        .as_deref(),
        Some(
            "pod echo-1: container main: CreateContainerConfigError: container has runAsNonRoot and image will run as root"
        )
    );
    assert_eq!(
        stalled_pod_message(&[pod(
            vec![waiting("fetch", "ImagePullBackOff", None)],
            vec![]
        )])
        .as_deref(),
        Some("pod echo-1: container fetch: ImagePullBackOff")
    );
    assert_eq!(
        stalled_pod_message(&[pod(vec![], vec![waiting("main", "PodInitializing", None)])]),
        None
    );
}

/// The latest `FailedCreate` Event's message is the refusal, by the Event's own latest time (a repeated Event counts
/// by its series); other reasons are ignored.
#[test]
fn the_latest_failed_create_event_is_the_refusal() {
    let at = |s: i64| Timestamp::from_second(s).unwrap();
    let event = |reason: &str, message: &str, last: i64| Event {
        involved_object: ObjectReference::default(),
        metadata: ObjectMeta::default(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_timestamp: Some(Time(at(last))),
        ..Default::default()
    };
    assert_eq!(failed_create_message(&[]), None);
    let quota = "Error creating: pods \"ft-1-x\" is forbidden: exceeded quota: gpus";
    let mut repeated = event(FAILED_CREATE, "Error creating: old refusal", 10);
    repeated.series = Some(EventSeries {
        count: Some(4),
        last_observed_time: Some(MicroTime(at(50))),
    });
    let events = [
        event(FAILED_CREATE, quota, 20),
        event("SuccessfulCreate", "Created pod: ft-1-y", 40),
        repeated.clone(),
    ];
    assert_eq!(
        failed_create_message(&events),
        Some("Error creating: old refusal")
    );
    assert_eq!(failed_create_message(&events[..2]), Some(quota));
    assert_eq!(failed_create_message(&events[1..2]), None);
}
