//! The Socket Mode transport: slack-morphism's WebSocket clients (connect through `apps.connections.open`, ping,
//! reconnect when a connection drops) with our own frame listener, which sees every envelope's `envelope_id` and
//! `retry_attempt` (slack-morphism's callbacks only see payloads) and hands envelopes to the [`Bot`].
//!
//! A `disconnect` frame (`refresh_requested` every few hours, `warning` before maintenance) restarts that connection:
//! a new `apps.connections.open`, a new WebSocket, a new `hello`. Work already acknowledged keeps running in its
//! task and posts its reply through the Web API, so nothing is lost on a reconnect; an envelope that was not
//! acknowledged is redelivered by Slack and handled once (see [`super::envelope::Dedup`]).

use std::sync::{Arc, Weak};

use slack_morphism::clients_manager::{
    SlackSocketModeClientsManager, SlackSocketModeClientsManagerFactory,
};
use slack_morphism::errors::SlackClientError;
use slack_morphism::listener::SlackClientEventsListenerEnvironment;
use slack_morphism::prelude::{
    SlackApiToken, SlackClientSocketModeConfig, SlackHyperClient, SlackSocketModeClientListener,
    SlackSocketModeWssClientId,
};

use super::envelope::{self, Frame};
use super::handler::Bot;

type Manager = Arc<dyn SlackSocketModeClientsManager + Send + Sync>;

struct Listener {
    manager: Weak<dyn SlackSocketModeClientsManager + Send + Sync>,
    bot: Arc<Bot>,
}

impl Listener {
    async fn restart(&self, client_id: &SlackSocketModeWssClientId) {
        if let Some(manager) = self.manager.upgrade() {
            manager.restart_client(client_id).await;
        }
    }
}

#[async_trait::async_trait]
impl SlackSocketModeClientListener for Listener {
    async fn on_message(
        &self,
        client_id: &SlackSocketModeWssClientId,
        message_body: String,
    ) -> Option<String> {
        match envelope::frame(&message_body) {
            Ok(Frame::Hello { num_connections }) => {
                tracing::info!(connection = %client_id.to_string(), num_connections, "slack socket mode connected");
                None
            }
            Ok(Frame::Disconnect { reason }) => {
                tracing::info!(connection = %client_id.to_string(), %reason, "slack asked to reconnect: reconnecting");
                self.restart(client_id).await;
                None
            }
            Ok(Frame::Envelope(envelope)) => Some(self.bot.on_envelope(envelope)),
            Err(error) => {
                tracing::warn!(connection = %client_id.to_string(), %error, "ignored a socket mode frame");
                None
            }
        }
    }

    async fn on_error(&self, error: Box<dyn std::error::Error + Send + Sync>) {
        tracing::warn!(%error, "slack socket mode error");
    }

    async fn on_disconnect(&self, client_id: &SlackSocketModeWssClientId) {
        tracing::info!(connection = %client_id.to_string(), "slack socket mode connection closed: reconnecting");
        self.restart(client_id).await;
    }
}

/// The running Socket Mode connections.
pub struct Transport {
    manager: Manager,
}

impl Transport {
    /// Opens `connections` WebSockets (Slack allows up to 10; envelopes are spread over them) with the app-level
    /// token and feeds their envelopes to `bot`.
    ///
    /// # Errors
    /// slack-morphism could not register the token.
    pub async fn start(
        client: Arc<SlackHyperClient>,
        app_token: SlackApiToken,
        connections: u32,
        bot: Arc<Bot>,
    ) -> Result<Self, SlackClientError> {
        let environment = Arc::new(SlackClientEventsListenerEnvironment::new(client.clone()));
        let manager: Manager = client.http_api.connector.new_clients_manager(environment);
        let listener = Arc::new(Listener {
            manager: Arc::downgrade(&manager),
            bot,
        });
        let config = SlackClientSocketModeConfig::new().with_max_connections_count(connections);
        manager
            .register_new_token(&config, app_token, listener)
            .await?;
        manager.start().await;
        Ok(Self { manager })
    }

    /// Closes every connection.
    pub async fn shutdown(&self) {
        self.manager.shutdown().await;
    }
}
