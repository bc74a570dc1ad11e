//! A loopback TCP proxy a test can cut: clients (the provider, the operator) talk to the API server through it, and
//! [`TcpProxy::cut`] makes the API server "go away" for them (every open connection is closed, new ones are closed
//! as soon as they are accepted) until [`TcpProxy::restore`]. The API server's certificate names 127.0.0.1, so TLS
//! works through the proxy unchanged.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A running proxy from a loopback port to `upstream`; stops when dropped.
#[derive(Debug)]
pub struct TcpProxy {
    /// The proxy's own address (127.0.0.1, a free port).
    pub addr: SocketAddr,
    cut: watch::Sender<bool>,
    connections: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl TcpProxy {
    /// Starts forwarding a free loopback port to `upstream` (on the calling test's runtime).
    ///
    /// Errors: no loopback port could be bound.
    pub async fn start(upstream: SocketAddr) -> anyhow::Result<TcpProxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (cut, watching) = watch::channel(false);
        let connections = Arc::new(AtomicU64::new(0));
        let counted = connections.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if *watching.borrow() {
                    drop(client); // the API server is "gone": the client sees its connection closed
                    continue;
                }
                counted.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(forward(client, upstream, watching.clone()));
            }
        });
        Ok(TcpProxy {
            addr,
            cut,
            connections,
            task,
        })
    }

    /// Closes every open connection and refuses new ones until [`TcpProxy::restore`].
    pub fn cut(&self) {
        self.cut.send_replace(true);
    }

    /// Forwards new connections again.
    pub fn restore(&self) {
        self.cut.send_replace(false);
    }

    /// How many connections were forwarded so far.
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }

    /// A copy of `kubeconfig` (written into `dir`) whose clusters' `server` is this proxy: clients using it reach the
    /// API server only through the proxy.
    ///
    /// Errors: the kubeconfig cannot be read or written.
    pub fn kubeconfig(&self, kubeconfig: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
        let text = std::fs::read_to_string(kubeconfig)
            .with_context(|| format!("reading {}", kubeconfig.display()))?;
        let mut config: serde_yaml::Value = serde_yaml::from_str(&text)?;
        let clusters = config["clusters"]
            .as_sequence_mut()
            .context("kubeconfig without clusters")?;
        for cluster in clusters {
            cluster["cluster"]["server"] = format!("https://{}", self.addr).into();
        }
        let path = dir.join("kubeconfig-through-proxy");
        std::fs::write(&path, serde_yaml::to_string(&config)?)?;
        Ok(path)
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.cut.send_replace(true);
        self.task.abort();
    }
}

/// Copies bytes both ways between `client` and a new connection to `upstream` until either side closes or the proxy
/// is cut.
async fn forward(mut client: TcpStream, upstream: SocketAddr, mut cut: watch::Receiver<bool>) {
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
        _ = cut.wait_for(|cut| *cut) => {}
    }
}

/// The `host:port` of the first cluster's `server` URL in `kubeconfig` (the API server to proxy).
///
/// Errors: the kubeconfig cannot be read or names no `https://host:port` server.
pub fn api_server_addr(kubeconfig: &Path) -> anyhow::Result<SocketAddr> {
    let text = std::fs::read_to_string(kubeconfig)?;
    let config: serde_yaml::Value = serde_yaml::from_str(&text)?;
    let server = config["clusters"][0]["cluster"]["server"]
        .as_str()
        .context("kubeconfig without a server")?;
    let hostport = server
        .strip_prefix("https://")
        .context("server is not https://")?
        .trim_end_matches('/');
    hostport
        .parse()
        .with_context(|| format!("server {server} is not https://IP:PORT"))
}
