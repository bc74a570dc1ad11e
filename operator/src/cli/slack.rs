//! The `slack` subcommand: the `/fleet` bot over Socket Mode (docs/SLACK.md).
//!
//! Credentials come only from the environment (`SLACK_BOT_TOKEN`, `SLACK_APP_TOKEN`, optional
//! `SLACK_SIGNING_SECRET`); the settings from flags or their environment variables. On start the bot checks its
//! tokens with `auth.test` and `apps.connections.open` (a wrong token fails here, with the variable's name), logs
//! `slack bot starting`, opens its Socket Mode connections and runs until SIGTERM/SIGINT.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use kube::runtime::events::Reporter;
use slack_morphism::prelude::SlackApiAppsConnectionOpenRequest;
use tokio_util::task::TaskTracker;

use model_fleet_operator::slack::access::Clients;
use model_fleet_operator::slack::config::{Credentials, Policy};
use model_fleet_operator::slack::envelope::Dedup;
use model_fleet_operator::slack::handler::{Bot, BotUser};
use model_fleet_operator::slack::post::{self, DEFAULT_API_URL, Poster};
use model_fleet_operator::slack::socket::Transport;
use model_fleet_operator::telemetry::{LogFormat, logging};

/// Arguments of `model-fleet-operator slack`.
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct SlackArgs {
    /// Kubeconfig file to use (out of cluster). Without it: $KUBECONFIG or ~/.kube/config when present, else the
    /// in-cluster service account.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// Slack users (ids such as U012AB3CD, comma separated) whose commands run impersonated as `slack:<id>` and may
    /// change things. Empty: read-only for everyone.
    #[arg(
        long,
        env = "SLACK_ALLOWED_USER_IDS",
        default_value = "",
        value_name = "IDS"
    )]
    pub allowed_user_ids: String,

    /// Channels (and DM ids) where commands other than `help` run. Empty: everywhere the app is.
    #[arg(
        long,
        env = "SLACK_ALLOWED_CHANNEL_IDS",
        default_value = "",
        value_name = "IDS"
    )]
    pub allowed_channel_ids: String,

    /// Namespace of names given without NAMESPACE/.
    #[arg(
        long,
        env = "DEFAULT_WORKLOAD_NAMESPACE",
        default_value = "default",
        value_name = "NAMESPACE"
    )]
    pub default_workload_namespace: String,

    /// Namespaces people outside the allowlist may read (comma separated; `*` for all). Their reads run as the bot,
    /// whose read access reaches every namespace. Empty: the default namespace only.
    #[arg(
        long,
        env = "SLACK_PUBLIC_READ_NAMESPACES",
        default_value = "",
        value_name = "NAMESPACES"
    )]
    pub public_read_namespaces: String,

    /// Groups added to the impersonated `slack:<id>` user (comma separated).
    #[arg(
        long,
        env = "SLACK_IMPERSONATION_GROUPS",
        value_delimiter = ',',
        default_value = "model-fleet:slack-users",
        value_name = "GROUPS"
    )]
    pub impersonation_groups: Vec<String>,

    /// Slack Web API base URL (a proxy; tests use a loopback endpoint). http only to loopback.
    #[arg(long, env = "SLACK_API_URL", default_value = DEFAULT_API_URL, value_name = "URL")]
    pub slack_api_url: String,

    /// Socket Mode connections to keep open (1-10; Slack spreads envelopes over them).
    #[arg(long, env = "SLACK_SOCKET_CONNECTIONS", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(1..=10), value_name = "N")]
    pub socket_connections: u32,

    /// Log format (filter with RUST_LOG, default `info`).
    #[arg(long, value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,

    /// Test hook: wait this many seconds before the Kubernetes calls of every command (to act mid-command).
    #[arg(long, value_name = "SECONDS", default_value_t = 0, hide = true)]
    pub test_command_delay_seconds: u64,
}

/// Entry point of `model-fleet-operator slack`.
///
/// # Errors
/// A missing or malformed credential or setting (named), a token Slack refuses, a bad kubeconfig.
pub fn main(args: SlackArgs) -> anyhow::Result<()> {
    logging::init(args.log_format)?;
    let credentials = Credentials::from_lookup(|name| std::env::var(name).ok())?;
    let groups: Vec<String> = args
        .impersonation_groups
        .iter()
        .map(|g| g.trim().to_owned())
        .filter(|g| !g.is_empty())
        .collect();
    let policy = Policy::parse(
        &args.allowed_user_ids,
        &args.allowed_channel_ids,
        &args.default_workload_namespace,
        groups,
    )?
    .with_public_read(&args.public_read_namespaces)?;
    post::check_api_url(&args.slack_api_url)?;
    // One TLS provider for the Web API, the WebSocket and the Kubernetes client (ring; already set is fine).
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?
        .block_on(run(args, credentials, policy))
}

async fn run(args: SlackArgs, credentials: Credentials, policy: Policy) -> anyhow::Result<()> {
    let clients = Clients::new(super::kube_config(args.kubeconfig.as_deref(), None).await?)
        .context("building the Kubernetes client")?;
    let slack = post::client(&args.slack_api_url)?;
    let bot_token = post::token(&credentials.bot_token);
    let me = slack
        .open_session(&bot_token)
        .auth_test()
        .await
        .map_err(|e| anyhow::anyhow!("SLACK_BOT_TOKEN was refused by auth.test: {e}"))?;
    // slack-morphism retries a refused app token forever without naming it: prove it once here.
    let app_token = post::token(&credentials.app_token);
    slack
        .open_session(&app_token)
        .apps_connections_open(&SlackApiAppsConnectionOpenRequest::new())
        .await
        .map_err(|e| {
            anyhow::anyhow!("SLACK_APP_TOKEN was refused by apps.connections.open: {e}")
        })?;
    let user = BotUser {
        id: me.user_id.0.clone(),
        name: me.user.clone().unwrap_or_else(|| "fleet".to_owned()),
    };
    tracing::info!(team = %me.team, bot_user = %user.id, allowed_users = policy.allowed_users.len(),
        allowed_channels = policy.allowed_channels.as_ref().map_or(0, |c| c.len()),
        default_namespace = %policy.default_namespace, impersonation_groups = ?policy.impersonation_groups,
        slack_api_url = %args.slack_api_url, "slack bot starting");
    let reporter = Reporter {
        controller: model_fleet_operator::slack::actions::FIELD_MANAGER.to_owned(),
        instance: std::env::var("POD_NAME").ok(),
    };
    let bot = Arc::new(Bot {
        reporter,
        poster: Poster::new(slack.clone(), &credentials.bot_token),
        policy,
        clients,
        user,
        delay: Duration::from_secs(args.test_command_delay_seconds),
        dedup: Mutex::new(Dedup::default()),
        tasks: TaskTracker::new(),
    });
    let transport = Transport::start(slack, app_token, args.socket_connections, bot.clone())
        .await
        .context("starting the Socket Mode connections")?;
    shutdown_signal().await;
    transport.shutdown().await;
    let cut = bot.drain(SHUTDOWN_GRACE).await;
    if cut > 0 {
        tracing::warn!(
            commands = cut,
            grace_seconds = SHUTDOWN_GRACE.as_secs(),
            "commands still running at shutdown were cut short: their replies are lost"
        );
    }
    tracing::info!("slack bot stopped");
    Ok(())
}

/// How long a stopping bot lets running commands finish: within Kubernetes' default 30 s termination grace, and
/// longer than one call's [`model_fleet_operator::slack::access::API_TIMEOUT`].
const SHUTDOWN_GRACE: Duration = Duration::from_secs(25);

/// Completes on SIGTERM (Kubernetes stopping the pod) or SIGINT.
async fn shutdown_signal() {
    let mut terminate =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
    tokio::select! {
        _ = terminate.recv() => tracing::info!("SIGTERM received: shutting down"),
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT received: shutting down"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Wrapper {
        #[command(flatten)]
        args: SlackArgs,
    }

    #[test]
    fn defaults_and_limits() {
        let args = Wrapper::try_parse_from(["slack"]).unwrap().args;
        assert_eq!(args.slack_api_url, DEFAULT_API_URL);
        assert_eq!(args.socket_connections, 2);
        assert_eq!(
            args.impersonation_groups,
            vec!["model-fleet:slack-users".to_owned()]
        );
        assert!(Wrapper::try_parse_from(["slack", "--socket-connections", "11"]).is_err());
        let args = Wrapper::try_parse_from(["slack", "--impersonation-groups", "a,b"])
            .unwrap()
            .args;
        assert_eq!(
            args.impersonation_groups,
            vec!["a".to_owned(), "b".to_owned()]
        );
    }
}
