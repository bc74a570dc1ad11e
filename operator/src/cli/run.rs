//! The `run` subcommand: the controllers, leader election and the metrics/health server.
//!
//! Out of cluster with `--kubeconfig PATH`; otherwise the client is inferred (`$KUBECONFIG` / `~/.kube/config`
//! when present, else the in-cluster service account; [`super::kube_config`]). The bound metrics address is logged
//! (`metrics server listening`, field `address`) so tests using `--metrics-bind-address 127.0.0.1:0` can find the
//! port.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use kube::Client;

use model_fleet_api::render::{GatewayRef, RenderConfig};
use model_fleet_operator::controller::context::DEFAULT_MAX_CONCURRENT_RECONCILES;
use model_fleet_operator::controller::failpoint::Failpoint;
use model_fleet_operator::controller::inference::PROGRESS_REQUEUE;
use model_fleet_operator::controller::leader::{
    DEFAULT_LEASE_DURATION_SECONDS, DEFAULT_LEASE_GRACE_SECONDS, LeaseSettings, default_identity,
};
use model_fleet_operator::controller::runtime::{self, ControllerSpec};
use model_fleet_operator::controller::{Context, OperatorConfig};
use model_fleet_operator::controller::{dataset, inference, training};
use model_fleet_operator::telemetry::server::{self, ServerState};
use model_fleet_operator::telemetry::{Health, LogFormat, Metrics, logging};

use super::http_add_on::{HttpAddOnArgs, HttpAddOnMode};

/// Arguments of `model-fleet-operator run`.
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct RunArgs {
    /// Kubeconfig file to use (out of cluster). Without it: $KUBECONFIG or ~/.kube/config when present, else the
    /// in-cluster service account.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// Kubeconfig context to use with --kubeconfig (default: its current context).
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    pub context: Option<String>,

    /// Watch only this namespace (default: all namespaces).
    #[arg(long, value_name = "NAMESPACE")]
    pub watch_namespace: Option<String>,

    /// Name of the coordination.k8s.io Lease used for leader election.
    #[arg(long, value_name = "NAME", default_value = "model-fleet-operator")]
    pub lease_name: String,

    /// Namespace of the Lease (default: the client's namespace, i.e. the pod's namespace in cluster).
    #[arg(long, value_name = "NAMESPACE")]
    pub lease_namespace: Option<String>,

    /// Lease duration in seconds: a crashed leader is replaced within about this long.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_LEASE_DURATION_SECONDS,
          value_parser = clap::value_parser!(u64).range(2..))]
    pub lease_duration_seconds: u64,

    /// Gateway (NAMESPACE/NAME) that HTTPRoutes attach to when an InferenceService names none.
    #[arg(long, value_name = "NAMESPACE/NAME", value_parser = parse_gateway)]
    pub default_gateway: Option<GatewayRef>,

    /// Address of the /metrics, /healthz and /readyz server (port 0 picks a free port; the bound address is logged).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:8080")]
    pub metrics_bind_address: SocketAddr,

    /// Seconds after which a settled object is reconciled again without a change (tests use a few seconds).
    #[arg(long, value_name = "SECONDS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    pub resync_seconds: u64,

    /// Reconciles each controller runs at once (kube-rs `controller::Config::concurrency`; controller-runtime calls it
    /// MaxConcurrentReconciles). Bounded so a burst of thousands of objects queues here instead of flooding the API
    /// server past its in-flight limit (it answers 429 and every request waits for its Retry-After).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONCURRENT_RECONCILES,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub max_concurrent_reconciles: u16,

    /// Log format (filter with RUST_LOG, default `info`).
    #[arg(long, value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,

    /// Test hook: exit abruptly (code 86) when this point is reached, as a crash would.
    #[arg(long, value_enum, value_name = "POINT", hide = true)]
    pub test_failpoint: Option<Failpoint>,

    /// Test hook: seconds after which an InferenceService that is not settled (a rollout under way, pods waiting for
    /// a node, a hostname conflict) is reconciled again without a change; default 10. A test that proves a watch
    /// event starts a reconcile sets it far beyond its own wait.
    #[arg(long, value_name = "SECONDS", default_value_t = PROGRESS_REQUEUE.as_secs(), hide = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub test_progress_requeue_seconds: u64,

    /// Test hook: a built-in default `NAME=VALUE` added to every container of TrainingRun Jobs created from now on
    /// (repeatable; names a container sets itself win), to prove a changed default never touches existing Jobs.
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_env_pair, hide = true)]
    pub test_training_default_env: Vec<(String, String)>,

    /// `auto`: use the KEDA HTTP add-on for services with scaling.http wherever its CRDs are installed;
    /// `disabled`: never (they report DependencyMissing; the chart's default, until httpAddOn.enabled).
    #[arg(long = "http-add-on", value_enum, value_name = "MODE", default_value_t = HttpAddOnMode::Auto)]
    pub http_add_on_mode: HttpAddOnMode,

    #[command(flatten)]
    pub http_add_on: HttpAddOnArgs,
}

fn parse_env_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!("expected NAME=VALUE, got {text:?}")),
    }
}

fn parse_gateway(text: &str) -> Result<GatewayRef, String> {
    text.parse()
}

impl RunArgs {
    /// Lease settings from the flags; `client_namespace` is the default Lease namespace.
    pub fn lease_settings(&self, client_namespace: &str, identity: String) -> LeaseSettings {
        LeaseSettings {
            name: self.lease_name.clone(),
            namespace: self
                .lease_namespace
                .clone()
                .unwrap_or_else(|| client_namespace.to_owned()),
            identity,
            duration_seconds: self.lease_duration_seconds,
            // Renew with a third of the duration left, at least 1 s before expiry.
            grace_seconds: DEFAULT_LEASE_GRACE_SECONDS
                .min(self.lease_duration_seconds / 3)
                .max(1),
        }
    }
}

/// Entry point of `model-fleet-operator run`: starts a multi-threaded tokio runtime and runs until SIGTERM/SIGINT.
///
/// # Errors
/// Bad kubeconfig, unbindable metrics address, Lease not usable, or the Lease loop dying.
pub fn main(args: RunArgs) -> anyhow::Result<()> {
    logging::init(args.log_format)?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?
        .block_on(run(args))
}

async fn run(args: RunArgs) -> anyhow::Result<()> {
    let client = client(&args).await?;
    let identity = default_identity();
    let lease = args.lease_settings(client.default_namespace(), identity.clone());
    let config = OperatorConfig {
        render: RenderConfig {
            default_gateway: args.default_gateway.clone(),
            training_default_env: args.test_training_default_env.clone(),
            http_add_on: args.http_add_on.add_on(),
        },
        failpoint: args.test_failpoint,
        watch_namespace: args.watch_namespace.clone(),
        identity,
        resync: std::time::Duration::from_secs(args.resync_seconds),
        progress_requeue: std::time::Duration::from_secs(args.test_progress_requeue_seconds),
        max_concurrent_reconciles: args.max_concurrent_reconciles,
        http_add_on_enabled: args.http_add_on_mode == HttpAddOnMode::Auto,
    };
    let controllers = controllers();
    let metrics = Metrics::new();
    let health = Arc::new(Health::new(controllers.len()));
    let ctx = Arc::new(Context::new(
        client,
        metrics.clone(),
        health.clone(),
        config,
    ));

    let (listener, address) = server::bind(args.metrics_bind_address)
        .await
        .with_context(|| {
            format!(
                "binding the metrics server to {}",
                args.metrics_bind_address
            )
        })?;
    tracing::info!(%address, "metrics server listening");
    let (stop_server, server_stopped) = tokio::sync::oneshot::channel::<()>();
    let state = ServerState { metrics, health };
    let server = tokio::spawn(server::serve(listener, state, async {
        let _ = server_stopped.await;
    }));

    tracing::info!(
        watch_namespace = ctx.config.watch_namespace.as_deref().unwrap_or("<all>"),
        default_gateway = ctx.config.render.default_gateway.as_ref().map(ToString::to_string).unwrap_or_default(),
        lease = %lease.name,
        lease_namespace = %lease.namespace,
        "operator starting"
    );
    let result = runtime::run(ctx, lease, controllers, shutdown_signal()).await;
    let _ = stop_server.send(());
    match server.await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::warn!(%error, "metrics server failed"),
        Err(error) => tracing::warn!(%error, "metrics server task panicked"),
    }
    tracing::info!("operator stopped");
    result
}

/// The controllers this binary runs while leading.
fn controllers() -> Vec<ControllerSpec> {
    vec![
        inference::controller(),
        training::controller(),
        dataset::controller(),
    ]
}

async fn client(args: &RunArgs) -> anyhow::Result<Client> {
    let config = super::kube_config(args.kubeconfig.as_deref(), args.context.clone()).await?;
    Client::try_from(config).context("building the Kubernetes client")
}

/// Completes on SIGTERM (Kubernetes stopping the pod) or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    let interrupt = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT received: shutting down"),
        () = terminate => tracing::info!("SIGTERM received: shutting down"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Wrapper {
        #[command(flatten)]
        args: RunArgs,
    }

    fn parse(argv: &[&str]) -> Result<RunArgs, clap::Error> {
        Wrapper::try_parse_from(std::iter::once("run").chain(argv.iter().copied())).map(|w| w.args)
    }

    #[test]
    fn defaults() {
        let args = parse(&[]).unwrap();
        assert_eq!(args.kubeconfig, None);
        assert_eq!(args.watch_namespace, None);
        assert_eq!(args.lease_name, "model-fleet-operator");
        assert_eq!(args.lease_namespace, None);
        assert_eq!(args.default_gateway, None);
        assert_eq!(args.metrics_bind_address, "0.0.0.0:8080".parse().unwrap());
        assert_eq!(args.log_format, LogFormat::Json);
        assert_eq!(args.resync_seconds, 300);
        assert_eq!(
            args.max_concurrent_reconciles,
            DEFAULT_MAX_CONCURRENT_RECONCILES
        );
        assert_eq!(args.http_add_on_mode, HttpAddOnMode::Auto);
        let lease = args.lease_settings("operators", "me".into());
        assert_eq!(lease.namespace, "operators");
        assert_eq!((lease.duration_seconds, lease.grace_seconds), (15, 5));
    }

    #[test]
    fn all_flags() {
        let args = parse(&[
            "--kubeconfig",
            "/tmp/kc",
            "--watch-namespace",
            "team-a",
            "--lease-name",
            "test-lease",
            "--lease-namespace",
            "leases",
            "--lease-duration-seconds",
            "6",
            "--default-gateway",
            "gateway-system/shared",
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--log-format",
            "text",
            "--http-add-on",
            "disabled",
        ])
        .unwrap();
        assert_eq!(args.kubeconfig, Some(PathBuf::from("/tmp/kc")));
        assert_eq!(args.watch_namespace.as_deref(), Some("team-a"));
        assert_eq!(
            args.default_gateway.as_ref().unwrap().to_string(),
            "gateway-system/shared"
        );
        assert_eq!(args.metrics_bind_address.port(), 0);
        assert_eq!(args.log_format, LogFormat::Text);
        assert_eq!(args.http_add_on_mode, HttpAddOnMode::Disabled);
        let lease = args.lease_settings("default", "me".into());
        assert_eq!(lease.name, "test-lease");
        assert_eq!(lease.namespace, "leases");
        assert_eq!((lease.duration_seconds, lease.grace_seconds), (6, 2));
    }

    #[test]
    fn refuses_bad_values() {
        assert!(parse(&["--default-gateway", "shared"]).is_err());
        assert!(parse(&["--metrics-bind-address", "localhost"]).is_err());
        assert!(parse(&["--http-add-on", "off"]).is_err());
        assert!(parse(&["--log-format", "xml"]).is_err());
        assert!(parse(&["--lease-duration-seconds", "1"]).is_err());
        assert!(
            parse(&["--context", "kind"]).is_err(),
            "--context needs --kubeconfig"
        );
    }
}
