//! A TCP proxy of ours on loopback between the operator and kube-apiserver that can stop forwarding (a stalled
//! connection: nothing is refused or reset, bytes simply stop moving) and start again, for the stall drill.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A running proxy; it stops accepting when dropped.
#[derive(Debug)]
pub struct StallProxy {
    /// The loopback address clients dial instead of the upstream one.
    pub address: SocketAddr,
    stalled: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl StallProxy {
    /// Listens on a free loopback port and forwards every connection to `upstream` (TLS passes through untouched).
    ///
    /// Errors: the port could not be bound.
    pub async fn start(upstream: SocketAddr) -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let stalled = Arc::new(AtomicBool::new(false));
        let flag = stalled.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let flag = flag.clone();
                tokio::spawn(async move {
                    // A connection opened during a stall waits for its end before it reaches the API server.
                    wait_while_stalled(&flag).await;
                    if let Ok(server) = TcpStream::connect(upstream).await {
                        let (client_read, client_write) = client.into_split();
                        let (server_read, server_write) = server.into_split();
                        tokio::select! {
                            _ = pump(client_read, server_write, flag.clone()) => {}
                            _ = pump(server_read, client_write, flag) => {}
                        }
                    }
                });
            }
        });
        Ok(Self {
            address,
            stalled,
            task,
        })
    }

    /// The switch: true stops forwarding on every connection (held bytes wait), false resumes.
    pub fn switch(&self) -> Arc<AtomicBool> {
        self.stalled.clone()
    }
}

impl Drop for StallProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn wait_while_stalled(flag: &AtomicBool) {
    while flag.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Copies `from` to `to` chunk by chunk; a chunk read during a stall is held until the stall ends (and nothing more
/// is read meanwhile, so TCP flow control stalls the sender too).
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    flag: Arc<AtomicBool>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        wait_while_stalled(&flag).await;
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
