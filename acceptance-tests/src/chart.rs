//! The Helm chart `charts/model-fleet-operator` under test: the pinned helm CLI (built by
//! `make bootstrap`, `acceptance-tests/infra/scripts/build.sh`), `helm template`/`lint` with the
//! control plane's Kubernetes version, and the values that place the operator on the local
//! cluster's real node with the image of `make image`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::cluster::repo_root;
use crate::real_node::NODE_LABEL;

/// The chart's folder, relative to the repository root.
pub const CHART: &str = "charts/model-fleet-operator";
/// The four platform profiles (`profiles/<name>.yaml`).
pub const PROFILES: [&str; 4] = ["kind", "microk8s", "eks", "gke"];
/// Repository of the operator image as loaded into a local instance's real node
/// (`images/operator.sh load`).
pub const LOCAL_IMAGE_REPOSITORY: &str = "modelfleet.local/model-fleet-operator";

fn infra_shell(expr: &str) -> anyhow::Result<String> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source acceptance-tests/infra/scripts/lib.sh && {expr}"
        ))
        .current_dir(repo_root())
        .output()
        .context("running bash")?;
    if !out.status.success() {
        bail!("{expr}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The pinned helm CLI.
///
/// Errors when it was not built: the message says to run `make bootstrap`.
pub fn helm_binary() -> anyhow::Result<PathBuf> {
    let path = PathBuf::from(infra_shell("helm_bin")?);
    if !path.is_file() {
        bail!(
            "the helm CLI is missing ({}): run make bootstrap (acceptance-tests/infra/scripts/build.sh builds it)",
            path.display()
        );
    }
    Ok(path)
}

/// The control plane's Kubernetes version without the `v` (`KUBERNETES_VERSION` of
/// `cluster/versions.env`), passed to `helm template --kube-version` and `helm lint`.
pub fn kubernetes_version() -> anyhow::Result<String> {
    let v = infra_shell("echo \"$KUBERNETES_VERSION\"")?;
    Ok(v.trim_start_matches('v').to_owned())
}

/// The workspace version (`[workspace.package] version` of `Cargo.toml`): the image tag of
/// `make image` and the chart's `appVersion`.
pub fn workspace_version() -> anyhow::Result<String> {
    let cargo = std::fs::read_to_string(repo_root().join("Cargo.toml"))?;
    cargo
        .split("[workspace.package]")
        .nth(1)
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("version = ")))
        .map(|v| v.trim_matches('"').to_owned())
        .context("no [workspace.package] version in Cargo.toml")
}

/// The helm CLI, optionally against a cluster (its kubeconfig), run from the repository root.
#[derive(Debug, Clone)]
pub struct Helm {
    bin: PathBuf,
    kubeconfig: Option<PathBuf>,
    home: PathBuf,
}

impl Helm {
    /// Helm for rendering only (`template`, `lint`). Its cache and config live in the system temp
    /// folder, never in the user's home.
    pub fn new() -> anyhow::Result<Helm> {
        Ok(Helm {
            bin: helm_binary()?,
            kubeconfig: None,
            home: std::env::temp_dir().join("model-fleet-helm-home"),
        })
    }

    /// Helm acting on the cluster of `kubeconfig` (`install`, `upgrade`, `uninstall`).
    pub fn with_kubeconfig(mut self, kubeconfig: &Path) -> Helm {
        self.kubeconfig = Some(kubeconfig.to_owned());
        self
    }

    /// Runs `helm ARGS`; the output whatever the exit status.
    pub fn run(&self, args: &[&str]) -> anyhow::Result<Output> {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args)
            .current_dir(repo_root())
            .env("HELM_CACHE_HOME", self.home.join("cache"))
            .env("HELM_CONFIG_HOME", self.home.join("config"))
            .env("HELM_DATA_HOME", self.home.join("data"));
        match &self.kubeconfig {
            Some(k) => cmd.env("KUBECONFIG", k),
            None => cmd.env("KUBECONFIG", "/dev/null"),
        };
        cmd.output()
            .with_context(|| format!("running helm {}", args.join(" ")))
    }

    /// Runs `helm ARGS` and returns its stdout; errors with stdout and stderr when it fails.
    pub fn ok(&self, args: &[&str]) -> anyhow::Result<String> {
        let out = self.run(args)?;
        if !out.status.success() {
            bail!(
                "helm {} failed: {}{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// `helm template RELEASE CHART --namespace NS --kube-version V ARGS`, parsed into its
    /// objects (empty documents dropped).
    pub fn template(
        &self,
        release: &str,
        namespace: &str,
        args: &[&str],
    ) -> anyhow::Result<Vec<Value>> {
        let version = kubernetes_version()?;
        let mut all = vec!["template", release, CHART, "--namespace", namespace];
        all.extend(["--kube-version", &version]);
        all.extend(args);
        parse_manifests(&self.ok(&all)?)
    }
}

/// Parses a multi-document YAML stream into its objects, dropping empty documents.
pub fn parse_manifests(yaml: &str) -> anyhow::Result<Vec<Value>> {
    let mut objects = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(yaml) {
        let value: Value = serde::Deserialize::deserialize(doc).context("parsing rendered YAML")?;
        if !value.is_null() {
            objects.push(value);
        }
    }
    Ok(objects)
}

/// The object of `kind` named `name` among `objects`.
pub fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

/// `--set`/`--set-string` arguments that run the chart on a local instance: the image of
/// `make image` from the real node's registry, the operator pod on the real node (its label and
/// `NoSchedule` taint), watching `watch_namespace` only (other tests share the instance), no shared
/// Gateway (the local control plane has no Gateway controller).
pub fn local_values(version: &str, watch_namespace: &str) -> Vec<String> {
    let string = |kv: String| ["--set-string".to_owned(), kv];
    let set = |kv: String| ["--set".to_owned(), kv];
    [
        string(format!("image.repository={LOCAL_IMAGE_REPOSITORY}")),
        string(format!("image.tag={version}")),
        string(format!(
            "nodeSelector.{}=true",
            NODE_LABEL.replace('.', "\\.")
        )),
        string(format!("tolerations[0].key={NODE_LABEL}")),
        string("tolerations[0].operator=Exists".to_owned()),
        string("tolerations[0].effect=NoSchedule".to_owned()),
        string(format!("operator.watchNamespace={watch_namespace}")),
        set("operator.resyncSeconds=5".to_owned()),
        set("gateway.create=false".to_owned()),
    ]
    .into_iter()
    .flatten()
    .collect()
}
