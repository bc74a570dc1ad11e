//! The operator process against the control plane (issue 4, runtime part): it runs with the
//! chart's RBAC, serves health and metrics, and leader election lets exactly one of two processes
//! lead.

use std::time::Duration;

use acceptance_tests::modelfleet::create_training_run;
use acceptance_tests::process::operator_kubeconfig;
use acceptance_tests::rbac::{
    http_add_on_rules, kubeconfig_with_exact_rules, lease_rules, operator_rules,
};
use acceptance_tests::tcp_proxy::{TcpProxy, api_server_addr};
use acceptance_tests::{Cluster, OperatorProcess, TestNamespace, wait_for};
use anyhow::Context as _;
use futures::StreamExt as _;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
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

/// Operators on Lease `fleet` with `--lease-duration-seconds lease_seconds` in a new namespace `prefix-...`, all with
/// `kubeconfig`: the first leads before the others start, and each other one stands by (it logs `stand_by_line`
/// once its watch of the Lease has read it, or failed to).
struct LeaderAndStandbys {
    _ns: TestNamespace,
    leases: Api<Lease>,
    leader: OperatorProcess,
    leader_id: String,
    standbys: Vec<OperatorProcess>,
}

/// What a standby logs once its watch has read the Lease held by another process.
const STANDING_BY: &str = "the lease is held by another process: standing by";

impl LeaderAndStandbys {
    async fn start(
        prefix: &str,
        lease_seconds: u64,
        kubeconfig: &std::path::Path,
        standbys: usize,
        stand_by_line: &str,
    ) -> anyhow::Result<Self> {
        let cluster = Cluster::connect()?;
        let ns = cluster.namespace(prefix).await?;
        let seconds = lease_seconds.to_string();
        let flags = ["--lease-duration-seconds", seconds.as_str()];
        let start =
            || OperatorProcess::start(&cluster, kubeconfig, ns.name(), "fleet", &flags, &[]);
        let leader = start()?;
        let leases: Api<Lease> = Api::namespaced(cluster.client().await?, ns.name());
        let leader_id = wait_for("a lease holder", Duration::from_secs(20), || {
            holder(&leases)
        })
        .await?;
        let standbys = (0..standbys)
            .map(|_| start())
            .collect::<Result<Vec<_>, _>>()?;
        for standby in &standbys {
            logged(standby, stand_by_line, "").await?;
        }
        Ok(LeaderAndStandbys {
            _ns: ns,
            leases,
            leader,
            leader_id,
            standbys,
        })
    }

    /// A leader and one standby with the chart's rules.
    async fn pair(prefix: &str, lease_seconds: u64) -> anyhow::Result<Self> {
        let kubeconfig = operator_kubeconfig(&Cluster::connect()?)?;
        Self::start(prefix, lease_seconds, &kubeconfig, 1, STANDING_BY).await
    }

    /// Waits up to `timeout` for a holder other than the first leader; returns it.
    async fn new_holder(&self, timeout: Duration) -> anyhow::Result<String> {
        wait_for("a standby to take the lease", timeout, || async {
            Ok(holder(&self.leases).await?.filter(|h| *h != self.leader_id))
        })
        .await
        .map_err(|e| {
            let tails: Vec<String> = self.standbys.iter().map(|s| s.log_tail()).collect();
            e.context(tails.join("\n---\n"))
        })
    }

    /// SIGTERM to the leader, which must exit cleanly having released the Lease.
    fn terminate_leader(&mut self) -> anyhow::Result<()> {
        assert!(self.leader.terminate(Duration::from_secs(20))?.success());
        assert!(
            std::fs::read_to_string(&self.leader.log)?.contains("released the lease"),
            "{}",
            self.leader.log_tail()
        );
        Ok(())
    }
}

#[tokio::test]
async fn two_operators_one_leader_and_a_handover_when_it_dies() -> anyhow::Result<()> {
    let mut pair = LeaderAndStandbys::pair("op-lease", 4).await?;
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        holder(&pair.leases).await?.as_ref(),
        Some(&pair.leader_id),
        "the leader keeps the lease"
    );
    let standby = &pair.standbys[0];
    assert!(
        !standby.log_tail().contains("acquired the lease"),
        "{}",
        standby.log_tail()
    );

    pair.leader.kill(); // a crash: the lease is not released, it must expire
    let started = std::time::Instant::now();
    pair.new_holder(Duration::from_secs(15)).await?;
    assert!(
        started.elapsed() < Duration::from_secs(4 + 4),
        "handover took {:?}",
        started.elapsed()
    );
    logged(
        &pair.standbys[0],
        "acquired the lease: starting controllers",
        "",
    )
    .await
}

/// A clean shutdown hands over at once: on SIGTERM the leader releases the Lease, and the standby, watching it, takes
/// it over in about a second instead of when the released Lease would have expired (a 60 s lease here, acquired
/// just before, so that would be about a minute later).
#[tokio::test]
async fn a_released_lease_is_taken_over_before_it_would_have_expired() -> anyhow::Result<()> {
    let mut pair = LeaderAndStandbys::pair("op-release", 60).await?;
    pair.terminate_leader()?;
    let released = std::time::Instant::now();
    // Well under the ~55 s the released Lease had left: only the watch can explain a take-over in this window.
    pair.new_holder(Duration::from_secs(20)).await?;
    println!("take-over {:?} after the release", released.elapsed());
    let standby = &pair.standbys[0];
    logged(standby, "acquired the lease: starting controllers", "").await?;
    let log = std::fs::read_to_string(&standby.log)?;
    let asked = log.find("the lease was released: asking for it now");
    let acquired = log.find("acquired the lease: starting controllers");
    assert!(
        matches!((asked, acquired), (Some(a), Some(b)) if a < b),
        "the standby says it saw the release, then leads:\n{log}"
    );
    Ok(())
}

/// Two standbys both see the release and both ask for the Lease at once: exactly one takes it (the other's
/// server-side apply of `holderIdentity` conflicts with the winner's field manager), and the other stands by again,
/// its controllers never started.
#[tokio::test]
async fn two_standbys_racing_for_a_released_lease_give_one_leader() -> anyhow::Result<()> {
    let kubeconfig = operator_kubeconfig(&Cluster::connect()?)?;
    let mut fleet = LeaderAndStandbys::start("op-race", 60, &kubeconfig, 2, STANDING_BY).await?;
    fleet.terminate_leader()?;
    let winner = fleet.new_holder(Duration::from_secs(20)).await?;
    let (won, lost): (Vec<&OperatorProcess>, Vec<&OperatorProcess>) = fleet
        .standbys
        .iter()
        .partition(|s| winner.ends_with(&format!("-{}", s.pid())));
    assert_eq!((won.len(), lost.len()), (1, 1), "one winner, {winner}");
    logged(won[0], "acquired the lease: starting controllers", "").await?;
    // The loser asked too, then read the winner's Lease and stands by again (a second `standing by`).
    let loser = lost[0];
    logged(loser, "the lease was released: asking for it now", "").await?;
    wait_for(
        "the loser to stand by again",
        Duration::from_secs(20),
        || async {
            let log = std::fs::read_to_string(&loser.log)?;
            Ok((log.matches(STANDING_BY).count() >= 2).then_some(()))
        },
    )
    .await
    .map_err(|e| e.context(loser.log_tail()))?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        holder(&fleet.leases).await?,
        Some(winner),
        "the winner keeps it"
    );
    assert!(
        !std::fs::read_to_string(&loser.log)?.contains("acquired the lease"),
        "{}",
        loser.log_tail()
    );
    Ok(())
}

/// Without `list` or without `watch` on leases (an older copy of the chart's Role), a standby cannot watch the Lease:
/// it warns once and still takes the released Lease over, when the Lease it last read expires, without the fast
/// path. Both verbs are tried, one per fleet, so each is shown to be needed.
#[tokio::test]
async fn without_list_or_watch_on_leases_a_standby_takes_over_at_the_expiry() -> anyhow::Result<()>
{
    let cluster = Cluster::connect()?;
    for verb in ["list", "watch"] {
        let mut lease = lease_rules()?;
        for rule in &mut lease {
            let verbs = rule["verbs"].as_array_mut().expect("verbs");
            verbs.retain(|v| v != verb);
        }
        let rules: Vec<serde_json::Value> =
            [operator_rules()?, lease, http_add_on_rules()?].concat();
        let user = format!("model-fleet-lease-without-{verb}");
        let kubeconfig = kubeconfig_with_exact_rules(&cluster, &user, &rules)?;
        let mut fleet = LeaderAndStandbys::start(
            &format!("op-no-{verb}"),
            6,
            &kubeconfig,
            1,
            "cannot watch the lease",
        )
        .await?;
        fleet.terminate_leader()?;
        fleet.new_holder(Duration::from_secs(30)).await?;
        let standby = &fleet.standbys[0];
        logged(standby, "acquired the lease: starting controllers", "").await?;
        let log = std::fs::read_to_string(&standby.log)?;
        assert!(
            log.contains(&format!("cannot {verb} resource \\\"leases\\\""))
                && !log.contains("asking for it now"),
            "without {verb}: refused, and no fast path:\n{log}"
        );
    }
    Ok(())
}

/// When `operator` first logged a line holding `message` (the JSON log's `timestamp`); `None` if it has not.
///
/// Errors: the log cannot be read, or the line has no RFC 3339 `timestamp`.
fn logged_at(operator: &OperatorProcess, message: &str) -> anyhow::Result<Option<Timestamp>> {
    let log = std::fs::read_to_string(&operator.log)?;
    let Some(line) = log.lines().find(|l| l.contains(message)) else {
        return Ok(None);
    };
    let entry: serde_json::Value = serde_json::from_str(line)?;
    let at = entry["timestamp"]
        .as_str()
        .with_context(|| format!("no timestamp in {line}"))?;
    Ok(Some(at.parse()?))
}

/// A leader cut off from the API server (its connection stalls just before a renewal is due: no error, no answer)
/// stops its controllers by the expiry its last renewal proved, so before the standby can start its own: the two
/// never run at once. The watchdog before 2026-12-06 counted a whole lease duration from its last answered read and,
/// its reads hanging, stopped 5.5 to 8.5 s after the expiry here (a 9 s lease, renewed 3 s before expiry, read every
/// 3 s), while the standby started within about a second of it (measured: 6.0 s against 0.2 s). Once the connection
/// is restored, the old leader stands by. (Its renewal held by the stall lands then and sets the new holder's
/// `renewTime` back: kube-lease-manager renews with an unconditional patch. The Lease is checked before that older
/// expiry, 15 s after the last renewal.)
#[tokio::test]
async fn a_leader_cut_off_from_the_api_server_stops_before_the_standby_starts() -> anyhow::Result<()>
{
    const LEASE_SECONDS: i64 = 9;
    const GRACE_SECONDS: i64 = 3;
    let cluster = Cluster::connect()?;
    let ns = cluster.namespace("op-cut-off").await?;
    let direct = operator_kubeconfig(&cluster)?;
    let proxy = TcpProxy::start(api_server_addr(&direct)?).await?;
    let through_proxy = proxy.kubeconfig(&direct, &cluster.dir)?;
    let seconds = LEASE_SECONDS.to_string();
    let flags = ["--lease-duration-seconds", seconds.as_str()];
    let start =
        |kubeconfig| OperatorProcess::start(&cluster, kubeconfig, ns.name(), "fleet", &flags, &[]);
    let leader = start(&through_proxy)?;
    let leases: Api<Lease> = Api::namespaced(cluster.client().await?, ns.name());
    let leader_id = wait_for("a lease holder", Duration::from_secs(20), || {
        holder(&leases)
    })
    .await?;
    logged(&leader, "acquired the lease: starting controllers", "").await?;
    let standby = start(&direct)?;
    logged(&standby, STANDING_BY, "").await?;

    // Stall half a second before the next renewal is due (renewTime + duration - grace).
    let renewed = leases
        .get("fleet")
        .await?
        .spec
        .and_then(|s| s.renew_time)
        .context("renewTime")?
        .0;
    let due = renewed + SignedDuration::from_secs(LEASE_SECONDS - GRACE_SECONDS);
    // A renewal in flight (due already passed) is fine: the expiry is tracked below from what the Lease says.
    let until_due = Duration::try_from(due.duration_since(Timestamp::now())).unwrap_or_default();
    tokio::time::sleep(until_due.saturating_sub(Duration::from_millis(500))).await;
    proxy.switch().stall();

    // The expiry the leader last proved: its last renewal the test reads, directly, before the standby holds it.
    let mut expiry = None;
    let waiting = std::time::Instant::now();
    let new_holder = loop {
        let spec = leases.get("fleet").await?.spec.unwrap_or_default();
        match spec.holder_identity.filter(|h| !h.is_empty()) {
            Some(holder) if holder == leader_id => {
                expiry = spec
                    .renew_time
                    .map(|r| r.0 + SignedDuration::from_secs(LEASE_SECONDS));
            }
            Some(holder) => break holder,
            None => {}
        }
        anyhow::ensure!(
            waiting.elapsed() < Duration::from_secs(40),
            "the standby did not take the lease within 40 s:\n{}",
            standby.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_ne!(new_holder, leader_id);
    logged(&standby, "acquired the lease: starting controllers", "").await?;
    logged(&leader, "lost the lease: aborting controllers", "").await?;
    let expiry = expiry.context("the leader's last renewal")?;
    let unconfirmed = logged_at(&leader, "cannot confirm the lease before it expires")?;
    let stopped = logged_at(&leader, "lost the lease: aborting controllers")?.context("stop")?;
    let started =
        logged_at(&standby, "acquired the lease: starting controllers")?.context("start")?;
    println!(
        "expiry {expiry}; leader stopped {:?} after it; standby started {:?} after it",
        stopped.duration_since(expiry),
        started.duration_since(expiry)
    );
    assert!(
        unconfirmed.is_some_and(|at| at >= expiry) && stopped < started,
        "the cut-off leader stops at its expiry {expiry}, before the standby starts at {started}; it stopped at \
         {stopped}:\n{}",
        leader.log_tail()
    );

    proxy.switch().restore();
    let log = std::fs::read_to_string(&leader.log)?;
    let lost_at = log
        .find("lost the lease: aborting controllers")
        .unwrap_or_default();
    wait_for(
        "the old leader to stand by",
        Duration::from_secs(30),
        || async {
            let log = std::fs::read_to_string(&leader.log)?;
            Ok(log[lost_at..].contains(STANDING_BY).then_some(()))
        },
    )
    .await
    .map_err(|e| e.context(leader.log_tail()))?;
    assert_eq!(
        holder(&leases).await?,
        Some(new_holder),
        "the standby keeps the lease"
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
