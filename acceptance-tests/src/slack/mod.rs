//! A local Slack for the bot's tests, on loopback only: the Web API methods the bot calls (`auth.test`,
//! `apps.connections.open`, `chat.postMessage`, `chat.postEphemeral`), the `response_url`s of slash commands, and a
//! Socket Mode WebSocket endpoint speaking Slack's envelope protocol: a one-time ticket from
//! `apps.connections.open`, `hello` on connect, `slash_commands` / `events_api` envelopes, acks carrying the
//! `envelope_id`, `disconnect` frames and redeliveries with `retry_attempt`.
//!
//! It drives the real bot (slack-morphism's client) the way Slack does; tests read what the bot sent.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use axum::routing::{any, post};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

/// The bot's user id in the fake workspace (`auth.test`).
pub const BOT_USER: &str = "U0BOT";

/// One acknowledgement the bot sent.
#[derive(Clone, Debug)]
pub struct Ack {
    /// `envelope_id`.
    pub envelope_id: String,
    /// `payload` (slash command replies), if any.
    pub payload: Option<Value>,
    /// Which connection carried it (1, 2, ...).
    pub connection: u32,
    /// Time from sending the envelope to its ack.
    pub latency: Duration,
    /// When it arrived.
    pub at: Instant,
}

/// A message the bot posted.
#[derive(Clone, Debug)]
pub struct Posted {
    /// `chat.postMessage`, `chat.postEphemeral` or `response_url`.
    pub method: String,
    /// For `response_url`: the envelope id it belongs to; else the channel.
    pub target: String,
    /// The JSON body.
    pub body: Value,
    /// When it arrived.
    pub at: Instant,
}

impl Posted {
    /// `text` and every block, as one string for assertions.
    pub fn all_text(&self) -> String {
        format!(
            "{} {}",
            self.body["text"].as_str().unwrap_or(""),
            self.body["blocks"]
        )
    }
}

/// An envelope built by the fake; [`FakeSlack::deliver`] sends it.
#[derive(Clone, Debug)]
pub struct Envelope {
    /// Its `envelope_id`.
    pub id: String,
    /// The frame.
    pub frame: Value,
}

mod server;
use server::{Shared, Web, lock, response_url, serve_socket, web_api};

/// The fake Slack; its servers stop when it is dropped.
pub struct FakeSlack {
    state: Shared,
    /// Web API base URL, e.g. `http://127.0.0.1:PORT/api` (the bot's `--slack-api-url`).
    pub api_url: String,
    base: String,
    /// The bot token it accepts.
    pub bot_token: String,
    /// The app-level token it accepts.
    pub app_token: String,
    runtime: Option<tokio::runtime::Runtime>,
}

impl FakeSlack {
    /// Starts the Web API and the WebSocket endpoint on free loopback ports, accepting the given tokens. They run
    /// on a runtime of their own, so a test may block its thread (waiting for a process) while the bot talks to them.
    ///
    /// Errors: a port cannot be bound or the runtime cannot start.
    pub fn start(bot_token: &str, app_token: &str) -> anyhow::Result<Self> {
        let state: Shared = Arc::default();
        let ws = std::net::TcpListener::bind("127.0.0.1:0")?;
        let http = std::net::TcpListener::bind("127.0.0.1:0")?;
        ws.set_nonblocking(true)?;
        http.set_nonblocking(true)?;
        let ws_base = format!("ws://{}", ws.local_addr()?);
        let base = format!("http://{}", http.local_addr()?);
        let web = Web {
            state: state.clone(),
            ws_base,
            bot_token: bot_token.to_owned(),
            app_token: app_token.to_owned(),
        };
        let app = axum::Router::new()
            .route("/api/{method}", any(web_api))
            .route("/response/{id}", post(response_url))
            .with_state(web);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        runtime.spawn(async move {
            if let Ok(http) = TcpListener::from_std(http) {
                let _ = axum::serve(http, app).await;
            }
        });
        let sockets = state.clone();
        runtime.spawn(async move {
            let Ok(ws) = TcpListener::from_std(ws) else {
                return;
            };
            while let Ok((stream, _)) = ws.accept().await {
                tokio::spawn(serve_socket(sockets.clone(), stream));
            }
        });
        Ok(Self {
            state,
            api_url: format!("{base}/api"),
            base,
            bot_token: bot_token.to_owned(),
            app_token: app_token.to_owned(),
            runtime: Some(runtime),
        })
    }

    fn next_id(&self, prefix: &str) -> String {
        let mut s = lock(&self.state);
        s.next += 1;
        format!("{prefix}-{:04}", s.next)
    }

    /// A `/fleet TEXT` slash command from `user` in `channel`.
    pub fn slash(&self, user: &str, channel: &str, text: &str) -> Envelope {
        let id = self.next_id("env-slash");
        let frame = json!({"type": "slash_commands", "envelope_id": id, "accepts_response_payload": true,
            "retry_attempt": 0, "retry_reason": "",
            "payload": {"token": "legacy-verification", "team_id": "T0ACME", "team_domain": "acme",
                "channel_id": channel, "channel_name": "fleet", "user_id": user, "user_name": "someone",
                "command": "/fleet", "text": text, "api_app_id": "A0FLEET", "is_enterprise_install": "false",
                "response_url": format!("{}/response/{id}", self.base), "trigger_id": format!("trigger-{id}")}});
        Envelope { id, frame }
    }

    fn event(&self, event: Value) -> Envelope {
        let id = self.next_id("env-event");
        let frame = json!({"type": "events_api", "envelope_id": id, "accepts_response_payload": false,
            "retry_attempt": 0, "retry_reason": "",
            "payload": {"token": "legacy-verification", "team_id": "T0ACME", "api_app_id": "A0FLEET",
                "event": event, "type": "event_callback", "event_id": format!("Ev-{id}"),
                "event_time": 1700000000}});
        Envelope { id, frame }
    }

    /// `@fleet TEXT` in `channel` (an `app_mention` event).
    pub fn mention(&self, user: &str, channel: &str, text: &str) -> Envelope {
        let ts = format!("1700000100.{:06}", lock(&self.state).next + 1);
        self.event(
            json!({"type": "app_mention", "user": user, "text": format!("<@{BOT_USER}> {text}"),
            "ts": ts, "channel": channel, "event_ts": ts}),
        )
    }

    /// A direct message `TEXT` in DM `channel` (a `message.im` event).
    pub fn direct(&self, user: &str, channel: &str, text: &str) -> Envelope {
        let ts = format!("1700000200.{:06}", lock(&self.state).next + 1);
        self.event(
            json!({"type": "message", "channel": channel, "user": user, "text": text, "ts": ts,
            "event_ts": ts, "channel_type": "im"}),
        )
    }

    /// Sends `envelope` with `retry_attempt` on the newest open connection (a redelivery when > 0).
    ///
    /// Errors: no connection is open.
    pub fn deliver(&self, envelope: &Envelope, retry_attempt: u32) -> anyhow::Result<()> {
        let mut frame = envelope.frame.clone();
        frame["retry_attempt"] = json!(retry_attempt);
        if retry_attempt > 0 {
            frame["retry_reason"] = json!("timeout");
        }
        let mut s = lock(&self.state);
        s.sent.push((envelope.id.clone(), Instant::now()));
        let socket = s
            .sockets
            .iter()
            .rev()
            .find(|k| k.open)
            .context("no open Socket Mode connection")?;
        socket
            .tx
            .send(Message::Text(frame.to_string().into()))
            .ok()
            .context("connection closing")?;
        Ok(())
    }

    /// Sends `disconnect` with `reason` on the newest open connection, as Slack does before closing it.
    ///
    /// Errors: no connection is open.
    pub fn disconnect(&self, reason: &str) -> anyhow::Result<()> {
        let frame = json!({"type": "disconnect", "reason": reason,
            "debug_info": {"host": "fake-slack"}});
        let s = lock(&self.state);
        let socket = s
            .sockets
            .iter()
            .rev()
            .find(|k| k.open)
            .context("no open Socket Mode connection")?;
        socket
            .tx
            .send(Message::Text(frame.to_string().into()))
            .ok()
            .context("connection closing")?;
        Ok(())
    }

    /// Closes the newest open connection with a close frame (what Slack does after `disconnect`, or a network cut).
    ///
    /// Errors: no connection is open.
    pub fn close_connection(&self) -> anyhow::Result<()> {
        let mut s = lock(&self.state);
        let socket = s
            .sockets
            .iter_mut()
            .rev()
            .find(|k| k.open)
            .context("no open Socket Mode connection")?;
        let _ = socket.tx.send(Message::Close(None));
        socket.open = false;
        Ok(())
    }

    /// `apps.connections.open` calls so far.
    pub fn connections_opened(&self) -> u32 {
        lock(&self.state).connections_opened
    }

    /// WebSocket connections open now.
    pub fn open_connections(&self) -> usize {
        lock(&self.state).sockets.iter().filter(|k| k.open).count()
    }

    /// Web API calls refused for a wrong token.
    pub fn refused_tokens(&self) -> u32 {
        lock(&self.state).refused_tokens
    }

    /// Acks received for `envelope_id`.
    pub fn acks(&self, envelope_id: &str) -> Vec<Ack> {
        lock(&self.state)
            .acks
            .iter()
            .filter(|a| a.envelope_id == envelope_id)
            .cloned()
            .collect()
    }

    /// Everything the bot posted so far.
    pub fn posted(&self) -> Vec<Posted> {
        lock(&self.state).posted.clone()
    }

    /// Waits up to `timeout` until `check` holds; the error names `what` and shows what was posted.
    ///
    /// Errors: the timeout passed.
    pub async fn wait<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut(&Self) -> Option<T>,
    ) -> anyhow::Result<T> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(value) = check(self) {
                return Ok(value);
            }
            if Instant::now() > deadline {
                let posted: Vec<String> = self
                    .posted()
                    .iter()
                    .map(|p| format!("{} {}: {}", p.method, p.target, p.all_text()))
                    .collect();
                bail!(
                    "timed out after {timeout:?} waiting for {what}; posted so far:\n{}",
                    posted.join("\n")
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits for the ack of `envelope`.
    ///
    /// Errors: none within 10 s.
    pub async fn ack(&self, envelope: &Envelope) -> anyhow::Result<Ack> {
        self.wait(
            &format!("the ack of {}", envelope.id),
            Duration::from_secs(10),
            |f| f.acks(&envelope.id).into_iter().next(),
        )
        .await
    }

    /// Waits for the reply to `envelope`: its `response_url` post for a slash command, else a post in `channel`.
    ///
    /// Errors: none within 30 s.
    pub async fn reply(&self, envelope: &Envelope) -> anyhow::Result<Posted> {
        let channel = envelope.frame["payload"]["event"]["channel"]
            .as_str()
            .map(str::to_owned);
        self.wait(
            &format!("the reply to {}", envelope.id),
            Duration::from_secs(30),
            |f| {
                f.posted().into_iter().find(|p| match &channel {
                    None => p.method == "response_url" && p.target == envelope.id,
                    Some(channel) => {
                        p.method != "response_url"
                            && &p.target == channel
                            && replies_to(p, envelope)
                    }
                })
            },
        )
        .await
    }
}

/// Whether a post answers `envelope` (same thread for mentions; DMs have one conversation per test channel).
fn replies_to(posted: &Posted, envelope: &Envelope) -> bool {
    let event = &envelope.frame["payload"]["event"];
    match event["type"].as_str() {
        Some("app_mention") => posted.body["thread_ts"] == event["ts"],
        _ => true,
    }
}

impl Drop for FakeSlack {
    fn drop(&mut self) {
        for socket in &lock(&self.state).sockets {
            let _ = socket.tx.send(Message::Close(None));
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
