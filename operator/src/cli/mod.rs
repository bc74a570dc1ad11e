//! One module per subcommand; each exposes its clap `Args` struct and a `main`.

pub mod crd;
pub mod http_add_on;
// The CLI reference page's generator; its only caller is its staleness test (`make docs-generate`).
#[cfg(test)]
pub mod reference;
pub mod render;
pub mod run;
pub mod slack;

use std::path::Path;

use anyhow::Context as _;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The client configuration shared by `run` and `slack`: with `--kubeconfig PATH` that file (its `context`, or its
/// current context when None); without it what `kube::Config::infer` finds: `$KUBECONFIG` or `~/.kube/config`
/// when present, else the in-cluster service account.
///
/// # Errors
/// The file cannot be read or parsed, names no usable context, or nothing can be inferred (the message says which).
pub async fn kube_config(
    path: Option<&Path>,
    context: Option<String>,
) -> anyhow::Result<kube::Config> {
    match path {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            let options = KubeConfigOptions {
                context,
                ..KubeConfigOptions::default()
            };
            kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .with_context(|| format!("loading kubeconfig {}", path.display()))
        }
        None => kube::Config::infer().await.context(
            "inferring the Kubernetes config ($KUBECONFIG, ~/.kube/config, else in cluster)",
        ),
    }
}
