//! Operator fault drills (issue 18, `make drills`; docs/RELIABILITY.md): each drill runs a seeded burst of creates,
//! updates and deletes across InferenceService, TrainingRun and Dataset on simulated nodes while it injects one
//! fault, then checks that every object converges to its spec with no object lost, no duplicate child, no orphan, no
//! status regression and no Job created twice (audit log). Each prints one `DRILL` line of figures and asserts the
//! zeros, never a time. Sizes: `DRILL_BURST` (operations, default 300), `DRILL_SEED` (replay a run).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use acceptance_tests::cluster::repo_root;
use acceptance_tests::drills::burst::Fleet;
use acceptance_tests::drills::check::{Regressions, converge, jobs_created_twice};
use acceptance_tests::drills::metrics::ErrorSampler;
use acceptance_tests::drills::{Figures, Rng, env_usize, seed};
use acceptance_tests::process::operator_kubeconfig;
use acceptance_tests::tcp_proxy::{TcpProxy, api_server_addr};
use acceptance_tests::{Cluster, OperatorProcess};

/// Names per kind the burst draws from: small enough that names are created, updated, deleted and re-created.
const NAMES: usize = 12;
/// How long the end state may take to converge before the drill fails with what is pending.
const CONVERGE_TIMEOUT: Duration = Duration::from_secs(240);
/// Lease flags of the drills' operators: a killed leader's Lease expires in 4 s.
const LEASE: [&str; 2] = ["--lease-duration-seconds", "4"];

fn start_operator(cluster: &Cluster, ns: &str) -> anyhow::Result<OperatorProcess> {
    start_operator_with(cluster, ns, &operator_kubeconfig(cluster)?)
}

fn start_operator_with(
    cluster: &Cluster,
    ns: &str,
    kubeconfig: &Path,
) -> anyhow::Result<OperatorProcess> {
    let flags = ["--resync-seconds", "5", LEASE[0], LEASE[1]];
    OperatorProcess::start(cluster, kubeconfig, ns, "fleet", &flags, &[])
}

/// Kills `operator` with SIGKILL every 1-4 s (seeded) and starts a new one 0-0.5 s later, until `stop`; returns
/// the operator running at the end and the number of kills.
fn killer(
    cluster: Cluster,
    ns: String,
    seed: u64,
    mut operator: OperatorProcess,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<anyhow::Result<(OperatorProcess, usize)>> {
    std::thread::spawn(move || {
        let mut rng = Rng::new(seed ^ 0x6b69_6c6c);
        let mut kills = 0;
        loop {
            let wake = std::time::Instant::now() + rng.millis(1000, 4000);
            while std::time::Instant::now() < wake && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
            }
            if stop.load(Ordering::Relaxed) {
                return Ok((operator, kills));
            }
            operator.kill();
            kills += 1;
            std::thread::sleep(rng.millis(0, 500));
            operator = start_operator(&cluster, &ns)?;
        }
    })
}

#[tokio::test]
#[ignore = "make drills runs the drills on their own instance: some restart its API server and etcd"]
async fn drill_kill9_operator_during_a_burst() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("drill-kill").await?;
    let client = cluster.client().await?;
    let seed = seed();
    let ops = env_usize("DRILL_BURST", 300);
    println!("DRILL kill9 seed={seed} burst={ops}");
    let mark = cluster.audit_log().mark()?;
    let regressions = Regressions::default();
    let sampler = regressions.sample(client.clone(), ns.name().to_owned());
    let stop = Arc::new(AtomicBool::new(false));
    let first = start_operator(&cluster, ns.name())?;
    let killing = killer(
        cluster.clone(),
        ns.name().to_owned(),
        seed,
        first,
        stop.clone(),
    );

    let mut fleet = Fleet::default();
    let burst_started = std::time::Instant::now();
    let burst = fleet
        .burst(&client, ns.name(), &mut Rng::new(seed), ops, NAMES, 60)
        .await;
    let burst_time = burst_started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let (operator, kills) = tokio::task::spawn_blocking(move || killing.join())
        .await?
        .map_err(|_| anyhow::anyhow!("the killer thread panicked"))??;
    burst?;

    let (converge_time, look) = converge(&client, ns.name(), &fleet, CONVERGE_TIMEOUT).await?;
    sampler.abort();
    let figures = Figures {
        converge: converge_time,
        lost: look.lost,
        duplicates: look.duplicates,
        orphans: look.orphans,
        regressions: regressions.count(),
        regression_details: regressions.details(),
        jobs_twice: jobs_created_twice(&mark, ns.name(), &fleet)?,
    };
    figures.print(
        "kill9",
        &format!(
            "seed={seed} ops={} refused={} kills={kills} burst_s={:.1}",
            fleet.sent,
            fleet.refused,
            burst_time.as_secs_f64()
        ),
    );
    assert!(
        look.pending.is_empty(),
        "not converged in {CONVERGE_TIMEOUT:?}: {:?}\n{}",
        look.pending,
        operator.log_tail()
    );
    figures.assert_zeros("kill9");
    Ok(())
}

/// A fault injected once, `delay` into the burst, on its own thread; it returns when the fault is over.
type Fault = Box<dyn FnOnce(&Cluster) -> anyhow::Result<()> + Send>;

/// One operator (never restarted) under a burst while `fault` hits the control plane; checks the end state and the
/// reconcile-error rate: it may rise during the fault and must be back at 0 over the 10 s after convergence. The
/// operator uses `kubeconfig` when given (e.g. one that dials a proxy), else the chart's identity. Returns the
/// operator's whole log.
async fn control_plane_drill(
    name: &str,
    fault: Fault,
    kubeconfig: Option<PathBuf>,
) -> anyhow::Result<String> {
    let cluster = Cluster::connect()?;
    let ns = cluster
        .model_fleet_namespace(&format!("drill-{name}"))
        .await?;
    let client = cluster.client().await?;
    let seed = seed();
    let ops = env_usize("DRILL_BURST", 300);
    println!("DRILL {name} seed={seed} burst={ops}");
    let mark = cluster.audit_log().mark()?;
    let regressions = Regressions::default();
    let sampler = regressions.sample(client.clone(), ns.name().to_owned());
    let kubeconfig = match kubeconfig {
        Some(path) => path,
        None => operator_kubeconfig(&cluster)?,
    };
    let mut operator = start_operator_with(&cluster, ns.name(), &kubeconfig)?;
    operator.wait_ready().await?;
    let errors = ErrorSampler::start(&operator.metrics_address);
    let mut rng = Rng::new(seed);
    let delay = rng.millis(2000, 6000);
    let burst_started = Instant::now();
    let faulting = {
        let cluster = cluster.clone();
        std::thread::spawn(move || -> anyhow::Result<(Instant, Instant)> {
            std::thread::sleep(delay);
            let started = Instant::now();
            fault(&cluster)?;
            Ok((started, Instant::now()))
        })
    };
    let mut fleet = Fleet::default();
    let burst = fleet
        .burst(&client, ns.name(), &mut rng, ops, NAMES, 60)
        .await;
    let (fault_start, fault_end) = tokio::task::spawn_blocking(move || faulting.join())
        .await?
        .map_err(|_| anyhow::anyhow!("the fault thread panicked"))??;
    burst?;
    let burst_time = burst_started.elapsed();
    let (converge_time, look) = converge(&client, ns.name(), &fleet, CONVERGE_TIMEOUT).await?;
    sampler.abort();
    let converged = Instant::now();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let before = errors.errors_between(burst_started, fault_start);
    let during = errors.errors_between(fault_start, converged);
    let peak = errors.peak_rate(fault_start, converged);
    let after = errors.errors_between(converged, Instant::now());
    let figures = Figures {
        converge: converge_time,
        lost: look.lost,
        duplicates: look.duplicates,
        orphans: look.orphans,
        regressions: regressions.count(),
        regression_details: regressions.details(),
        jobs_twice: jobs_created_twice(&mark, ns.name(), &fleet)?,
    };
    figures.print(
        name,
        &format!(
            "seed={seed} ops={} refused={} fault_s={:.1} burst_s={:.1} errors_before={before} \
             errors_during={during} peak_errors_per_s={peak:.1} errors_10s_after={after}",
            fleet.sent,
            fleet.refused,
            (fault_end - fault_start).as_secs_f64(),
            burst_time.as_secs_f64()
        ),
    );
    assert!(
        !operator.exited(),
        "the operator exited: {}",
        operator.log_tail()
    );
    assert!(
        look.pending.is_empty(),
        "not converged in {CONVERGE_TIMEOUT:?}: {:?}\n{}",
        look.pending,
        operator.log_tail()
    );
    figures.assert_zeros(name);
    assert_eq!(
        after,
        0.0,
        "reconcile errors after convergence (seed {seed}); the operator's last failed reconciles:\n{}",
        failed_reconciles(&operator)
    );
    Ok(std::fs::read_to_string(&operator.log)?)
}

/// The last 30 `reconcile failed` / `reconcile waits` lines of the operator's log (what a drill's error count is).
fn failed_reconciles(operator: &OperatorProcess) -> String {
    let text = std::fs::read_to_string(&operator.log).unwrap_or_default();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("reconcile failed") || l.contains("reconcile waits"))
        .collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// `cluster.sh restart INSTANCE COMPONENT`.
fn restart(component: &'static str) -> Fault {
    Box::new(move |cluster: &Cluster| {
        let out = std::process::Command::new("bash")
            .arg(repo_root().join("acceptance-tests/cluster/scripts/cluster.sh"))
            .args(["restart", &cluster.instance, component])
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "cluster.sh restart {component}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(())
    })
}

#[tokio::test]
#[ignore = "make drills runs the drills on their own instance: some restart its API server and etcd"]
async fn drill_restart_kube_apiserver_during_a_burst() -> anyhow::Result<()> {
    control_plane_drill("apiserver-restart", restart("kube-apiserver"), None).await?;
    Ok(())
}

#[tokio::test]
#[ignore = "make drills runs the drills on their own instance: some restart its API server and etcd"]
async fn drill_restart_etcd_during_a_burst() -> anyhow::Result<()> {
    control_plane_drill("etcd-restart", restart("etcd"), None).await?;
    Ok(())
}

// The operator dials kube-apiserver through our proxy, which stops forwarding for DRILL_STALL_SECONDS (default 30)
// during the burst: no restart, and everything converges once bytes move again. A stall longer than the lease means
// the leader cannot prove it still holds the Lease: it must stop its controllers (another replica could take over
// meanwhile) and lead again once the API server answers, as docs/runbooks.md says it logs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "make drills runs the drills on their own instance: some restart its API server and etcd"]
async fn drill_stall_the_api_server_connection() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let operator = operator_kubeconfig(&cluster)?;
    let proxy = TcpProxy::start(api_server_addr(&operator)?).await?;
    let kubeconfig = proxy.kubeconfig(&operator, &cluster.dir)?;
    let stall = Duration::from_secs(env_usize("DRILL_STALL_SECONDS", 30) as u64);
    let switch = proxy.switch();
    let fault: Fault = Box::new(move |_| {
        switch.stall();
        std::thread::sleep(stall);
        switch.restore();
        Ok(())
    });
    let log = control_plane_drill("stall", fault, Some(kubeconfig)).await?;
    let lease_seconds: u64 = LEASE[1].parse()?;
    if stall > Duration::from_secs(2 * lease_seconds) {
        let at = |line: &str| log.find(line);
        let unconfirmed = at("cannot confirm the lease before it expires");
        let lost = at("lost the lease: aborting controllers");
        let led_again = log.rfind("acquired the lease: starting controllers");
        assert!(
            matches!((unconfirmed, lost, led_again), (Some(a), Some(b), Some(c)) if a < b && b < c),
            "a stall of {stall:?} with a {lease_seconds} s lease: the leader stops for want of proof, then leads \
             again: {:?}",
            (unconfirmed, lost, led_again)
        );
    } else {
        println!(
            "DRILL stall: lease lines not checked: a {stall:?} stall is not longer than twice the {lease_seconds} s \
             lease (set DRILL_STALL_SECONDS above {})",
            2 * lease_seconds
        );
    }
    Ok(())
}
