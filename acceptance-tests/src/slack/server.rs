//! The servers of the local Slack: the Web API handlers, the `response_url` handler and the Socket Mode WebSocket
//! endpoint, over the state [`super::FakeSlack`] reads.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

use super::{Ack, BOT_USER, Posted};

pub(super) struct Socket {
    pub(super) id: u32,
    pub(super) tx: UnboundedSender<Message>,
    pub(super) open: bool,
}

#[derive(Default)]
pub(super) struct Recorded {
    pub(super) tickets: BTreeSet<String>,
    pub(super) connections_opened: u32,
    pub(super) sockets: Vec<Socket>,
    pub(super) sent: Vec<(String, Instant)>,
    pub(super) acks: Vec<Ack>,
    pub(super) posted: Vec<Posted>,
    pub(super) refused_tokens: u32,
    pub(super) next: u32,
}

pub(super) type Shared = Arc<Mutex<Recorded>>;

pub(super) fn lock(state: &Shared) -> std::sync::MutexGuard<'_, Recorded> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

pub(super) fn json_response(value: Value) -> impl IntoResponse {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        value.to_string(),
    )
}

#[derive(Clone)]
pub(super) struct Web {
    pub(super) state: Shared,
    pub(super) ws_base: String,
    pub(super) bot_token: String,
    pub(super) app_token: String,
}

pub(super) async fn web_api(
    State(web): State<Web>,
    Path(method): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> impl IntoResponse {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let wanted = if method == "apps.connections.open" {
        &web.app_token
    } else {
        &web.bot_token
    };
    let mut state = lock(&web.state);
    if token != wanted {
        state.refused_tokens += 1;
        return json_response(json!({"ok": false, "error": "invalid_auth"}));
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    state.next += 1;
    let ts = format!("1700000000.{:06}", state.next);
    match method.as_str() {
        "auth.test" => json_response(
            json!({"ok": true, "url": "https://acme.slack.com/", "team": "Acme",
            "user": "fleet", "team_id": "T0ACME", "user_id": BOT_USER, "bot_id": "B0BOT"}),
        ),
        "apps.connections.open" => {
            state.connections_opened += 1;
            let ticket = format!("ticket-{}", state.next);
            state.tickets.insert(ticket.clone());
            json_response(
                json!({"ok": true, "url": format!("{}/link/?ticket={ticket}", web.ws_base)}),
            )
        }
        "chat.postMessage" | "chat.postEphemeral" => {
            let channel = body["channel"].as_str().unwrap_or_default().to_owned();
            state.posted.push(Posted {
                method: method.clone(),
                target: channel.clone(),
                body: body.clone(),
                at: Instant::now(),
            });
            if method == "chat.postEphemeral" {
                json_response(json!({"ok": true, "message_ts": ts}))
            } else {
                let message =
                    json!({"ts": ts, "text": body["text"], "bot_id": "B0BOT", "user": BOT_USER});
                json_response(json!({"ok": true, "channel": channel, "ts": ts, "message": message}))
            }
        }
        _ => json_response(json!({"ok": false, "error": "unknown_method"})),
    }
}

pub(super) async fn response_url(
    State(web): State<Web>,
    Path(id): Path<String>,
    body: Bytes,
) -> impl IntoResponse {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    lock(&web.state).posted.push(Posted {
        method: "response_url".into(),
        target: id,
        body,
        at: Instant::now(),
    });
    json_response(json!({"ok": true}))
}

// The handshake callback's `Result<Response, ErrorResponse>` is tungstenite's signature, not ours.
#[allow(clippy::result_large_err)]
pub(super) async fn serve_socket(state: Shared, stream: tokio::net::TcpStream) {
    let tickets = state.clone();
    let check = move |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        let ticket = request
            .uri()
            .query()
            .and_then(|q| q.strip_prefix("ticket="))
            .unwrap_or_default();
        if lock(&tickets).tickets.remove(ticket) {
            Ok(response)
        } else {
            let mut refusal = ErrorResponse::new(Some("unknown or used ticket".into()));
            *refusal.status_mut() = StatusCode::UNAUTHORIZED;
            Err(refusal)
        }
    };
    let Ok(ws) = tokio_tungstenite::accept_hdr_async(stream, check).await else {
        return;
    };
    let (mut sink, mut source) = ws.split();
    let (tx, mut rx) = unbounded_channel::<Message>();
    let id = {
        let mut s = lock(&state);
        let id = s.sockets.len() as u32 + 1;
        let open = s.sockets.iter().filter(|k| k.open).count() + 1;
        let hello = json!({"type": "hello", "num_connections": open, "connection_info": {"app_id": "A0FLEET"},
            "debug_info": {"host": "fake-slack", "build_number": 1, "approximate_connection_time": 18060}});
        let _ = tx.send(Message::Text(hello.to_string().into()));
        s.sockets.push(Socket { id, tx, open: true });
        id
    };
    let writer = tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            let close = matches!(message, Message::Close(_));
            if sink.send(message).await.is_err() || close {
                break;
            }
        }
    });
    while let Some(Ok(message)) = source.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let Some(envelope_id) = value["envelope_id"].as_str() else {
            continue;
        };
        let mut s = lock(&state);
        let sent = s
            .sent
            .iter()
            .rev()
            .find(|(e, _)| e == envelope_id)
            .map(|(_, t)| *t);
        let ack = Ack {
            envelope_id: envelope_id.to_owned(),
            payload: value.get("payload").cloned(),
            connection: id,
            latency: sent.map(|t| t.elapsed()).unwrap_or_default(),
            at: Instant::now(),
        };
        s.acks.push(ack);
    }
    writer.abort();
    if let Some(socket) = lock(&state).sockets.iter_mut().find(|k| k.id == id) {
        socket.open = false;
    }
}
