//! The operator process against the control plane (issue 4, runtime part): it runs with the
//! chart's RBAC, serves health and metrics, and leader election lets exactly one of two processes
//! lead.

use std::time::Duration;

use acceptance_tests::modelfleet::create_training_run;
use acceptance_tests::process::operator_kubeconfig;
use acceptance_tests::{Cluster, OperatorProcess, wait_for};
use futures::StreamExt as _;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::core::DeserializeGuard;
use kube::runtime::reflector::ObjectRef;
use model_fleet_api::TrainingRun;
use model_fleet_operator::controller::runtime::{primary_watch, watch_config};

#[tokio::test]
async fn operator_serves_health_and_metrics_with_the_charts_rbac() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.namespace("op-health").await?;
    let kubeconfig = operator_kubeconfig(&cluster)?;
    let operator = OperatorProcess::start(&cluster, &kubeconfig, ns.name(), "lead", &[], &[])?;
    assert_eq!(operator.http_get("/healthz")?.0, 200);
    wait_for("/readyz to answer 200", Duration::from_secs(30), || async {
        Ok((operator.http_get("/readyz")?.0 == 200).then_some(()))
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    let (code, metrics) = operator.http_get("/metrics")?;
    assert_eq!(code, 200);
    // OpenMetrics text; series appear with the first reconcile (covered in operator_inference.rs).
    assert!(metrics.trim_end().ends_with("# EOF"), "{metrics}");
    assert!(
        !operator.log_tail().contains("Forbidden"),
        "{}",
        operator.log_tail()
    );
    Ok(())
}

#[tokio::test]
async fn two_operators_one_leader_and_a_handover_when_it_dies() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.namespace("op-lease").await?;
    let kubeconfig = operator_kubeconfig(&cluster)?;
    let lease_flags = ["--lease-duration-seconds", "4"];
    let mut first =
        OperatorProcess::start(&cluster, &kubeconfig, ns.name(), "fleet", &lease_flags, &[])?;
    let leases: Api<Lease> = Api::namespaced(cluster.client().await?, ns.name());
    let holder = |leases: Api<Lease>| async move {
        let lease = leases.get_opt("fleet").await?;
        Ok(lease.and_then(|l| l.spec).and_then(|s| s.holder_identity))
    };
    let first_id = wait_for("a lease holder", Duration::from_secs(20), || {
        holder(leases.clone())
    })
    .await?;
    let second =
        OperatorProcess::start(&cluster, &kubeconfig, ns.name(), "fleet", &lease_flags, &[])?;
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        holder(leases.clone()).await?,
        Some(first_id.clone()),
        "the leader keeps the lease"
    );
    assert!(
        !second.log_tail().contains("acquired the lease"),
        "{}",
        second.log_tail()
    );

    first.kill(); // a crash: the lease is not released, it must expire
    let started = std::time::Instant::now();
    let second_id = wait_for(
        "the second operator to take over",
        Duration::from_secs(15),
        || {
            let leases = leases.clone();
            let first_id = first_id.clone();
            async move { Ok(holder(leases).await?.filter(|h| *h != first_id)) }
        },
    )
    .await?;
    assert_ne!(second_id, first_id);
    assert!(
        started.elapsed() < Duration::from_secs(4 + 4),
        "handover took {:?}",
        started.elapsed()
    );
    wait_for(
        "the second operator to start its controllers",
        Duration::from_secs(10),
        || async {
            Ok(second
                .log_tail()
                .contains("acquired the lease")
                .then_some(()))
        },
    )
    .await?;
    Ok(())
}

/// Issue 17: every controller's cache ([`primary_watch`], what the InferenceService, TrainingRun and Dataset
/// controllers are built on) holds its objects without `metadata.managedFields`, which the API server returns with
/// every object and which were about half of a cached object's memory; the rest of the object is kept.
#[tokio::test]
async fn a_controller_cache_holds_objects_without_managed_fields() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("op-cache").await?;
    let client = cluster.client().await?;
    let runs: Api<TrainingRun> = Api::namespaced(client.clone(), ns.name());
    let created = create_training_run(&runs, "cached").await?;
    assert!(
        created.metadata.managed_fields.is_some(),
        "the API server returns them"
    );

    let watched: Api<DeserializeGuard<TrainingRun>> = Api::namespaced(client, ns.name());
    let (store, changes) = primary_watch(watched, watch_config());
    let watch = tokio::spawn(changes.for_each(|_| async {}));
    tokio::time::timeout(Duration::from_secs(30), store.wait_until_ready()).await??;
    let cached = store
        .get(&ObjectRef::new("cached").within(ns.name()))
        .expect("the run is cached");
    watch.abort();
    let cached = cached.0.as_ref().expect("the run deserializes");
    assert_eq!(cached.metadata.managed_fields, None);
    assert_eq!(cached.metadata.uid, created.metadata.uid);
    assert_eq!(cached.spec, created.spec);
    Ok(())
}
