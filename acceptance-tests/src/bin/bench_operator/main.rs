//! `bench-operator`: the operator half of issue 17 (performance).
//!
//! For each N it measures, on the running instance named by `MODEL_FLEET_INSTANCE`:
//! - cold convergence of N InferenceServices under the release operator ([`operator_phase`]): from the first create
//!   until every status describes its generation and every child (Deployment, Service, HTTPRoute) exists;
//! - the floor ([`floor`]): a plain client creating the same N objects and applying the same rendered children plus
//!   one status write each, with the same concurrency, no operator;
//! - the operator's writes per object on create and during one no-op resync (audit log), its RSS and CPU, and the
//!   reconcile latency from a spec change to the Deployment showing it ([`latency`]).
//!
//! It prints a Markdown table and each target of issue 17 with `holds` / `MISSED` ([`report`]); no threshold fails
//! the program: it reports.
//!
//! ```sh
//! export CARGO_TARGET_DIR=~/.cache/model-fleet/target
//! cargo build --release -p model-fleet-operator      # the operator as shipped (its own feature set)
//! cargo build --release -p acceptance-tests --bin bench-operator
//! MODEL_FLEET_REAL_NODE=0 acceptance-tests/cluster/scripts/cluster.sh up bench
//! MODEL_FLEET_INSTANCE=bench $CARGO_TARGET_DIR/release/bench-operator --n 100,300,1000 --json bench.jsonl
//! ```
//! Build the benchmark in release too: a debug floor client would be slower and flatter the operator's ratio.

mod floor;
mod latency;
mod machine;
mod operator_phase;
mod procstat;
mod report;
mod tracker;
mod workload;

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;

use acceptance_tests::Cluster;
use model_fleet_operator::controller::context::DEFAULT_MAX_CONCURRENT_RECONCILES;

/// Command line of `bench-operator`.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "bench-operator",
    about = "Operator convergence, writes, memory, CPU and latency next to a plain-client floor"
)]
pub struct Args {
    /// Comma-separated numbers of InferenceServices, `--repeat` runs each.
    #[arg(long, value_delimiter = ',', default_value = "100,300")]
    pub n: Vec<usize>,

    /// Runs of each N. The report keeps the run with the median convergence ratio (the lower middle one of an even
    /// count) and lists every run's ratio; a no-op write in any run fails the no-op target. Every run is appended to
    /// `--json`. On this 2-core machine one N=1000 run's ratio moved between 1.04 and 1.63 across six runs.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub repeat: u16,

    /// The operator binary (a release build for real numbers).
    /// Default: `$CARGO_TARGET_DIR/release/model-fleet-operator`.
    #[arg(long, value_name = "PATH")]
    pub operator: Option<PathBuf>,

    /// Objects worked on at once: the operator's `--max-concurrent-reconciles` and the floor's objects in flight
    /// (the same concurrency on both sides, as issue 17 asks); the benchmark's own creates use it too.
    #[arg(long, default_value_t = DEFAULT_MAX_CONCURRENT_RECONCILES,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,

    /// Appends one JSON line per N with every figure to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// `--resync-seconds` of the operator started again after convergence for the no-op window (one period plus a
    /// margin) and the latency phase. The converging operator resyncs every 3600 s: no resync counts as convergence
    /// work.
    #[arg(long, default_value_t = 30)]
    pub resync_seconds: u64,

    /// Spec changes timed in the latency phase (one every `--patch-interval-ms`).
    #[arg(long, default_value_t = 50)]
    pub patches: usize,

    /// Milliseconds between two spec changes of the latency phase.
    #[arg(long, default_value_t = 100)]
    pub patch_interval_ms: u64,
}

impl Args {
    /// The operator binary to run.
    fn operator_binary(&self) -> PathBuf {
        self.operator.clone().unwrap_or_else(|| {
            acceptance_tests::process::target_dir().join("release/model-fleet-operator")
        })
    }

    /// The bound of objects in flight (`--concurrency`).
    fn limit(&self) -> usize {
        usize::from(self.concurrency)
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let binary = args.operator_binary();
    anyhow::ensure!(
        binary.is_file(),
        "operator binary {} not found: build it with `cargo build --release -p model-fleet-operator` or pass \
         --operator PATH",
        binary.display()
    );
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let local = acceptance_tests::cluster::repo_root().join(".local");
    let mut competing = machine::competing_instances(&local, &cluster.instance);
    eprint!("{}", machine::warning(&competing));
    let rows = run_all(&runtime, &cluster, &args, &binary)?;
    // Also those started while it ran.
    competing.extend(machine::competing_instances(&local, &cluster.instance));
    competing.sort();
    competing.dedup();
    println!(
        "{}{}",
        machine::warning(&competing),
        report::render(&rows, &args)
    );
    Ok(())
}

/// Every N in turn, `--repeat` runs each; a run is printed (stderr) and appended to `--json` as soon as it is
/// measured. Returns the median run of each N ([`report::median`]).
fn run_all(
    runtime: &tokio::runtime::Runtime,
    cluster: &Cluster,
    args: &Args,
    binary: &std::path::Path,
) -> anyhow::Result<Vec<report::Row>> {
    let mut rows = Vec::new();
    for &n in &args.n {
        let mut runs = Vec::new();
        for run in 1..=args.repeat {
            eprintln!("== N = {n}, run {run} of {}", args.repeat);
            let row = runtime.block_on(run_one(cluster, args, binary, n))?;
            if let Some(path) = &args.json {
                append_json(path, &row.to_json(args))?;
            }
            eprintln!("{}", report::table(std::slice::from_ref(&row)));
            runs.push(row);
        }
        rows.push(report::median(runs));
    }
    Ok(rows)
}

/// The operator phase and the floor for one N, each in a fresh namespace deleted afterwards.
async fn run_one(
    cluster: &Cluster,
    args: &Args,
    binary: &std::path::Path,
    n: usize,
) -> anyhow::Result<report::Row> {
    let operator = operator_phase::run(cluster, args, binary, n).await?;
    // Let the API server and etcd calm down after the namespace deletion before the floor runs.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let floor = floor::run(cluster, args, n).await?;
    Ok(report::Row::new(n, operator, floor))
}

fn append_json(path: &std::path::Path, line: &serde_json::Value) -> anyhow::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    writeln!(file, "{line}")?;
    Ok(())
}
