//! The operator phase of one N: cold convergence, writes on create and on a no-op resync, memory, CPU, latency.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use acceptance_tests::audit::AuditMark;
use acceptance_tests::process::{OPERATOR_USER, operator_kubeconfig};
use acceptance_tests::{Cluster, OperatorProcess};
use serde::Serialize;

use crate::latency::{self, Latency};
use crate::procstat::{self, Sample};
use crate::tracker::Tracker;
use crate::{Args, workload};

/// Extra seconds of the no-op window beyond one resync period: every object's resync requeue falls inside it.
const NOOP_MARGIN: Duration = Duration::from_secs(10);

/// The resync period of the operator that converges the N objects (seconds: 3600): longer than any convergence, so
/// no resync of an object converged early is counted as convergence work (the floor resyncs nothing). At N=3000 a
/// 30 s resync had every object reconciled about five times while the rest converged.
const CONVERGENCE_RESYNC_SECONDS: u64 = 3600;

/// Write requests of the operator, by `resource[/subresource]` (its Lease renewals are counted apart).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Writes {
    /// Writes the API server accepted to the benchmark's objects, their children and Events.
    pub total: usize,
    /// The same by `resource[/subresource]`, e.g. `deployments`, `inferenceservices/status`, `events`.
    pub by_resource: BTreeMap<String, usize>,
    /// Write requests the API server refused, by `resource[/subresource] code` (e.g. `services 429`: throttled by
    /// its in-flight limit, then retried by the client); not counted in `total`.
    pub refused: BTreeMap<String, usize>,
    /// Lease renewals (leader election), not counted in `total`.
    pub leases: usize,
}

impl Writes {
    /// Every write request sent, accepted or refused.
    pub fn attempts(&self) -> usize {
        self.total + self.refused.values().sum::<usize>()
    }
}

/// Everything measured in the operator phase of one N.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OperatorFigures {
    /// From the first create to the last child and status seen (seconds).
    pub seconds: f64,
    /// How long the benchmark's creates of the N objects took (seconds).
    pub create_seconds: f64,
    /// Operator writes from the first create until they stopped.
    pub writes_create: Writes,
    /// Operator writes in the no-op window: an operator started again after convergence, over one resync period
    /// plus a margin (its start-up reconcile of every object and one resync), with nothing changed.
    pub writes_noop: Writes,
    /// Length of the no-op window (seconds).
    pub noop_window_seconds: f64,
    /// InferenceService reconciles started during the create phase (by the converging operator) and during the no-op
    /// window (by the operator started again).
    pub reconciles: (f64, f64),
    /// Mean wall time of one InferenceService reconcile in the create phase and in the no-op window (seconds, from
    /// `model_fleet_reconcile_duration_seconds`).
    pub reconcile_mean_seconds: (f64, f64),
    /// Failed reconciles over the whole run, both operator processes (`model_fleet_reconcile_errors_total`).
    pub reconcile_errors: f64,
    /// Leading with empty caches, before the first create.
    pub idle: Sample,
    /// At convergence.
    pub converged: Sample,
    /// After the no-op window (the operator started again).
    pub after_resync: Sample,
    /// After the latency phase.
    pub after_latency: Sample,
    /// Spec change to Deployment change, under resync load.
    pub latency: Latency,
    /// How long deleting the namespace took (seconds).
    pub delete_seconds: f64,
}

/// Runs the operator phase of `n` in a fresh namespace, deleted (and waited for) afterwards.
///
/// Errors: the operator did not start or converge in time, or a request failed.
pub async fn run(
    cluster: &Cluster,
    args: &Args,
    binary: &Path,
    n: usize,
) -> anyhow::Result<OperatorFigures> {
    let client = cluster.client().await?;
    let ns = workload::namespace(&client, "op", n).await?;
    eprintln!("-- operator phase in namespace {ns}");
    let result = measure(cluster, &client, args, binary, n, &ns).await;
    let deleted = workload::delete_namespace(&client, &ns).await;
    let mut figures = result?;
    figures.delete_seconds = deleted?.as_secs_f64();
    Ok(figures)
}

/// How long convergence of `n` objects may take before the run fails.
pub fn convergence_timeout(n: usize) -> Duration {
    Duration::from_secs(300 + n as u64)
}

async fn measure(
    cluster: &Cluster,
    client: &kube::Client,
    args: &Args,
    binary: &Path,
    n: usize,
    ns: &str,
) -> anyhow::Result<OperatorFigures> {
    let tracker = Tracker::start(client, ns).await?;
    let operator = start_operator(cluster, args, binary, ns, CONVERGENCE_RESYNC_SECONDS).await?;
    let pid = operator.pid();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut figures = OperatorFigures {
        idle: procstat::sample(pid)?,
        ..OperatorFigures::default()
    };
    let audit = cluster.audit_log();
    let mark = audit.mark()?;
    let started = Instant::now();
    workload::create_all(client, ns, n, args.limit(), None).await?;
    figures.create_seconds = started.elapsed().as_secs_f64();
    let done = tracker
        .wait_converged(n, convergence_timeout(n))
        .await
        .map_err(|e| e.context(operator.log_tail()))?;
    figures.converged = procstat::sample(pid)?;
    figures.seconds = done.duration_since(started).as_secs_f64();
    eprintln!("   converged in {:.1} s", figures.seconds);
    figures.writes_create = settled_writes(mark, ns).await?;
    let reconciles_create = reconciles(&operator)?;
    let time_create = reconcile_time(&operator)?;
    let errors_create = reconcile_errors(&operator)?;
    let mut operator = operator;
    operator.terminate(Duration::from_secs(20))?;

    // The no-op window: an operator started again with `--resync-seconds` reconciles every converged object once
    // at start and once more a resync period later, with nothing changed.
    let mark = audit.mark()?;
    let mut operator = start_operator(cluster, args, binary, ns, args.resync_seconds).await?;
    let pid = operator.pid();
    let window = Duration::from_secs(args.resync_seconds) + NOOP_MARGIN;
    eprintln!(
        "   no-op window of {} s (restart, then one resync)",
        window.as_secs()
    );
    tokio::time::sleep(window).await;
    figures.noop_window_seconds = window.as_secs_f64();
    figures.writes_noop = writes(mark, ns).await?;
    figures.reconciles = (reconciles_create, reconciles(&operator)?);
    let time_noop = reconcile_time(&operator)?;
    figures.reconcile_mean_seconds = (time_create.0 / time_create.1, time_noop.0 / time_noop.1);
    figures.after_resync = procstat::sample(pid)?;

    figures.latency = latency::measure(client, ns, n, args).await?;
    figures.after_latency = procstat::sample(pid)?;
    figures.reconcile_errors = errors_create + reconcile_errors(&operator)?;
    operator.terminate(Duration::from_secs(20))?;
    Ok(figures)
}

/// `model_fleet_reconcile_errors_total` of InferenceServices.
fn reconcile_errors(operator: &OperatorProcess) -> anyhow::Result<f64> {
    // `+ 0.0`: a sum of no series is -0.0.
    Ok(acceptance_tests::modelfleet::reconcile_errors(operator, "InferenceService")? + 0.0)
}

/// The release operator as tests run it (the chart's RBAC as user `model-fleet-operator`), watching `ns`, routes
/// defaulting to Gateway `ns/shared`, resyncing every `resync_seconds`; returns once it leads with synced caches.
async fn start_operator(
    cluster: &Cluster,
    args: &Args,
    binary: &Path,
    ns: &str,
    resync_seconds: u64,
) -> anyhow::Result<OperatorProcess> {
    let kubeconfig = operator_kubeconfig(cluster)?;
    let gateway = workload::default_gateway(ns)?.to_string();
    let resync = resync_seconds.to_string();
    let concurrency = args.concurrency.to_string();
    let flags = [
        "--default-gateway",
        &gateway,
        "--resync-seconds",
        &resync,
        "--max-concurrent-reconciles",
        &concurrency,
    ];
    let operator =
        OperatorProcess::start_binary(cluster, binary, &kubeconfig, ns, "fleet", &flags, &[])?;
    operator.wait_ready().await?;
    Ok(operator)
}

/// `model_fleet_reconciles_total` of InferenceServices.
fn reconciles(operator: &OperatorProcess) -> anyhow::Result<f64> {
    acceptance_tests::inference::metric(
        operator,
        "model_fleet_reconciles_total{kind=\"InferenceService\"}",
    )
}

/// `(sum, count)` of `model_fleet_reconcile_duration_seconds` of InferenceServices.
fn reconcile_time(operator: &OperatorProcess) -> anyhow::Result<(f64, f64)> {
    let series = |suffix: &str| {
        acceptance_tests::inference::metric(
            operator,
            &format!(
                "model_fleet_reconcile_duration_seconds_{suffix}{{kind=\"InferenceService\"}}"
            ),
        )
    };
    Ok((series("sum")?, series("count")?))
}

/// The operator's writes in `ns` since `mark`, read once the audit log has settled.
async fn writes(mark: AuditMark, ns: &str) -> anyhow::Result<Writes> {
    let ns = ns.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut writes = Writes::default();
        for event in mark.writes_by(OPERATOR_USER)? {
            let object = event.object_ref.unwrap_or_default();
            if object["namespace"].as_str() != Some(ns.as_str()) {
                continue;
            }
            let resource = object["resource"].as_str().unwrap_or("?");
            if resource == "leases" {
                writes.leases += 1;
                continue;
            }
            let key = match object["subresource"].as_str() {
                Some(sub) if !sub.is_empty() => format!("{resource}/{sub}"),
                _ => resource.to_owned(),
            };
            let code = event
                .response_status
                .as_ref()
                .and_then(|status| status["code"].as_u64())
                .unwrap_or(0);
            if code >= 400 {
                *writes.refused.entry(format!("{key} {code}")).or_default() += 1;
                continue;
            }
            writes.total += 1;
            *writes.by_resource.entry(key).or_default() += 1;
        }
        Ok(writes)
    })
    .await?
}

/// [`writes`] once their count has not changed for 3 s (Events and late reconciles land after the last status the
/// tracker saw), at most 60 s.
async fn settled_writes(mark: AuditMark, ns: &str) -> anyhow::Result<Writes> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = writes(mark.clone(), ns).await?;
    loop {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let now = writes(mark.clone(), ns).await?;
        if now.total == last.total || Instant::now() >= deadline {
            return Ok(now);
        }
        last = now;
    }
}
