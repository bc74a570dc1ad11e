//! Issue 18, reported case "hostname conflict across namespaces", tried as a new user would: `team-a/a` and, created
//! later, `team-b/b`, both with `gateway.hostnames: [chat.example.test]` and path prefix `/` on the shared Gateway.
//! `a` is unaffected; `b` gets `RouteReady=False, HostnameConflict` naming `team-a/a` (and a Warning Event), no
//! HTTPRoute and no URL, while its Deployment still runs. `c`, created later, waits too; `a` moving to another
//! hostname makes `b` routable (and `c` names `b`), and deleting `b` makes `c` routable, each at the reconcile the
//! change triggers. Nothing else would reconcile `b` within the test's wait: the operator's resync is
//! the default 300 s and its requeue of unsettled services (10 s by default, which a conflict is) is set to 3600 s.
//!
//! The operator watches every namespace, as the chart installs it, so the test has a control plane instance of its
//! own (on the shared one it would reconcile the other tests' objects).

use std::time::{Duration, Instant};

use acceptance_tests::OperatorProcess;
use acceptance_tests::cluster::PrivateCluster;
use acceptance_tests::inference::{
    api, apply, condition, condition_message, create_gateway, echo_spec, isvc_resource,
    route_resource, wait_condition,
};
use acceptance_tests::process::operator_kubeconfig;
use acceptance_tests::wait_for;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event;
use kube::Api;
use kube::api::{DeleteParams, ListParams};
use serde_json::json;

fn chat_spec() -> serde_json::Value {
    let mut spec = echo_spec();
    spec["gateway"] = json!({"hostnames": ["chat.example.test"], "pathPrefix": "/"});
    spec
}

#[tokio::test]
async fn hostname_conflict_across_namespaces_the_later_service_waits_and_takes_over()
-> anyhow::Result<()> {
    let cluster = PrivateCluster::start("routes", &[])?;
    cluster.install_model_fleet_crds()?;
    let client = cluster.client().await?;
    let gateway_ns = cluster.namespace("routes-gateway").await?;
    create_gateway(&client, gateway_ns.name()).await?;
    let team_a = cluster.namespace("team-a").await?;
    let team_b = cluster.namespace("team-b").await?;
    let gateway = format!("{}/shared", gateway_ns.name());
    let operator = OperatorProcess::start_cluster_wide(
        &cluster,
        &operator_kubeconfig(&cluster)?,
        gateway_ns.name(),
        &[
            "--default-gateway",
            &gateway,
            "--test-progress-requeue-seconds",
            "3600",
        ],
    )?;
    let (a_isvcs, b_isvcs) = (
        api(&client, team_a.name(), &isvc_resource()),
        api(&client, team_b.name(), &isvc_resource()),
    );
    let (a_routes, b_routes) = (
        api(&client, team_a.name(), &route_resource()),
        api(&client, team_b.name(), &route_resource()),
    );

    apply(&a_isvcs, "a", chat_spec()).await?;
    let a_route = wait_for("a's HTTPRoute", Duration::from_secs(30), || async {
        Ok(a_routes.get_opt("a").await?)
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    // Creation timestamps have one-second resolution: make `b` the later one, as in the report.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    apply(&b_isvcs, "b", chat_spec()).await?;

    let b = wait_condition(
        &b_isvcs,
        "b",
        "RouteReady",
        "False",
        Some("HostnameConflict"),
        Duration::from_secs(30),
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    let holder = format!("{}/a", team_a.name());
    let message = route_message(&b);
    assert!(
        message.contains(&format!("InferenceService {holder}"))
            && message.contains("chat.example.test path / on Gateway"),
        "the condition names the holder and the claim: {message}"
    );
    assert_eq!(
        condition(&b, "Degraded"),
        Some(("True".into(), "NeedsAttention".into()))
    );
    assert!(
        b.data["status"].get("url").is_none(),
        "not served, no URL: {}",
        b.data["status"]
    );
    assert!(b_routes.get_opt("b").await?.is_none(), "b has no HTTPRoute");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), team_b.name());
    assert!(deployments.get_opt("b").await?.is_some(), "b still runs");
    let warned = wait_for(
        "b's HostnameConflict Warning Event",
        Duration::from_secs(15),
        || async {
            let events = Api::<Event>::namespaced(client.clone(), team_b.name())
                .list(&ListParams::default())
                .await?;
            Ok(events.items.into_iter().find(|e| {
                e.reason.as_deref() == Some("HostnameConflict")
                    && e.type_.as_deref() == Some("Warning")
            }))
        },
    )
    .await?;
    assert!(warned.note.unwrap_or_default().contains(&holder));

    // `a` is unaffected: its route is the one it had, and its RouteReady is the Gateway's answer (no Gateway
    // controller runs here, so NotAccepted), never a conflict.
    let a = a_isvcs.get("a").await?;
    assert_eq!(
        condition(&a, "RouteReady"),
        Some(("False".into(), "NotAccepted".into()))
    );
    assert_eq!(
        a_routes.get("a").await?.metadata.resource_version,
        a_route.metadata.resource_version,
        "a's HTTPRoute was not touched"
    );

    // `c`, later still, waits too: the oldest holder is named.
    let team_c = cluster.namespace("team-c").await?;
    let c_isvcs = api(&client, team_c.name(), &isvc_resource());
    let c_routes = api(&client, team_c.name(), &route_resource());
    tokio::time::sleep(Duration::from_millis(1100)).await;
    apply(&c_isvcs, "c", chat_spec()).await?;
    let c = wait_condition(
        &c_isvcs,
        "c",
        "RouteReady",
        "False",
        Some("HostnameConflict"),
        Duration::from_secs(30),
    )
    .await?;
    assert!(route_message(&c).contains(&holder), "{}", route_message(&c));

    // `a` moves to another hostname: `b` takes the route and `c` now waits for `b`. a's new claims share nothing
    // with them, so what triggers their reconcile is the claim a dropped (a hunt's finding: they waited for their
    // requeue).
    let mut moved = echo_spec();
    moved["gateway"] = json!({"hostnames": ["other.example.test"], "pathPrefix": "/"});
    let moved_at = Instant::now();
    apply(&a_isvcs, "a", moved).await?;
    routed(&b_routes, "b", &operator).await?;
    let b_after_move = moved_at.elapsed();
    let b_holder = format!("{}/b", team_b.name());
    wait_for(
        "c to name b as the holder",
        Duration::from_secs(30),
        || async {
            let c = c_isvcs.get("c").await?;
            Ok(route_message(&c).contains(&b_holder).then_some(()))
        },
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))?;

    // Deleting `b` makes `c` routable: the deletion triggers `c`'s reconcile.
    let deleted = Instant::now();
    b_isvcs.delete("b", &DeleteParams::default()).await?;
    routed(&c_routes, "c", &operator).await?;
    let routed_after = deleted.elapsed();
    let c = wait_condition(
        &c_isvcs,
        "c",
        "RouteReady",
        "False",
        Some("NotAccepted"),
        Duration::from_secs(15),
    )
    .await?;
    assert_eq!(c.data["status"]["url"], "http://chat.example.test/");
    println!(
        "hostname conflict: b routable {:.2} s after a moved, c {:.2} s after b was deleted",
        b_after_move.as_secs_f64(),
        routed_after.as_secs_f64()
    );
    Ok(())
}

/// Waits for the HTTPRoute `name` the operator creates once the service may serve its claim.
async fn routed(
    routes: &Api<kube::api::DynamicObject>,
    name: &str,
    operator: &OperatorProcess,
) -> anyhow::Result<()> {
    wait_for(
        &format!("{name}'s HTTPRoute"),
        Duration::from_secs(30),
        || async { Ok(routes.get_opt(name).await?.map(|_| ())) },
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))
}

fn route_message(object: &kube::api::DynamicObject) -> String {
    condition_message(object, "RouteReady")
}
