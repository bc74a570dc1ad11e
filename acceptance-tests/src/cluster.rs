//! Connection to a named local control plane instance (`.local/<instance>/` under the repository).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use anyhow::{Context, bail};
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::audit::AuditLog;
use crate::namespace::TestNamespace;

/// Environment variable naming the instance tests use (default `test`).
pub const INSTANCE_ENV: &str = "MODEL_FLEET_INSTANCE";

/// A running control plane instance: where its kubeconfig, audit log and binaries are.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// Instance name, e.g. `test`.
    pub instance: String,
    /// `.local/<instance>/` under the repository root.
    pub dir: PathBuf,
    /// Admin kubeconfig (client certificate in group `system:masters`).
    pub kubeconfig: PathBuf,
}

static SHARED: OnceLock<Result<Cluster, String>> = OnceLock::new();

impl Cluster {
    /// Connects to the instance named by `MODEL_FLEET_INSTANCE` (default `test`), starting it with
    /// `cluster.sh up` when it is not running (the script reuses a running instance in
    /// milliseconds). Runs once per test process; later calls return the same instance.
    ///
    /// Errors: the start-up script's failure (binaries missing: run `make bootstrap`; a component
    /// died: its log tail is in the message).
    pub fn connect() -> anyhow::Result<Cluster> {
        SHARED
            .get_or_init(|| Self::start().map_err(|e| format!("{e:#}")))
            .clone()
            .map_err(anyhow::Error::msg)
    }

    /// [`Cluster::connect`] for tests: panics with what to do when the instance cannot start.
    pub fn for_tests() -> Cluster {
        Self::connect().expect("local control plane (run `make bootstrap` once, then `make test`)")
    }

    fn start() -> anyhow::Result<Cluster> {
        let instance = std::env::var(INSTANCE_ENV).unwrap_or_else(|_| "test".to_owned());
        Self::launch(&instance, &[], true)
    }

    /// Starts (or reuses) the instance `instance` with `cluster.sh up INSTANCE ARGS`, without a real node
    /// (`MODEL_FLEET_REAL_NODE=0`: simulated nodes only), and connects to it: for tests that need a second cluster
    /// (another cluster's identity, one without the upstream CRDs). The caller stops it with [`Cluster::down`].
    ///
    /// Errors: the start-up script's failure, with its output.
    pub fn up(instance: &str, args: &[&str]) -> anyhow::Result<Cluster> {
        Self::launch(instance, args, false)
    }

    fn launch(instance: &str, args: &[&str], real_node: bool) -> anyhow::Result<Cluster> {
        let mut command = Command::new("bash");
        command
            .arg(repo_root().join("acceptance-tests/cluster/scripts/cluster.sh"))
            .args(["up", instance])
            .args(args);
        if !real_node {
            command.env("MODEL_FLEET_REAL_NODE", "0");
        }
        let out = command.output().context("running cluster.sh up")?;
        if !out.status.success() {
            bail!(
                "cluster.sh up {instance} failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let kubeconfig = PathBuf::from(String::from_utf8(out.stdout)?.trim());
        let dir = kubeconfig
            .parent()
            .context("kubeconfig path has no parent")?
            .to_path_buf();
        Ok(Cluster {
            instance: instance.to_owned(),
            dir,
            kubeconfig,
        })
    }

    /// Stops this instance and removes its data (`cluster.sh down`).
    ///
    /// Errors: the script's failure, with its output.
    pub fn down(&self) -> anyhow::Result<()> {
        let out = Command::new("bash")
            .arg(repo_root().join("acceptance-tests/cluster/scripts/cluster.sh"))
            .args(["down", &self.instance])
            .output()
            .context("running cluster.sh down")?;
        if !out.status.success() {
            bail!(
                "cluster.sh down {} failed:\n{}",
                self.instance,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    /// The UID of the instance's `kube-system` Namespace: the cluster identity the provider records.
    ///
    /// Errors: kubectl's failure.
    pub fn identity(&self) -> anyhow::Result<String> {
        self.kubectl_ok(&[
            "get",
            "namespace",
            "kube-system",
            "-o",
            "jsonpath={.metadata.uid}",
        ])
    }

    /// A new admin client (group `system:masters`) for the calling test's runtime.
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        client_from_kubeconfig(&self.kubeconfig, |_| {}).await
    }

    /// A client that impersonates `user` (and `groups`) through the admin credentials, as
    /// `kubectl --as` does: RBAC then decides as for that user.
    pub async fn impersonating(&self, user: &str, groups: &[&str]) -> anyhow::Result<kube::Client> {
        let groups: Vec<String> = groups.iter().map(|g| (*g).to_owned()).collect();
        client_from_kubeconfig(&self.kubeconfig, |config| {
            config.auth_info.impersonate = Some(user.to_owned());
            config.auth_info.impersonate_groups = Some(groups.clone());
        })
        .await
    }

    /// Kubeconfig authenticating as `user` with `groups` by a client certificate signed by the
    /// instance CA (created once, then reused). Audit entries carry exactly this user name.
    pub fn user_kubeconfig(&self, user: &str, groups: &[&str]) -> anyhow::Result<PathBuf> {
        let out = Command::new("bash")
            .arg(repo_root().join("acceptance-tests/cluster/scripts/cluster.sh"))
            .args(["kubeconfig", &self.instance, user])
            .args(groups)
            .output()
            .context("running cluster.sh kubeconfig")?;
        if !out.status.success() {
            bail!(
                "cluster.sh kubeconfig failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(PathBuf::from(String::from_utf8(out.stdout)?.trim()))
    }

    /// A client authenticating as `user` in `groups` (see [`Cluster::user_kubeconfig`]).
    pub async fn user_client(&self, user: &str, groups: &[&str]) -> anyhow::Result<kube::Client> {
        client_from_kubeconfig(&self.user_kubeconfig(user, groups)?, |_| {}).await
    }

    /// `kubectl` of the pinned Kubernetes version, pointed at this instance as admin.
    pub fn kubectl(&self) -> Command {
        let mut cmd = Command::new(self.dir.join("bin/kubectl"));
        cmd.env("KUBECONFIG", &self.kubeconfig);
        cmd
    }

    /// Runs `kubectl ARGS` and returns its stdout; fails with stderr when it exits non-zero.
    pub fn kubectl_ok(&self, args: &[&str]) -> anyhow::Result<String> {
        let out = self
            .kubectl()
            .args(args)
            .output()
            .context("running kubectl")?;
        if !out.status.success() {
            bail!(
                "kubectl {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(String::from_utf8(out.stdout)?)
    }

    /// Runs `kubectl apply ARGS -f FILE` with `objects` (one object or a `List`, as JSON) written to a file of its
    /// own, so parallel tests applying objects of the same name never read each other's half-written file.
    ///
    /// Errors: the temporary file's I/O error, or kubectl's stderr.
    pub fn kubectl_apply(
        &self,
        objects: &serde_json::Value,
        args: &[&str],
    ) -> anyhow::Result<String> {
        let file = tempfile::Builder::new().suffix(".json").tempfile()?;
        std::fs::write(file.path(), objects.to_string())?;
        let path = file.path().to_str().context("non UTF-8 temporary path")?;
        let mut all = vec!["apply"];
        all.extend_from_slice(args);
        all.extend(["-f", path]);
        self.kubectl_ok(&all)
    }

    /// The instance's audit log (one JSON line per write request).
    pub fn audit_log(&self) -> AuditLog {
        AuditLog::new(self.dir.join("audit.log"))
    }

    /// Creates a namespace `<prefix>-<random suffix>` that is deleted when the value is dropped.
    pub async fn namespace(&self, prefix: &str) -> anyhow::Result<TestNamespace> {
        TestNamespace::create(self, prefix).await
    }
}

/// A control plane instance of one test (`cluster.sh up NAME ARGS`), stopped with `cluster.sh down NAME` when dropped.
/// Derefs to its [`Cluster`].
#[derive(Debug)]
pub struct PrivateCluster {
    cluster: Cluster,
}

impl PrivateCluster {
    /// Starts (or reuses) instance `<shared instance>-<suffix>` (the shared instance is `MODEL_FLEET_INSTANCE`,
    /// default `test`, so two test runs on one machine never share it) with `cluster.sh up` arguments `args`, e.g.
    /// `--no-upstream-crds`.
    ///
    /// Errors: the start-up script failed (its stderr is in the message).
    pub fn start(suffix: &str, args: &[&str]) -> anyhow::Result<Self> {
        let shared = std::env::var(INSTANCE_ENV).unwrap_or_else(|_| "test".to_owned());
        let instance = &format!("{shared}-{suffix}");
        let out = Command::new("bash")
            .arg(repo_root().join("acceptance-tests/cluster/scripts/cluster.sh"))
            .args(["up", instance])
            .args(args)
            .output()
            .context("running cluster.sh up")?;
        if !out.status.success() {
            bail!(
                "cluster.sh up {instance} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let kubeconfig = PathBuf::from(String::from_utf8(out.stdout)?.trim());
        let cluster = Cluster {
            instance: instance.to_owned(),
            dir: repo_root().join(".local").join(instance),
            kubeconfig,
        };
        Ok(Self { cluster })
    }
}

impl std::ops::Deref for PrivateCluster {
    type Target = Cluster;

    fn deref(&self) -> &Cluster {
        &self.cluster
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(repo_root().join("acceptance-tests/cluster/scripts/cluster.sh"))
            .args(["down", &self.cluster.instance])
            .output();
    }
}

/// Root of the repository (the workspace folder holding `acceptance-tests/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("acceptance-tests lives in the repository root")
        .to_path_buf()
}

async fn client_from_kubeconfig(
    path: &Path,
    adjust: impl FnOnce(&mut kube::Config),
) -> anyhow::Result<kube::Client> {
    let kubeconfig = Kubeconfig::read_from(path)
        .with_context(|| format!("reading kubeconfig {}", path.display()))?;
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .context("loading kubeconfig")?;
    adjust(&mut config);
    Ok(kube::Client::try_from(config)?)
}
