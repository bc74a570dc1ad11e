//! A Kubernetes client built from the provider configuration, lazily: nothing reads kubeconfig
//! credentials or dials the API server until a read, apply or import needs it, so `validate` and
//! plans of new resources work without a reachable cluster and before the CRDs exist
//! (DESIGN.md section 6).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use kube::config::{AuthInfo, KubeConfigOptions, Kubeconfig};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use tokio::sync::OnceCell;

use crate::config::ProviderConfig;
use crate::diag::Diagnostics;

/// Why a client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// `host` is not a URL.
    #[error("invalid host {0:?}")]
    Host(String),
    /// A PEM input could not be read.
    #[error("invalid PEM in {field}: {reason}")]
    Pem {
        /// The provider attribute.
        field: &'static str,
        /// Parser message.
        reason: String,
    },
    /// A kubeconfig file could not be read (kube's own message quotes the path twice, as `'"path"'`).
    #[error("kubeconfig: failed to read kubeconfig from '{}': {source}", path.display())]
    ReadKubeconfig {
        /// The file, `~` expanded.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// Resolving a kubeconfig failed.
    #[error("kubeconfig: {0}")]
    Kubeconfig(kube::config::KubeconfigError),
    /// No configuration could be inferred.
    #[error("no cluster configuration found (set kubeconfig_path or host, or KUBECONFIG): {0}")]
    Infer(#[from] kube::config::InferConfigError),
    /// The client could not be created from the configuration.
    #[error("creating the client: {0}")]
    Build(#[from] kube::Error),
    /// Credentials could not be assembled.
    #[error("credentials: {0}")]
    Credentials(String),
}

impl From<kube::config::KubeconfigError> for ClientError {
    fn from(error: kube::config::KubeconfigError) -> Self {
        match error {
            kube::config::KubeconfigError::ReadConfig(source, path) => {
                ClientError::ReadKubeconfig { path, source }
            }
            other => ClientError::Kubeconfig(other),
        }
    }
}

impl ClientError {
    /// As a user-facing diagnostic.
    pub fn to_diagnostics(&self) -> Diagnostics {
        Diagnostics::error(
            "Cannot configure the Kubernetes client",
            format!(
                "{self}. Check the provider block (kubeconfig_path, kubeconfig_context, host, \
                 token, client_certificate, client_key, cluster_ca_certificate)."
            ),
        )
    }
}

/// A client created on first use and then shared, with the API server URL it was built for.
pub struct LazyClient {
    config: ProviderConfig,
    cell: OnceCell<(kube::Client, String)>,
}

impl LazyClient {
    /// Remembers the configuration; does no I/O.
    pub fn new(config: ProviderConfig) -> LazyClient {
        LazyClient {
            config,
            cell: OnceCell::new(),
        }
    }

    /// Whether the client has been built (tests prove plans never build it).
    pub fn is_initialized(&self) -> bool {
        self.cell.initialized()
    }

    /// The client, built on first call.
    ///
    /// # Errors
    /// [`ClientError`] when the configuration cannot produce a client.
    pub async fn get(&self) -> Result<kube::Client, ClientError> {
        let (client, _) = self.cell.get_or_try_init(|| build(&self.config)).await?;
        Ok(client.clone())
    }

    /// The API server URL of the built client (`https://host:port/`, from `host` or the kubeconfig's cluster), for
    /// messages; `None` before [`LazyClient::get`] built it.
    pub fn cluster_url(&self) -> Option<&str> {
        self.cell.get().map(|(_, url)| url.as_str())
    }
}

fn pem_certs(field: &'static str, pem: &str) -> Result<Vec<Vec<u8>>, ClientError> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .map(|c| c.map(|c| c.to_vec()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ClientError::Pem {
            field,
            reason: e.to_string(),
        })?;
    if certs.is_empty() {
        return Err(ClientError::Pem {
            field,
            reason: "no CERTIFICATE block".into(),
        });
    }
    Ok(certs)
}

/// Builds a `kube::Config` from the provider configuration (no network I/O).
///
/// # Errors
/// [`ClientError`] for invalid inputs or an unreadable kubeconfig.
pub async fn kube_config(config: &ProviderConfig) -> Result<kube::Config, ClientError> {
    let mut kube_config = if let Some(host) = &config.host {
        let uri: http::Uri = host.parse().map_err(|_| ClientError::Host(host.clone()))?;
        let mut kc = kube::Config::new(uri);
        if let Some(ca) = &config.cluster_ca_certificate {
            kc.root_cert = Some(pem_certs("cluster_ca_certificate", ca)?);
        }
        // AuthInfo's secret fields are private types; build it through its kubeconfig form.
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let mut auth = serde_json::Map::new();
        if let Some(token) = &config.token {
            auth.insert("token".into(), token.clone().into());
        }
        if let (Some(cert), Some(key)) = (&config.client_certificate, &config.client_key) {
            pem_certs("client_certificate", cert)?;
            auth.insert("client-certificate-data".into(), b64(cert).into());
            auth.insert("client-key-data".into(), b64(key).into());
        }
        kc.auth_info = serde_json::from_value::<AuthInfo>(auth.into())
            .map_err(|e| ClientError::Credentials(e.to_string()))?;
        kc
    } else {
        let options = KubeConfigOptions {
            context: config.kubeconfig_context.clone(),
            ..KubeConfigOptions::default()
        };
        match &config.kubeconfig_path {
            Some(path) => {
                let file = Kubeconfig::read_from(expand_home(path, std::env::var_os("HOME")))?;
                kube::Config::from_custom_kubeconfig(file, &options).await?
            }
            None if config.kubeconfig_context.is_some() => {
                kube::Config::from_kubeconfig(&options).await?
            }
            None => kube::Config::infer().await?,
        }
    };
    if config.insecure {
        kube_config.accept_invalid_certs = true;
    }
    kube_config.connect_timeout = Some(Duration::from_secs(10));
    kube_config.read_timeout = Some(Duration::from_secs(60));
    Ok(kube_config)
}

/// `path` with a leading `~/` (or a lone `~`) replaced by the home directory `home` (`$HOME`), as a shell would: the
/// documented `kubeconfig_path = "~/.kube/config"` reaches the provider unexpanded. Unchanged when `home` is unset or
/// empty, and for `~user/...`.
fn expand_home(path: &str, home: Option<OsString>) -> PathBuf {
    let Some(home) = home.filter(|h| !h.is_empty()) else {
        return PathBuf::from(path);
    };
    match path.strip_prefix('~') {
        Some("") => PathBuf::from(home),
        Some(rest) if rest.starts_with('/') => {
            PathBuf::from(home).join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    }
}

async fn build(config: &ProviderConfig) -> Result<(kube::Client, String), ClientError> {
    let kube_config = kube_config(config).await?;
    let url = kube_config.cluster_url.to_string();
    tracing::debug!(url, "building Kubernetes client");
    Ok((kube::Client::try_from(kube_config)?, url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn host_and_token_build_without_network() {
        let config = ProviderConfig {
            host: Some("https://127.0.0.1:1".into()),
            token: Some("secret".into()),
            insecure: true,
            ..ProviderConfig::default()
        };
        let kc = kube_config(&config).await.unwrap();
        assert_eq!(kc.cluster_url.to_string(), "https://127.0.0.1:1/");
        assert!(kc.accept_invalid_certs);
        let lazy = LazyClient::new(config);
        assert!(!lazy.is_initialized());
    }

    #[tokio::test]
    async fn bad_pem_is_a_clear_error() {
        let config = ProviderConfig {
            host: Some("https://127.0.0.1:1".into()),
            cluster_ca_certificate: Some("garbage".into()),
            ..ProviderConfig::default()
        };
        let err = kube_config(&config).await.unwrap_err();
        assert!(err.to_string().contains("cluster_ca_certificate"), "{err}");
    }

    #[tokio::test]
    async fn missing_kubeconfig_file_is_an_error() {
        let config = ProviderConfig {
            kubeconfig_path: Some("/nonexistent/kubeconfig".into()),
            ..ProviderConfig::default()
        };
        let err = kube_config(&config).await.unwrap_err();
        assert!(matches!(err, ClientError::ReadKubeconfig { .. }), "{err:?}");
        // The path quoted once, not as kube's `'"/nonexistent/kubeconfig"'`.
        let message = err.to_string();
        assert!(
            message.starts_with(
                "kubeconfig: failed to read kubeconfig from '/nonexistent/kubeconfig': "
            ),
            "{message}"
        );
    }

    #[test]
    fn a_leading_tilde_is_the_home_directory() {
        let home = || Some(OsString::from("/home/ada"));
        assert_eq!(
            expand_home("~/.kube/config", home()),
            PathBuf::from("/home/ada/.kube/config")
        );
        assert_eq!(expand_home("~", home()), PathBuf::from("/home/ada"));
        assert_eq!(expand_home("~//kc", home()), PathBuf::from("/home/ada/kc"));
        // Only a leading `~/` or a lone `~`: no other user's home, no `~` elsewhere.
        for kept in ["~ada/kc", "/tmp/~/kc", "kc~", "./~/kc", "/etc/kc"] {
            assert_eq!(expand_home(kept, home()), PathBuf::from(kept), "{kept}");
        }
        // No home: the path as written (reading it then fails naming it).
        assert_eq!(
            expand_home("~/.kube/config", None),
            PathBuf::from("~/.kube/config")
        );
        assert_eq!(
            expand_home("~/.kube/config", Some(OsString::new())),
            PathBuf::from("~/.kube/config")
        );
    }

    #[tokio::test]
    async fn a_tilde_kubeconfig_path_is_read_from_home() {
        let home = std::env::var_os("HOME").expect("HOME is set in tests");
        let config = ProviderConfig {
            kubeconfig_path: Some("~/.model-fleet-no-such-kubeconfig".into()),
            ..ProviderConfig::default()
        };
        let Err(ClientError::ReadKubeconfig { path, .. }) = kube_config(&config).await else {
            panic!("the file does not exist");
        };
        assert_eq!(
            path,
            PathBuf::from(home).join(".model-fleet-no-such-kubeconfig")
        );
    }
}
