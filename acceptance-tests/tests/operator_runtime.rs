//! The operator process against the control plane (issue 4, runtime part): it runs with the
//! chart's RBAC, serves health and metrics, and leader election lets exactly one of two processes
//! lead.

use std::time::Duration;

use acceptance_tests::modelfleet::create_training_run;
use acceptance_tests::process::operator_kubeconfig;
use acceptance_tests::{Cluster, OperatorProcess, TestNamespace, wait_for};
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
    // The runbook's readiness lines: the pod waited for the Lease, led, and synced every controller's cache (a
    // standby is ready too, so they are waited for).
    logged(&operator, "waiting for the lease", "").await?;
    logged(&operator, "acquired the lease: starting controllers", "").await?;
    for kind in ["InferenceService", "TrainingRun", "Dataset"] {
        logged(&operator, "controller caches synced", kind).await?;
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

/// Waits up to 20 s for a line of `operator`'s log holding both `message` and `also` (`""`: anything).
///
/// Errors: the timeout, with the log tail.
async fn logged(operator: &OperatorProcess, message: &str, also: &str) -> anyhow::Result<()> {
    wait_for(
        &format!("`{message}` {also} in the log"),
        Duration::from_secs(20),
        || async {
            let log = std::fs::read_to_string(&operator.log)?;
            Ok(log
                .lines()
                .any(|l| l.contains(message) && l.contains(also))
                .then_some(()))
        },
    )
    .await
    .map_err(|e| e.context(operator.log_tail()))
}

/// The holder of Lease `fleet` (`spec.holderIdentity`), if any.
async fn holder(leases: &Api<Lease>) -> anyhow::Result<Option<String>> {
    let lease = leases.get_opt("fleet").await?;
    Ok(lease.and_then(|l| l.spec).and_then(|s| s.holder_identity))
}

/// Two operators on Lease `fleet` with `--lease-duration-seconds lease_seconds` in a new namespace `prefix-...`:
/// the first leads before the second starts and stands by (it logs so once its watch has read the Lease).
struct LeaderAndStandby {
    _ns: TestNamespace,
    leases: Api<Lease>,
    leader: OperatorProcess,
    leader_id: String,
    standby: OperatorProcess,
}

impl LeaderAndStandby {
    async fn start(prefix: &str, lease_seconds: u64) -> anyhow::Result<Self> {
        let cluster = Cluster::connect()?;
        let ns = cluster.namespace(prefix).await?;
        let kubeconfig = operator_kubeconfig(&cluster)?;
        let seconds = lease_seconds.to_string();
        let flags = ["--lease-duration-seconds", seconds.as_str()];
        let start =
            || OperatorProcess::start(&cluster, &kubeconfig, ns.name(), "fleet", &flags, &[]);
        let leader = start()?;
        let leases: Api<Lease> = Api::namespaced(cluster.client().await?, ns.name());
        let leader_id = wait_for("a lease holder", Duration::from_secs(20), || {
            holder(&leases)
        })
        .await?;
        let standby = start()?;
        wait_for(
            "the second operator to stand by",
            Duration::from_secs(20),
            || async {
                Ok(standby
                    .log_tail()
                    .contains("the lease is held by another process: standing by")
                    .then_some(()))
            },
        )
        .await?;
        Ok(LeaderAndStandby {
            _ns: ns,
            leases,
            leader,
            leader_id,
            standby,
        })
    }

    /// Waits up to `timeout` for a holder other than the first leader; returns it.
    async fn new_holder(&self, timeout: Duration) -> anyhow::Result<String> {
        wait_for("the standby to take the lease", timeout, || async {
            Ok(holder(&self.leases).await?.filter(|h| *h != self.leader_id))
        })
        .await
        .map_err(|e| e.context(self.standby.log_tail()))
    }
}

#[tokio::test]
async fn two_operators_one_leader_and_a_handover_when_it_dies() -> anyhow::Result<()> {
    let mut pair = LeaderAndStandby::start("op-lease", 4).await?;
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        holder(&pair.leases).await?.as_ref(),
        Some(&pair.leader_id),
        "the leader keeps the lease"
    );
    assert!(
        !pair.standby.log_tail().contains("acquired the lease"),
        "{}",
        pair.standby.log_tail()
    );

    pair.leader.kill(); // a crash: the lease is not released, it must expire
    let started = std::time::Instant::now();
    pair.new_holder(Duration::from_secs(15)).await?;
    assert!(
        started.elapsed() < Duration::from_secs(4 + 4),
        "handover took {:?}",
        started.elapsed()
    );
    wait_for(
        "the second operator to start its controllers",
        Duration::from_secs(10),
        || async {
            Ok(pair
                .standby
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
    let mut pair = LeaderAndStandby::start("op-release", 60).await?;
    assert!(pair.leader.terminate(Duration::from_secs(20))?.success());
    let released = std::time::Instant::now();
    assert!(
        std::fs::read_to_string(&pair.leader.log)?.contains("released the lease"),
        "{}",
        pair.leader.log_tail()
    );
    // Well under the ~55 s the released Lease had left: only the watch can explain a take-over in this window.
    pair.new_holder(Duration::from_secs(20)).await?;
    println!("take-over {:?} after the release", released.elapsed());
    logged(
        &pair.standby,
        "acquired the lease: starting controllers",
        "",
    )
    .await?;
    let log = std::fs::read_to_string(&pair.standby.log)?;
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
