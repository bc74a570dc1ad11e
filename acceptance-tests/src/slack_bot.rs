//! The Slack bot (`model-fleet-operator slack`) as a child process of a test, with the RBAC it ships:
//! `charts/model-fleet-operator/files/slack-rbac.yaml` applied as written, except the impersonation ClusterRole's
//! user list, which names the test's Slack users (what the chart fills from `slack.allowedUserIds`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::Cluster;
use crate::cluster::repo_root;
use crate::process::workspace_binary;
use crate::slack::FakeSlack;

/// The bot's Kubernetes user in tests (a client certificate; in a cluster, its ServiceAccount).
pub const BOT_USER: &str = "model-fleet-slack";
/// The group the bot adds to every impersonated Slack user.
pub const GROUP: &str = "model-fleet:slack-users";
/// The ClusterRoles of `slack-rbac.yaml`.
pub const READ_ROLE: &str = "model-fleet-slack";
/// The impersonation ClusterRole of `slack-rbac.yaml`.
pub const IMPERSONATE_ROLE: &str = "model-fleet-slack-impersonate";

/// The documents of `slack-rbac.yaml`, with the impersonation role's users set to `slack:<id>` of `slack_users`.
///
/// Errors: the file is missing, not YAML, or has no impersonation rule on `users`.
pub fn rbac_documents(slack_users: &[&str]) -> anyhow::Result<Vec<Value>> {
    let path = repo_root().join("charts/model-fleet-operator/files/slack-rbac.yaml");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path:?}"))?;
    let mut docs = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(&text) {
        let mut doc = Value::deserialize(doc)?;
        if doc.is_null() {
            continue;
        }
        if doc["metadata"]["name"] == IMPERSONATE_ROLE {
            let rules = doc["rules"]
                .as_array_mut()
                .context("impersonation role without rules")?;
            let users = rules
                .iter_mut()
                .find(|r| r["resources"] == json!(["users"]))
                .context("impersonation role without a rule on users")?;
            users["resourceNames"] = slack_users.iter().map(|u| format!("slack:{u}")).collect();
        }
        docs.push(doc);
    }
    Ok(docs)
}

fn apply(cluster: &Cluster, items: Vec<Value>) -> anyhow::Result<()> {
    cluster.kubectl_apply(
        &json!({"apiVersion": "v1", "kind": "List", "items": items}),
        &[
            "--server-side",
            "--force-conflicts",
            "--field-manager=acceptance-tests",
        ],
    )?;
    Ok(())
}

/// Kubeconfig of the bot's test identity [`BOT_USER`], bound cluster-wide to the shipped ClusterRoles (impersonating
/// `slack_users`). Every test of a binary must pass the same list: the ClusterRole is cluster-wide.
///
/// Errors: kubectl's message.
pub fn bot_kubeconfig(cluster: &Cluster, slack_users: &[&str]) -> anyhow::Result<PathBuf> {
    let mut items = rbac_documents(slack_users)?;
    for role in [READ_ROLE, IMPERSONATE_ROLE] {
        items.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": format!("{role}-test")},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": BOT_USER}]
        }));
    }
    apply(cluster, items)?;
    cluster.user_kubeconfig(BOT_USER, &[])
}

/// Binds `subject` (`User` or `Group` `name`) to ClusterRole `role` in namespace `ns`.
///
/// Errors: kubectl's message.
pub fn bind(cluster: &Cluster, ns: &str, subject: (&str, &str), role: &str) -> anyhow::Result<()> {
    let (kind, name) = subject;
    let binding = format!("{role}-{}", name.replace(':', "-").to_ascii_lowercase());
    apply(
        cluster,
        vec![json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": binding, "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}]
        })],
    )
}

/// A running bot; SIGTERM and wait on drop.
pub struct SlackBot {
    child: Child,
    /// Its log (JSON lines), kept for debugging and the token grep.
    pub log: PathBuf,
}

impl SlackBot {
    /// Starts `model-fleet-operator slack` against `fake` with one Socket Mode connection, the bot's `kubeconfig`,
    /// the tokens `fake` accepts plus `env` (e.g. `SLACK_ALLOWED_USER_IDS`) and `extra` flags. Returns once the
    /// bot logged its first `hello`.
    ///
    /// Errors: the binary failed to build, or the bot exited or did not connect within 30 s (log tail included).
    pub fn start(
        cluster: &Cluster,
        kubeconfig: &Path,
        fake: &FakeSlack,
        env: &[(&str, &str)],
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        let binary = workspace_binary("model-fleet-operator")?;
        let logs = cluster.dir.join("operator-logs");
        std::fs::create_dir_all(&logs)?;
        let log = logs.join(format!(
            "slack-{}-{}.log",
            std::process::id(),
            fake.api_url
                .rsplit(':')
                .next()
                .unwrap_or("0")
                .trim_end_matches("/api")
        ));
        let mut cmd = Command::new(binary);
        cmd.arg("slack")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["--slack-api-url", &fake.api_url, "--socket-connections", "1"])
            .args(extra)
            .env("RUST_LOG", "debug,hyper=info,h2=info,tower=info,kube_client=info,rustls=info,tungstenite=info,tokio_tungstenite=info")
            .env("SLACK_BOT_TOKEN", &fake.bot_token)
            .env("SLACK_APP_TOKEN", &fake.app_token)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?);
        for var in [
            "SLACK_ALLOWED_USER_IDS",
            "SLACK_ALLOWED_CHANNEL_IDS",
            "DEFAULT_WORKLOAD_NAMESPACE",
            "SLACK_PUBLIC_READ_NAMESPACES",
            "SLACK_SIGNING_SECRET",
        ] {
            cmd.env_remove(var);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().context("starting model-fleet-operator slack")?;
        let mut bot = Self { child, log };
        bot.wait_for_log("slack socket mode connected", 1, Duration::from_secs(30))?;
        Ok(bot)
    }

    /// The whole log.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until `text` appears `count` times in the log.
    ///
    /// Errors: the bot exited or `timeout` passed (log tail included).
    pub fn wait_for_log(
        &mut self,
        text: &str,
        count: usize,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.log_text().matches(text).count() >= count {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                bail!("the slack bot exited with {status}:\n{}", self.tail());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        bail!(
            "`{text}` did not appear {count} times in the bot's log within {timeout:?}:\n{}",
            self.tail()
        )
    }

    /// The last 40 lines of the log.
    pub fn tail(&self) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// SIGTERM, then waits up to 10 s; returns the exit status.
    ///
    /// Errors: it did not exit in time (then it is killed).
    pub fn terminate(&mut self) -> anyhow::Result<std::process::ExitStatus> {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        bail!(
            "the slack bot did not exit within 10 s of SIGTERM:\n{}",
            self.tail()
        )
    }
}

impl Drop for SlackBot {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.terminate();
        }
    }
}
