//! The HTTP server for `/metrics`, `/healthz` and `/readyz` (axum over tokio).
//!
//! Semantics of the probes are documented in [`super::health`]. Responses: `200 ok` or `503` with a one-word reason
//! for the probes; the Prometheus text exposition format for `/metrics`.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;

use super::{Health, Metrics};

/// Shared state of the HTTP handlers.
#[derive(Clone, Debug)]
pub struct ServerState {
    /// Metrics rendered at `/metrics`.
    pub metrics: Metrics,
    /// Health facts behind `/healthz` and `/readyz`.
    pub health: Arc<Health>,
}

/// Builds the router serving `/metrics`, `/healthz` and `/readyz`.
pub fn router(state: ServerState) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(state)
}

/// Binds `addr` (e.g. `0.0.0.0:8080`, or `127.0.0.1:0` for a free port) and returns the listener and the address
/// actually bound, which the caller logs so tests can find the port.
///
/// # Errors
/// The bind error (address in use, permission denied, ...).
pub async fn bind(addr: SocketAddr) -> std::io::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    Ok((listener, local))
}

/// Serves the router on `listener` until `shutdown` completes.
///
/// # Errors
/// An I/O error of the accept loop.
pub async fn serve(
    listener: TcpListener,
    state: ServerState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}

async fn metrics(State(state): State<ServerState>) -> Response {
    match state.metrics.encode() {
        Ok(body) => (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            body,
        )
            .into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn healthz(State(state): State<ServerState>) -> Response {
    probe(state.health.is_healthy(), "unhealthy")
}

async fn readyz(State(state): State<ServerState>) -> Response {
    probe(state.health.is_ready(), "not ready")
}

fn probe(ok: bool, failure: &'static str) -> Response {
    if ok {
        (StatusCode::OK, "ok").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, failure).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get_path(addr: SocketAddr, path: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    }

    #[tokio::test]
    async fn serves_probes_and_metrics_on_a_free_port() {
        let health = Arc::new(Health::new(1));
        let metrics = Metrics::new();
        drop(metrics.reconcile_started("InferenceService"));
        let (listener, addr) = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = ServerState {
            metrics,
            health: health.clone(),
        };
        let server = tokio::spawn(serve(listener, state, async {
            let _ = stopped.await;
        }));

        assert!(get_path(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        assert!(get_path(addr, "/readyz").await.starts_with("HTTP/1.1 503"));
        health.set_leading(true);
        health.controller_synced(health.term());
        assert!(get_path(addr, "/readyz").await.starts_with("HTTP/1.1 200"));
        let metrics = get_path(addr, "/metrics").await;
        assert!(
            metrics.contains(r#"model_fleet_reconciles_total{kind="InferenceService"} 1"#),
            "{metrics}"
        );

        stop.send(()).unwrap();
        server.await.unwrap().unwrap();
    }
}
