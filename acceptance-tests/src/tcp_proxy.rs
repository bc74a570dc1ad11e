//! A loopback TCP proxy a test can cut or stall: clients (the provider, the operator) talk to the API server through
//! it. [`ProxySwitch::cut`] makes the API server "go away" (every open connection is closed, new ones are closed as
//! soon as they are accepted); [`ProxySwitch::stall`] stops bytes moving without closing anything (a partitioned
//! network: a chunk read is held, nothing more is read, so TCP flow control stalls the sender too; connections opened
//! meanwhile wait); [`ProxySwitch::restore`] forwards again. The API server's certificate names 127.0.0.1, so TLS
//! works through the proxy unchanged.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the proxy does with bytes right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Bytes flow both ways.
    Forward,
    /// Connections stay open but no byte moves until the mode changes.
    Stall,
    /// Every connection is closed; new ones are closed on accept.
    Cut,
}

/// A cloneable handle that switches a [`TcpProxy`]'s [`Mode`] (from async code or a plain thread).
#[derive(Clone, Debug)]
pub struct ProxySwitch(Arc<watch::Sender<Mode>>);

impl ProxySwitch {
    /// Closes every open connection and refuses new ones until [`ProxySwitch::restore`].
    pub fn cut(&self) {
        self.0.send_replace(Mode::Cut);
    }

    /// Stops every byte (connections stay open) until [`ProxySwitch::restore`].
    pub fn stall(&self) {
        self.0.send_replace(Mode::Stall);
    }

    /// Forwards again (held bytes are delivered).
    pub fn restore(&self) {
        self.0.send_replace(Mode::Forward);
    }
}

/// A running proxy from a loopback port to `upstream`; stops (cuts every connection) when dropped.
#[derive(Debug)]
pub struct TcpProxy {
    /// The proxy's own address (127.0.0.1, a free port).
    pub addr: SocketAddr,
    switch: ProxySwitch,
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
        let (sender, watching) = watch::channel(Mode::Forward);
        let connections = Arc::new(AtomicU64::new(0));
        let counted = connections.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if *watching.borrow() == Mode::Cut {
                    drop(client); // the API server is "gone": the client sees its connection closed
                    continue;
                }
                counted.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(forward(client, upstream, watching.clone()));
            }
        });
        Ok(TcpProxy {
            addr,
            switch: ProxySwitch(Arc::new(sender)),
            connections,
            task,
        })
    }

    /// A handle that switches this proxy's mode, usable after the proxy moved or from another thread.
    pub fn switch(&self) -> ProxySwitch {
        self.switch.clone()
    }

    /// Closes every open connection and refuses new ones until [`TcpProxy::restore`].
    pub fn cut(&self) {
        self.switch.cut();
    }

    /// Forwards new connections again.
    pub fn restore(&self) {
        self.switch.restore();
    }

    /// How many connections were forwarded so far.
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }

    /// A copy of `kubeconfig` (written into `dir` as `kubeconfig-through-proxy-<port>`, so proxies alive at once
    /// never share a file) whose clusters' `server` is this proxy: clients using it reach the API server only through
    /// the proxy.
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
        let path = dir.join(format!("kubeconfig-through-proxy-{}", self.addr.port()));
        std::fs::write(&path, serde_yaml::to_string(&config)?)?;
        Ok(path)
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.switch.cut();
        self.task.abort();
    }
}

/// Waits while the proxy is stalled; false when it is (or becomes) cut.
async fn flowing(mode: &mut watch::Receiver<Mode>) -> bool {
    matches!(
        mode.wait_for(|m| *m != Mode::Stall).await.as_deref(),
        Ok(Mode::Forward)
    )
}

/// Copies bytes both ways between `client` and a new connection to `upstream` (waiting out a stall first) until
/// either side closes or the proxy is cut.
async fn forward(client: TcpStream, upstream: SocketAddr, mut mode: watch::Receiver<Mode>) {
    if !flowing(&mut mode).await {
        return;
    }
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let mut cut = mode.clone();
    tokio::select! {
        _ = pump(client_read, server_write, mode.clone()) => {}
        _ = pump(server_read, client_write, mode) => {}
        _ = cut.wait_for(|m| *m == Mode::Cut) => {}
    }
}

/// Copies `from` to `to` chunk by chunk; a chunk read during a stall is held until the stall ends.
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, mut mode: watch::Receiver<Mode>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if !flowing(&mut mode).await || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
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
