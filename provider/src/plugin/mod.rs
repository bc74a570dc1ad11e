//! The go-plugin server side: handshake, AutoMTLS, controller service, serve loop.
//!
//! Sequence (go-plugin `Serve`): check the magic cookie, negotiate the protocol version, listen on
//! `127.0.0.1:0`, print exactly one handshake line on stdout (nothing before it), serve gRPC until
//! Terraform calls `GRPCController.Shutdown`, then exit promptly.

pub mod conn;
pub mod controller;
pub mod handshake;
pub mod tls;

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::proto::plugin::grpc_controller_server::GrpcControllerServer;
use crate::proto::tfplugin5::provider_server::{Provider, ProviderServer};

/// Registry addresses printed in debug mode's `TF_REATTACH_PROVIDERS`: `modelfleet/modelfleet` as
/// Terraform and as OpenTofu qualify it (their default registry hosts differ).
pub const PROVIDER_ADDRESSES: [&str; 2] = [
    "registry.terraform.io/modelfleet/modelfleet",
    "registry.opentofu.org/modelfleet/modelfleet",
];

/// How the plugin serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Launched by Terraform: cookie required, AutoMTLS when `PLUGIN_CLIENT_CERT` is set.
    Managed,
    /// `--debug`: plaintext, prints `TF_REATTACH_PROVIDERS` for a developer to export.
    Debug,
}

/// Errors that stop the plugin before or while serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Cookie or version negotiation failed.
    #[error(transparent)]
    Handshake(#[from] handshake::HandshakeError),
    /// TLS setup failed.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// Listening or writing the handshake failed.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The gRPC server failed.
    #[error("gRPC server: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// Runs the plugin until Terraform shuts it down (or, in debug mode, until Ctrl-C).
///
/// `env` reads environment variables (injectable for tests).
///
/// # Errors
/// [`ServeError`] for a missing cookie, no common protocol version, TLS or socket failures.
pub async fn serve<P: Provider>(
    provider: P,
    mode: Mode,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(), ServeError> {
    let version = match mode {
        Mode::Managed => {
            handshake::check_cookie(env(handshake::MAGIC_COOKIE_KEY).as_deref())?;
            handshake::negotiate_version(env("PLUGIN_PROTOCOL_VERSIONS").as_deref())?
        }
        Mode::Debug => handshake::APP_PROTOCOL_VERSION,
    };
    let client_cert = match mode {
        Mode::Managed => env("PLUGIN_CLIENT_CERT").filter(|pem| !pem.trim().is_empty()),
        Mode::Debug => None,
    };
    let (tls_config, server_cert) = match client_cert {
        Some(pem) => {
            let identity = tls::ServerIdentity::generate()?;
            let config = tls::server_config(&identity, &pem)?;
            (Some(Arc::new(config)), Some(identity.cert_der))
        }
        None => (None, None),
    };

    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    let controller = controller::Controller::new();

    announce(mode, version, addr, server_cert.as_deref())?;
    tracing::info!(%addr, tls = tls_config.is_some(), "plugin serving");

    let incoming = conn::incoming(listener, tls_config);
    let stopping = Arc::new(tokio::sync::Notify::new());
    let stop = stop_signal(mode, controller.clone(), stopping.clone());
    if mode == Mode::Managed {
        ignore_interrupts();
    }
    let server = tonic::transport::Server::builder()
        .add_service(ProviderServer::new(provider))
        .add_service(GrpcControllerServer::new(controller))
        .serve_with_incoming_shutdown(incoming, stop);
    // Graceful shutdown waits for Terraform to hang up; cap that wait so exit is prompt.
    tokio::select! {
        result = server => result?,
        () = async {
            stopping.notified().await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => tracing::debug!("connections still open after the grace period; exiting"),
    }
    Ok(())
}

/// The first stdout line Terraform reads (managed), or the reattach instructions (debug).
fn announce(
    mode: Mode,
    version: u32,
    addr: std::net::SocketAddr,
    server_cert: Option<&[u8]>,
) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match mode {
        Mode::Managed => {
            let line = handshake::handshake_line(version, addr, server_cert);
            writeln!(stdout, "{line}")?;
        }
        Mode::Debug => {
            let json = handshake::reattach_json(&PROVIDER_ADDRESSES, addr, std::process::id());
            writeln!(
                stdout,
                "Provider serving in debug mode. In another shell, run Terraform (or OpenTofu) with:\n\n\
                 \texport TF_REATTACH_PROVIDERS='{json}'\n"
            )?;
        }
    }
    stdout.flush()
}

/// Resolves when the plugin should stop: the controller's Shutdown or SIGTERM (managed), Ctrl-C (debug: a debug
/// instance serves many Terraform runs); `stopping` is notified then.
async fn stop_signal(
    mode: Mode,
    controller: controller::Controller,
    stopping: Arc<tokio::sync::Notify>,
) {
    match mode {
        Mode::Managed => {
            tokio::select! {
                () = controller.wait() => {}
                () = terminate_signal() => {}
            }
        }
        Mode::Debug => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
    stopping.notify_one();
}

/// SIGTERM (Terraform's fallback after the controller) ends the plugin.
async fn terminate_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    }
    #[cfg(not(unix))]
    std::future::pending::<()>().await;
}

/// Terraform forwards Ctrl-C to its whole process group; like go-plugin servers we ignore SIGINT
/// and let Terraform drive an orderly stop (Stop RPC, then Shutdown).
fn ignore_interrupts() {
    tokio::spawn(async {
        loop {
            if tokio::signal::ctrl_c().await.is_err() {
                return;
            }
            tracing::debug!("ignoring SIGINT: Terraform will stop the plugin");
        }
    });
}

/// Grace period after Shutdown before the process exits regardless of open connections.
pub const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);
