//! Issue 24's operator cases, each tried as a new user would, on the control plane with the operator running:
//! (1) born suspended never starts a pod, and a pause KEDA reports that the intent did not ask for is degraded
//! (keda#6421, #4733, #6982); (2) the hand-over of `spec.replicas` to an autoscaler keeps the new minimum, checked for
//! every transition between the scaling modes and creation in each (keda#523, #947); (3) a route accepted for an
//! older generation is not trusted (gateway-api#5115, external-dns#5095).
//!
//! No KEDA controller runs here (as where KEDA is slow or absent): the counts are the operator's alone.

use std::time::Duration;

use acceptance_tests::inference::{
    api, apply, condition, condition_message, create_gateway, echo_spec, gateway_says,
    isvc_resource, operator, scaled_object_resource, wait_condition,
};
use acceptance_tests::{Cluster, wait_for};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DynamicObject, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(30);

fn redis_trigger() -> Value {
    json!([{"type": "redis", "metadata": {"address": "redis.ml.svc:6379", "listName": "q", "listLength": "5"}}])
}

/// The echo example without its route (these cases are about replicas).
fn service() -> Value {
    let mut spec = echo_spec();
    spec.as_object_mut().unwrap().remove("gateway");
    spec
}

async fn replicas(deployments: &Api<Deployment>, name: &str) -> anyhow::Result<Option<i32>> {
    Ok(deployments
        .get_opt(name)
        .await?
        .and_then(|d| d.spec)
        .and_then(|s| s.replicas))
}

/// Waits until the Deployment has `count` replicas and the service's Ready condition has `status`/`reason`.
async fn settles(
    isvcs: &Api<DynamicObject>,
    deployments: &Api<Deployment>,
    name: &str,
    count: i32,
    ready: (&str, &str),
) -> anyhow::Result<()> {
    wait_for(
        &format!("{name}: {count} replicas, Ready {ready:?}"),
        TIMEOUT,
        || async {
            let have = replicas(deployments, name).await?;
            let object = isvcs.get(name).await?;
            let current = object
                .data
                .pointer("/status/observedGeneration")
                .and_then(Value::as_i64)
                == object.metadata.generation;
            let reported = condition(&object, "Ready");
            let (status, reason) = ready;
            if current
                && have == Some(count)
                && reported
                    .as_ref()
                    .is_some_and(|(s, r)| s == status && r == reason)
            {
                Ok(Some(()))
            } else {
                anyhow::bail!("replicas {have:?}, Ready {reported:?}")
            }
        },
    )
    .await
}

// Issue 24 case 1: created suspended with a trigger and a 1-GPU fit (15 GiB weights + 3 GiB KV: class 24gi), the
// service never gets a pod: the Deployment is written with 0 from its first write and no pod create is audited.
// Resuming removes the pause; a pause KEDA reports while the intent is not suspended is ScalingReady=False and
// Degraded.
#[tokio::test]
async fn born_suspended_never_starts_a_pod() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("op-born-suspended").await?;
    let client = cluster.client().await?;
    let operator = operator(&cluster, ns.name(), &[])?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    let mark = cluster.audit_log().mark()?;
    let mut spec = service();
    spec["intent"] = json!("suspended");
    spec["replicas"] = json!({"min": 0, "max": 4});
    spec["scaling"] = json!({"triggers": redis_trigger()});
    spec["gpu"] = json!({"count": 1, "fit": {"modules": [
        {"name": "weights", "weightsGiB": 15, "kvCacheGiB": 3, "placement": "sharded"}]}});
    apply(&isvcs, "svc1", spec.clone()).await?;
    settles(&isvcs, &deployments, "svc1", 0, ("False", "Suspended"))
        .await
        .map_err(|e| e.context(operator.log_tail()))?;
    // Several resyncs later (5 s each), still no pod.
    tokio::time::sleep(Duration::from_secs(12)).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.name());
    assert!(pods.list(&ListParams::default()).await?.items.is_empty());
    let pod_creates: Vec<_> = mark
        .writes()?
        .into_iter()
        .filter(|e| e.verb == "create")
        .filter(|e| {
            e.object_ref
                .as_ref()
                .is_some_and(|o| o["resource"] == "pods" && o["namespace"] == ns.name())
        })
        .collect();
    assert!(
        pod_creates.is_empty(),
        "pods created for a suspended service: {pod_creates:#?}"
    );
    let scaled_objects = api(&client, ns.name(), &scaled_object_resource());
    let paused = |object: &DynamicObject| {
        object
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key("autoscaling.keda.sh/paused-replicas"))
    };
    assert!(paused(&scaled_objects.get("svc1").await?));

    // Resuming removes the pause annotation.
    spec["intent"] = json!("automatic");
    apply(&isvcs, "svc1", spec.clone()).await?;
    wait_for("the pause lifted", TIMEOUT, || async {
        Ok((!paused(&scaled_objects.get("svc1").await?)).then_some(()))
    })
    .await?;

    // KEDA still says Paused=True (its status before it saw the resume): stale, not news, as no pause annotation is
    // left (a breaker's finding: every resume warned AutoscalerPaused, naming an annotation nobody left).
    let keda_status = json!({"status": {"conditions": [
        {"type": "Ready", "status": "True", "reason": "ScaledObjectReady", "message": "ready"},
        {"type": "Paused", "status": "True", "reason": "ScaledObjectPaused", "message": "ScaledObject is paused"}]}});
    scaled_objects
        .patch_status("svc1", &PatchParams::default(), &Patch::Merge(&keda_status))
        .await?;
    // More than one resync (5 s) later, still no warning.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let object = isvcs.get("svc1").await?;
    assert_eq!(
        condition(&object, "ScalingReady"),
        Some(("True".into(), "AsExpected".into())),
        "{}",
        operator.log_tail()
    );
    // A pause annotation someone else left, which KEDA reports paused: ScalingReady=False naming it, Degraded=True.
    let annotate = json!({"metadata": {"annotations": {"autoscaling.keda.sh/paused": "true"}}});
    scaled_objects
        .patch("svc1", &PatchParams::default(), &Patch::Merge(&annotate))
        .await?;
    let object = wait_condition(
        &isvcs,
        "svc1",
        "ScalingReady",
        "False",
        Some("AutoscalerPaused"),
        TIMEOUT,
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    assert_eq!(
        condition(&object, "Degraded").map(|c| c.0).as_deref(),
        Some("True")
    );
    Ok(())
}

// Issue 24 case 2 (`svc4`): fixed at 1 and Ready, then suspended (0), then in one apply active with a trigger and
// min 0: the hand-over keeps at least the new minimum (1 while active), a pod becomes Ready, and ScaledToZero is never
// reported while the intent is active.
#[tokio::test]
async fn hand_over_to_an_autoscaler_keeps_the_new_minimum() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("op-handover").await?;
    let client = cluster.client().await?;
    let operator = operator(&cluster, ns.name(), &[])?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    let mut spec = service();
    apply(&isvcs, "svc4", spec.clone()).await?;
    settles(&isvcs, &deployments, "svc4", 1, ("True", "AsExpected"))
        .await
        .map_err(|e| e.context(operator.log_tail()))?;
    spec["intent"] = json!("suspended");
    apply(&isvcs, "svc4", spec.clone()).await?;
    settles(&isvcs, &deployments, "svc4", 0, ("False", "Suspended")).await?;

    spec["intent"] = json!("active");
    spec["replicas"] = json!({"min": 0, "max": 3});
    spec["scaling"] = json!({"triggers": redis_trigger()});
    apply(&isvcs, "svc4", spec).await?;
    let reasons = std::cell::RefCell::new(Vec::new());
    wait_for("svc4 Ready with 1 replica", TIMEOUT, || async {
        let object = isvcs.get("svc4").await?;
        let ready = condition(&object, "Ready");
        if let Some((_, reason)) = &ready {
            reasons.borrow_mut().push(reason.clone());
        }
        let count = replicas(&deployments, "svc4").await?;
        Ok((count == Some(1) && ready.is_some_and(|(s, _)| s == "True")).then_some(()))
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    // Still 1 after a few resyncs; never ScaledToZero while active.
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert_eq!(replicas(&deployments, "svc4").await?, Some(1));
    let object = isvcs.get("svc4").await?;
    let mut reasons = reasons.into_inner();
    reasons.extend(condition(&object, "Ready").map(|c| c.1));
    assert!(!reasons.iter().any(|r| r == "ScaledToZero"), "{reasons:?}");
    Ok(())
}

/// The scaling modes of the table (DESIGN.md section 3 scaling rules).
#[derive(Clone, Copy, Debug)]
enum Mode {
    Fixed,
    Suspended,
    AutoscaledFromZero,
    AutoscaledFromOne,
}

impl Mode {
    fn spec(self) -> Value {
        let mut spec = service();
        let (intent, replicas, triggers) = match self {
            Mode::Fixed => ("automatic", json!({"min": 2, "max": 2}), None),
            Mode::Suspended => (
                "suspended",
                json!({"min": 1, "max": 3}),
                Some(redis_trigger()),
            ),
            Mode::AutoscaledFromZero => (
                "automatic",
                json!({"min": 0, "max": 3}),
                Some(redis_trigger()),
            ),
            Mode::AutoscaledFromOne => (
                "automatic",
                json!({"min": 1, "max": 3}),
                Some(redis_trigger()),
            ),
        };
        spec["intent"] = json!(intent);
        spec["replicas"] = replicas;
        if let Some(triggers) = triggers {
            spec["scaling"] = json!({"triggers": triggers});
        }
        spec
    }

    /// The count the mode settles at coming from `previous` (`None`: created in it), and the Ready reason.
    fn expected(self, previous: Option<i32>) -> (i32, (&'static str, &'static str)) {
        let ready = ("True", "AsExpected");
        match self {
            Mode::Fixed => (2, ready),
            Mode::Suspended => (0, ("False", "Suspended")),
            Mode::AutoscaledFromZero => match previous.unwrap_or(0) {
                0 => (0, ("False", "ScaledToZero")),
                n => (n, ready),
            },
            Mode::AutoscaledFromOne => (previous.unwrap_or(1).max(1), ready),
        }
    }
}

// Issue 24 case 2, the whole class: creation in each mode, then every transition between the modes (an Eulerian
// circuit of the 12 ordered pairs), each ending with the count and the Ready reason the table gives.
#[tokio::test]
async fn every_scaling_transition_ends_with_the_right_count_and_reason() -> anyhow::Result<()> {
    use Mode::*;
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("op-transitions").await?;
    let client = cluster.client().await?;
    let operator = operator(&cluster, ns.name(), &[])?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    for (i, mode) in [Fixed, Suspended, AutoscaledFromZero, AutoscaledFromOne]
        .into_iter()
        .enumerate()
    {
        let name = format!("born-{i}");
        apply(&isvcs, &name, mode.spec()).await?;
        let (count, ready) = mode.expected(None);
        settles(&isvcs, &deployments, &name, count, ready)
            .await
            .map_err(|e| e.context(format!("created {mode:?}\n{}", operator.log_tail())))?;
    }
    let circuit = [
        Fixed,
        Suspended,
        AutoscaledFromZero,
        AutoscaledFromOne,
        Fixed,
        AutoscaledFromZero,
        Suspended,
        AutoscaledFromOne,
        Suspended,
        Fixed,
        AutoscaledFromOne,
        AutoscaledFromZero,
        Fixed,
    ];
    let mut count = None;
    for (step, pair) in circuit.windows(2).enumerate() {
        let (from, to) = (pair[0], pair[1]);
        if step == 0 {
            apply(&isvcs, "walk", from.spec()).await?;
            let (c, ready) = from.expected(None);
            settles(&isvcs, &deployments, "walk", c, ready).await?;
            count = Some(c);
        }
        apply(&isvcs, "walk", to.spec()).await?;
        let (c, ready) = to.expected(count);
        settles(&isvcs, &deployments, "walk", c, ready)
            .await
            .map_err(|e| e.context(format!("{from:?} -> {to:?}\n{}", operator.log_tail())))?;
        count = Some(c);
    }
    Ok(())
}

// Issue 24 case 3: the Gateway accepted generation 1 of the route; after a hostname change (generation 2) no Gateway
// has spoken: RouteReady is False/NotAccepted, waiting, and a rejection written for generation 1 is not shown as
// current either; a condition for generation 2 makes it True.
#[tokio::test]
async fn a_route_accepted_for_an_older_generation_is_not_trusted() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("op-route-generation").await?;
    let client = cluster.client().await?;
    let operator = operator(&cluster, ns.name(), &[])?;
    create_gateway(&client, ns.name()).await?;
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let mut spec = echo_spec();
    spec["gateway"] = json!({"hostnames": ["a.r12.localhost"]});
    apply(&isvcs, "echo", spec.clone()).await?;
    wait_condition(
        &isvcs,
        "echo",
        "RouteReady",
        "False",
        Some("NotAccepted"),
        TIMEOUT,
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    gateway_says(&client, ns.name(), "echo", "True", "Accepted", 1).await?;
    wait_condition(
        &isvcs,
        "echo",
        "RouteReady",
        "True",
        Some("Accepted"),
        TIMEOUT,
    )
    .await?;

    spec["gateway"] = json!({"hostnames": ["b.r12.localhost"]});
    apply(&isvcs, "echo", spec).await?;
    let waiting = format!(
        "waiting for Gateway {}/shared to accept the route",
        ns.name()
    );
    let message = |object: &DynamicObject| condition_message(object, "RouteReady");
    let object = wait_condition(
        &isvcs,
        "echo",
        "RouteReady",
        "False",
        Some("NotAccepted"),
        TIMEOUT,
    )
    .await?;
    assert_eq!(message(&object), waiting);
    let routes = api(
        &client,
        ns.name(),
        &acceptance_tests::inference::route_resource(),
    );
    assert_eq!(routes.get("echo").await?.metadata.generation, Some(2));

    // A rejection written for generation 1 is old news too.
    gateway_says(
        &client,
        ns.name(),
        "echo",
        "False",
        "NoMatchingListenerHostname",
        1,
    )
    .await?;
    tokio::time::sleep(Duration::from_secs(6)).await;
    let object = isvcs.get("echo").await?;
    assert_eq!(
        condition(&object, "RouteReady"),
        Some(("False".into(), "NotAccepted".into()))
    );
    assert_eq!(message(&object), waiting);

    gateway_says(&client, ns.name(), "echo", "True", "Accepted", 2).await?;
    wait_condition(
        &isvcs,
        "echo",
        "RouteReady",
        "True",
        Some("Accepted"),
        TIMEOUT,
    )
    .await?;
    Ok(())
}
