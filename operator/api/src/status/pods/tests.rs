use super::*;
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, EventSeries,
    ObjectReference, PodCondition, PodStatus,
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
        ..waiting_for(reason, message, "echo:1", None)
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
        Some("pod echo-1: container fetch: cannot pull image \"echo:1\"")
    );
    assert_eq!(
        stalled_pod_message(&[pod(vec![], vec![waiting("main", "PodInitializing", None)])]),
        None
    );
}

/// A container state in a pod's status: waiting for `reason` with `message`, pulling `image`, last terminated by
/// `last` (`(reason, exit code)`).
fn waiting_for(
    reason: &str,
    message: Option<&str>,
    image: &str,
    last: Option<(&str, i32)>,
) -> ContainerStatus {
    ContainerStatus {
        name: "main".into(),
        image: image.into(),
        state: Some(ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some(reason.into()),
                message: message.map(Into::into),
            }),
            ..Default::default()
        }),
        last_state: last.map(|(reason, code)| ContainerState {
            terminated: Some(ContainerStateTerminated {
                reason: Some(reason.into()),
                exit_code: code,
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// What a stalled container waits for reads the same at every retry of the kubelet: a crash loop by its last exit
/// (not the back-off that doubles), whether the container waits or shows its crash until the next sync; an image
/// pull by its error whether the kubelet says the pull's error or `ImagePullBackOff` (fixtures in the kubelet's
/// words, `pkg/kubelet/images/image_manager.go`, Kubernetes v1.35).
#[test]
fn a_stalled_container_reads_the_same_from_one_retry_to_the_next() {
    let crash = |back_off: &str| {
        let message =
            format!("back-off {back_off} restarting failed container=main pod=echo-1_ml(u)");
        waiting_detail(&waiting_for(
            "CrashLoopBackOff",
            Some(&message),
            "echo:1",
            Some(("Error", 3)),
        ))
    };
    let looping = Some("CrashLoopBackOff: last exit: Error (exit code 3)".to_owned());
    assert_eq!(crash("10s"), looping);
    assert_eq!(crash("5m0s"), looping);
    let terminated = |code: i32, restarts: i32| ContainerStatus {
        name: "main".into(),
        restart_count: restarts,
        state: Some(ContainerState {
            terminated: Some(ContainerStateTerminated {
                reason: Some(if code == 0 { "Completed" } else { "Error" }.into()),
                exit_code: code,
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(waiting_detail(&terminated(3, 1)), looping);
    assert_eq!(waiting_detail(&terminated(3, 0)), None, "its first exit");
    assert_eq!(waiting_detail(&terminated(0, 2)), None, "a success");
    let killed = waiting_for("CrashLoopBackOff", None, "echo:1", Some(("OOMKilled", 137)));
    assert_eq!(
        waiting_detail(&killed).as_deref(),
        Some("CrashLoopBackOff: last exit: OOMKilled (exit code 137)")
    );
    let image = "reg.local/echo:2";
    let error = "rpc error: code = NotFound desc = failed to pull and unpack image \"reg.local/echo:2\": not found";
    let expected = Some(format!("cannot pull image \"{image}\": {error}"));
    let pull = |reason: &str, message: &str| {
        waiting_detail(&waiting_for(reason, Some(message), image, None))
    };
    assert_eq!(pull("ErrImagePull", error), expected);
    let back_off = format!("Back-off pulling image \"{image}\": ErrImagePull: {error}");
    assert_eq!(pull("ImagePullBackOff", &back_off), expected);
    let unavailable = "image pull failed for reg.local/echo:2 because the registry is unavailable";
    let expected = Some(format!("cannot pull image \"{image}\": {unavailable}"));
    assert_eq!(pull("RegistryUnavailable", unavailable), expected);
    let back_off =
        format!("Back-off pulling image \"{image}\": RegistryUnavailable: {unavailable}");
    assert_eq!(pull("ImagePullBackOff", &back_off), expected);
    // After a kubelet restart the back-off has no stored error.
    assert_eq!(
        pull(
            "ImagePullBackOff",
            &format!("Back-off pulling image \"{image}\"")
        ),
        Some(format!("cannot pull image \"{image}\""))
    );
    let config = waiting_for(
        "CreateContainerConfigError",
        Some("secret \"s\" not found"),
        "e",
        None,
    );
    assert_eq!(
        waiting_detail(&config).as_deref(),
        Some("CreateContainerConfigError: secret \"s\" not found")
    );
    assert_eq!(
        waiting_detail(&waiting_for("ContainerCreating", None, "e", None)),
        None
    );
}

/// The latest `FailedCreate` Event since the current attempt is the refusal, by the Event's own latest time (a
/// repeated Event counts by its series); other reasons and older Events are ignored; only the API server's reason is
/// kept, so two retries naming different pods say the same.
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
    assert_eq!(failed_create_message(&[], None), None);
    let quota = "exceeded quota: gpus, requested: requests.nvidia.com/gpu=1";
    let refused = |pod: &str| format!("Error creating: pods \"{pod}\" is forbidden: {quota}");
    let mut repeated = event(
        FAILED_CREATE,
        "Error creating: etcdserver: request timed out",
        10,
    );
    repeated.series = Some(EventSeries {
        count: Some(4),
        last_observed_time: Some(MicroTime(at(50))),
    });
    let events = [
        event(FAILED_CREATE, &refused("ft-1-abcde"), 20),
        event("SuccessfulCreate", "Created pod: ft-1-y", 40),
        repeated.clone(),
    ];
    assert_eq!(
        failed_create_message(&events, None),
        Some("etcdserver: request timed out")
    );
    assert_eq!(failed_create_message(&events[..2], None), Some(quota));
    assert_eq!(failed_create_message(&events[1..2], None), None);
    // Since a resume (or a newer pod) at 30, only the repeated Event (last seen at 50) speaks; since 60, none.
    assert_eq!(
        failed_create_message(&events, Some(at(30))),
        Some("etcdserver: request timed out")
    );
    assert_eq!(failed_create_message(&events[..2], Some(at(30))), None);
    assert_eq!(failed_create_message(&events, Some(at(60))), None);
    // Retries name a new pod each time; the event library may combine them: the reason stays the same.
    let combined = format!("(combined from similar events): {}", refused("ft-1-fghij"));
    for message in [refused("ft-1-zzzzz"), combined] {
        assert_eq!(
            failed_create_message(&[event(FAILED_CREATE, &message, 70)], None),
            Some(quota)
        );
    }
    // Only the API server's leading `pods "NAME" is forbidden: ` is cut; a webhook's words saying it later are kept.
    let webhook = "admission webhook \"gpu.example.com\" denied the request: tenant a is forbidden: no GPU budget";
    assert_eq!(
        refusal_reason(&format!("Error creating: {webhook}")),
        webhook
    );
    let both = format!("Error creating: pods \"ft-1-q\" is forbidden: {webhook}");
    assert_eq!(refusal_reason(&both), webhook);
}
