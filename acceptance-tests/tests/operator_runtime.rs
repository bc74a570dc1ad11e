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
    // The runbook's readiness lines: the pod waited for the Lease, led, and synced every controller's cache.
    let log = std::fs::read_to_string(&operator.log)?;
    for line in [
        "waiting for the lease",
        "acquired the lease: starting controllers",
    ] {
        assert!(log.contains(line), "{line:?} missing from:\n{log}");
    }
    for kind in ["InferenceService", "TrainingRun", "Dataset"] {
        assert!(
            log.lines()
                .any(|l| l.contains("controller caches synced") && l.contains(kind)),
            "no `controller caches synced` for {kind}:\n{log}"
        );
    }
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

/// A clean shutdown hands over at once: on SIGTERM the leader releases the Lease, and the standby, watching it, takes
/// it over in about a second instead of when the released Lease would have expired (a 60 s lease here, acquired
/// just before, so that would be about a minute later).
#[tokio::test]
async fn a_released_lease_is_taken_over_before_it_would_have_expired() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.namespace("op-release").await?;
    let kubeconfig = operator_kubeconfig(&cluster)?;
    let lease_flags = ["--lease-duration-seconds", "60"];
    let mut first =
        OperatorProcess::start(&cluster, &kubeconfig, ns.name(), "fleet", &lease_flags, &[])?;
    let leases: Api<Lease> = Api::namespaced(cluster.client().await?, ns.name());
    let holder = || async {
        let lease = leases.get_opt("fleet").await?;
        Ok(lease.and_then(|l| l.spec).and_then(|s| s.holder_identity))
    };
    let first_id = wait_for("a lease holder", Duration::from_secs(20), holder).await?;
    let second =
        OperatorProcess::start(&cluster, &kubeconfig, ns.name(), "fleet", &lease_flags, &[])?;
    // The standby has read the Lease through its watch (logged once the watch's first list is in).
    wait_for(
        "the second operator to stand by",
        Duration::from_secs(20),
        || async {
            Ok(second
                .log_tail()
                .contains("the lease is held by another process: standing by")
                .then_some(()))
        },
    )
    .await?;

    assert!(first.terminate(Duration::from_secs(20))?.success());
    let released = std::time::Instant::now();
    assert!(
        std::fs::read_to_string(&first.log)?.contains("released the lease"),
        "{}",
        first.log_tail()
    );
    // Well under the ~55 s the released Lease had left: only the watch can explain a take-over in this window.
    let second_id = wait_for(
        "the standby to take the released lease",
        Duration::from_secs(20),
        || async { Ok(holder().await?.filter(|h| *h != first_id)) },
    )
    .await
    .map_err(|e| e.context(second.log_tail()))?;
    println!("take-over {:?} after the release", released.elapsed());
    assert_ne!(second_id, first_id);
    let log = std::fs::read_to_string(&second.log)?;
    let asked = log.find("the lease was released: asking for it now");
    let acquired = log.find("acquired the lease: starting controllers");
    assert!(
        matches!((asked, acquired), (Some(a), Some(b)) if a < b),
        "the standby says it saw the release, then leads:\n{log}"
    );
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
