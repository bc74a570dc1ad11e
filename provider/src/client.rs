//! A Kubernetes client built from the provider configuration, lazily: nothing reads kubeconfig
//! credentials or dials the API server until a read, apply or import needs it, so `validate` and
//! plans of new resources work without a reachable cluster and before the CRDs exist
//! (DESIGN.md section 6).

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
    /// Reading or resolving a kubeconfig failed.
    #[error("kubeconfig: {0}")]
    Kubeconfig(#[from] kube::config::KubeconfigError),
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
                let file = Kubeconfig::read_from(path)?;
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
        assert!(matches!(
            kube_config(&config).await,
            Err(ClientError::Kubeconfig(_))
        ));
    }
}
