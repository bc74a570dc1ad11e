//! The workspace's own binaries (operator, provider) as child processes of a test.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::Cluster;
use crate::cluster::repo_root;

static BUILT: OnceLock<Mutex<Vec<String>>> = OnceLock::new();

/// Path of workspace binary `name` (e.g. `model-fleet-operator`), built first with
/// `cargo build --bin NAME` once per test process so a test never runs a stale binary.
///
/// Errors: the build failed (its stderr is in the message).
pub fn workspace_binary(name: &str) -> anyhow::Result<PathBuf> {
    let built = BUILT.get_or_init(|| Mutex::new(Vec::new()));
    let mut built = built.lock().expect("build lock");
    if !built.iter().any(|b| b == name) {
        let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(repo_root())
            .args(["build", "--bin", name])
            .output()
            .context("running cargo build")?;
        if !out.status.success() {
            bail!(
                "cargo build --bin {name} failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        built.push(name.to_owned());
    }
    Ok(target_dir().join("debug").join(name))
}

/// Cargo's target folder: `$CARGO_TARGET_DIR` or `<repo>/target`.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
}

/// User name the operator runs as in tests (a client certificate from the instance CA).
pub const OPERATOR_USER: &str = "model-fleet-operator";

/// Kubeconfig of the operator's test identity: user [`OPERATOR_USER`] bound to the chart's rules
/// (`charts/model-fleet-operator/files/rbac/`, [`crate::rbac`]), so tests prove the chart grants what the operator
/// needs, and audit entries name the operator.
///
/// Errors: kubectl's message.
pub fn operator_kubeconfig(cluster: &Cluster) -> anyhow::Result<PathBuf> {
    crate::rbac::kubeconfig_with_rules(cluster, OPERATOR_USER, &crate::rbac::operator_rules()?)
}

/// An operator (`model-fleet-operator run`) started by a test; SIGTERM and wait on drop.
#[derive(Debug)]
pub struct OperatorProcess {
    child: Child,
    /// The operator's log (JSON lines), kept after the test for debugging.
    pub log: PathBuf,
    /// Address of its /metrics, /healthz and /readyz server.
    pub metrics_address: String,
}

impl OperatorProcess {
    /// The usual operator of a test: the chart's ClusterRole ([`operator_kubeconfig`]), watching `namespace` on
    /// Lease `fleet`, resyncing every 5 s, plus `extra` flags.
    ///
    /// Errors: those of [`operator_kubeconfig`] and [`OperatorProcess::start`].
    pub fn for_namespace(
        cluster: &Cluster,
        namespace: &str,
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        let kubeconfig = operator_kubeconfig(cluster)?;
        let mut flags = vec!["--resync-seconds", "5"];
        flags.extend_from_slice(extra);
        Self::start(cluster, &kubeconfig, namespace, "fleet", &flags, &[])
    }

    /// Starts the operator out of cluster with `kubeconfig`, watching only `namespace`, on Lease
    /// `lease` in that namespace, with a free metrics port, plus `extra` flags and `env`.
    /// Returns once the metrics server listens.
    ///
    /// Errors: the binary failed to build or start, or exited / did not listen within 30 s (the
    /// log tail is in the message).
    pub fn start(
        cluster: &Cluster,
        kubeconfig: &std::path::Path,
        namespace: &str,
        lease: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let binary = workspace_binary("model-fleet-operator")?;
        Self::start_binary(cluster, &binary, kubeconfig, namespace, lease, extra, env)
    }

    /// [`OperatorProcess::start`] with a given operator binary (e.g. a release build for a benchmark) instead of
    /// the freshly built debug one.
    ///
    /// Errors: the binary did not start, or exited / did not listen within 30 s (the log tail is in the message).
    pub fn start_binary(
        cluster: &Cluster,
        binary: &std::path::Path,
        kubeconfig: &std::path::Path,
        namespace: &str,
        lease: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let lease = (namespace, lease);
        Self::spawn(
            cluster,
            binary,
            kubeconfig,
            Some(namespace),
            lease,
            extra,
            env,
        )
    }

    /// Starts the operator watching every namespace, as the chart installs it, on Lease `fleet` in
    /// `lease_namespace`, plus `extra` flags. Only for a private instance: on the shared one it would reconcile
    /// other tests' objects.
    ///
    /// Errors: as [`OperatorProcess::start`].
    pub fn start_cluster_wide(
        cluster: &Cluster,
        kubeconfig: &std::path::Path,
        lease_namespace: &str,
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        let binary = workspace_binary("model-fleet-operator")?;
        let lease = (lease_namespace, "fleet");
        Self::spawn(cluster, &binary, kubeconfig, None, lease, extra, &[])
    }

    /// Spawns `binary run`, watching `watch` (every namespace when `None`), on Lease `(namespace, name)`.
    fn spawn(
        cluster: &Cluster,
        binary: &std::path::Path,
        kubeconfig: &std::path::Path,
        watch: Option<&str>,
        (namespace, lease): (&str, &str),
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let logs = cluster.dir.join("operator-logs");
        std::fs::create_dir_all(&logs)?;
        // One file per operator: two operators of one test (leader election) must not share one.
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let log = logs.join(format!(
            "{namespace}-{lease}-{}-{n}.log",
            std::process::id()
        ));
        let mut cmd = Command::new(binary);
        cmd.arg("run")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(
                watch
                    .map(|w| ["--watch-namespace", w])
                    .into_iter()
                    .flatten(),
            )
            .args(["--lease-name", lease, "--lease-namespace", namespace])
            .args(["--metrics-bind-address", "127.0.0.1:0"])
            .args(extra)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().context("starting model-fleet-operator")?;
        let mut process = Self {
            child,
            log,
            metrics_address: String::new(),
        };
        process.metrics_address = process.wait_for_metrics_address()?;
        Ok(process)
    }

    fn wait_for_metrics_address(&mut self) -> anyhow::Result<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                bail!("operator exited with {status}:\n{}", self.log_tail());
            }
            let file = std::fs::File::open(&self.log)?;
            for line in BufReader::new(file).lines() {
                let line = line?;
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                    let fields = v.get("fields").unwrap_or(&v);
                    let is_listen = fields.get("message").and_then(|m| m.as_str())
                        == Some("metrics server listening");
                    if let (true, Some(addr)) = (is_listen, fields.get("address")) {
                        return Ok(addr.as_str().unwrap_or_default().to_owned());
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        bail!(
            "operator did not report its metrics address in 30 s:\n{}",
            self.log_tail()
        )
    }

    /// The operator's process id (to read its `/proc/PID/status` and `/proc/PID/stat`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last 40 lines of the operator's log.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Waits until `/readyz` answers 200 (leading, every controller's cache synced), up to 60 s.
    ///
    /// Errors: the timeout, with the log tail.
    pub async fn wait_ready(&self) -> anyhow::Result<()> {
        crate::wait_for(
            "the operator ready (/readyz 200)",
            Duration::from_secs(60),
            || async {
                Ok(self
                    .http_get("/readyz")
                    .ok()
                    .filter(|(code, _)| *code == 200)
                    .map(|_| ()))
            },
        )
        .await
        .map_err(|e| e.context(self.log_tail()))
    }

    /// Body of GET `path` on the metrics server (`/metrics`, `/healthz`, `/readyz`).
    pub fn http_get(&self, path: &str) -> anyhow::Result<(u16, String)> {
        let out = Command::new("curl")
            .args(["-s", "-o", "-", "-w", "\n%{http_code}", "--max-time", "5"])
            .arg(format!("http://{}{path}", self.metrics_address))
            .output()?;
        let text = String::from_utf8(out.stdout)?;
        let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
        Ok((code.trim().parse().unwrap_or(0), body.to_owned()))
    }

    /// Sends SIGKILL (a crash) and waits for the process to end.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits up to `timeout` for a clean exit; returns the exit status.
    pub fn terminate(&mut self, timeout: Duration) -> anyhow::Result<std::process::ExitStatus> {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status()?;
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.kill();
        bail!(
            "operator did not exit within {timeout:?} of SIGTERM:\n{}",
            self.log_tail()
        )
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }
}

impl Drop for OperatorProcess {
    fn drop(&mut self) {
        if !self.exited() {
            let _ = self.terminate(Duration::from_secs(10));
        }
    }
}
