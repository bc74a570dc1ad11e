//! Sending replies through the Web API: the follow-up of a slash command goes to its `response_url`, replies to a
//! mention go to its thread (`chat.postMessage`, or `chat.postEphemeral` for what only the person should see), and
//! replies to a direct message go to the conversation.
//!
//! The client is slack-morphism's hyper client. Its base URL is `https://slack.com/api` unless `--slack-api-url`
//! names another one (a proxy, or the tests' local endpoint); plain `http` is accepted only for a loopback address.

use std::sync::Arc;

use serde::Serialize;
use slack_morphism::prelude::{
    SlackApiChatPostEphemeralRequest, SlackApiChatPostMessageRequest,
    SlackApiPostWebhookMessageResponse, SlackApiToken, SlackApiTokenValue, SlackClient,
    SlackClientApiCallContext, SlackClientHttpConnector, SlackClientHyperConnector,
    SlackHyperClient, SlackMessageContent, SlackMessageResponseType,
};

use super::blocks::{Reply, Visibility};
use super::config::Secret;
use super::envelope::{Request, Surface};

/// Slack's Web API base URL.
pub const DEFAULT_API_URL: &str = "https://slack.com/api";

/// A bad `--slack-api-url`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ApiUrlError {
    /// Not a URL.
    #[error("--slack-api-url `{0}` is not a URL (e.g. https://slack.com/api)")]
    Invalid(String),
    /// `http` to a host that is not loopback: tokens would cross the network in clear text.
    #[error(
        "--slack-api-url `{0}` uses http to a host that is not loopback: use https (tokens travel in it)"
    )]
    Cleartext(String),
}

/// Checks the API URL; returns whether plain `http` must be allowed (loopback test endpoints only).
///
/// # Errors
/// [`ApiUrlError`].
pub fn check_api_url(url: &str) -> Result<bool, ApiUrlError> {
    let parsed = url::Url::parse(url).map_err(|_| ApiUrlError::Invalid(url.to_owned()))?;
    match parsed.scheme() {
        "https" => Ok(false),
        "http" => {
            let loopback = match parsed.host() {
                Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                Some(url::Host::Domain(d)) => d == "localhost",
                None => false,
            };
            if loopback {
                Ok(true)
            } else {
                Err(ApiUrlError::Cleartext(url.to_owned()))
            }
        }
        _ => Err(ApiUrlError::Invalid(url.to_owned())),
    }
}

/// slack-morphism's client for `api_url` (checked with [`check_api_url`]).
///
/// # Errors
/// A bad URL, or no usable root certificates.
pub fn client(api_url: &str) -> anyhow::Result<Arc<SlackHyperClient>> {
    let allow_http = check_api_url(api_url)?;
    let builder = hyper_rustls::HttpsConnectorBuilder::new().with_native_roots()?;
    let https = if allow_http {
        builder
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .build()
    } else {
        builder.https_only().enable_http1().enable_http2().build()
    };
    let connector = SlackClientHyperConnector::with_connector(https)
        .with_slack_api_url(api_url.trim_end_matches('/'));
    Ok(Arc::new(SlackClient::new(connector)))
}

/// A token for slack-morphism (its `Debug` shows only the length).
pub fn token(secret: &Secret) -> SlackApiToken {
    SlackApiToken::new(SlackApiTokenValue(secret.expose().to_owned()))
}

/// The message content of a reply.
pub fn content(reply: &Reply) -> SlackMessageContent {
    SlackMessageContent::new()
        .with_text(reply.text.clone())
        .with_blocks(reply.blocks.clone())
}

/// `response_type` of a reply to a slash command.
pub fn response_type(reply: &Reply) -> SlackMessageResponseType {
    match reply.visibility {
        Visibility::Public => SlackMessageResponseType::InChannel,
        Visibility::Private => SlackMessageResponseType::Ephemeral,
    }
}

/// The body posted to a `response_url` (slack-morphism's webhook request has no `response_type`).
#[derive(Serialize)]
struct ResponseUrlMessage {
    #[serde(flatten)]
    content: SlackMessageContent,
    response_type: SlackMessageResponseType,
    replace_original: bool,
}

/// Posts replies with the bot token.
#[derive(Clone)]
pub struct Poster {
    client: Arc<SlackHyperClient>,
    token: SlackApiToken,
}

impl Poster {
    /// A poster using `client` and the bot token.
    pub fn new(client: Arc<SlackHyperClient>, bot_token: &Secret) -> Self {
        Self {
            client,
            token: token(bot_token),
        }
    }

    /// Posts `reply` where `request` came from.
    ///
    /// # Errors
    /// Slack's error (`channel_not_found`, `expired_url`, ...) or the transport's, as text.
    pub async fn post(&self, request: &Request, reply: &Reply) -> Result<(), String> {
        let session = self.client.open_session(&self.token);
        let channel = request.channel.clone().into();
        match &request.surface {
            Surface::Slash { response_url, .. } => self.respond(response_url, reply).await,
            Surface::Mention { thread_ts } if reply.visibility == Visibility::Private => {
                let post = SlackApiChatPostEphemeralRequest::new(
                    channel,
                    request.user.clone().into(),
                    content(reply),
                )
                .with_thread_ts(thread_ts.clone().into());
                session
                    .chat_post_ephemeral(&post)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
            Surface::Mention { thread_ts } => {
                let post = SlackApiChatPostMessageRequest::new(channel, content(reply))
                    .with_thread_ts(thread_ts.clone().into());
                session
                    .chat_post_message(&post)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
            Surface::Direct => {
                let post = SlackApiChatPostMessageRequest::new(channel, content(reply));
                session
                    .chat_post_message(&post)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
        }
    }

    async fn respond(&self, response_url: &str, reply: &Reply) -> Result<(), String> {
        let url = url::Url::parse(response_url).map_err(|e| format!("response_url: {e}"))?;
        let body = ResponseUrlMessage {
            content: content(reply),
            response_type: response_type(reply),
            replace_original: false,
        };
        let span = tracing::debug_span!("slack response_url");
        let context = SlackClientApiCallContext {
            rate_control_params: None,
            token: None,
            tracing_span: &span,
            // The URL itself lets anyone post as the app for 30 minutes: keep it out of the logs.
            is_sensitive_url: true,
        };
        self.client
            .http_api
            .connector
            .http_post_uri::<_, SlackApiPostWebhookMessageResponse>(url, &body, context)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_url_must_be_https_unless_loopback() {
        assert_eq!(check_api_url("https://slack.com/api"), Ok(false));
        assert_eq!(check_api_url("http://127.0.0.1:4000/api"), Ok(true));
        assert_eq!(check_api_url("http://[::1]:4000/api"), Ok(true));
        assert_eq!(check_api_url("http://localhost:4000/api"), Ok(true));
        assert!(matches!(
            check_api_url("http://10.0.0.5/api"),
            Err(ApiUrlError::Cleartext(_))
        ));
        assert!(matches!(
            check_api_url("ftp://x"),
            Err(ApiUrlError::Invalid(_))
        ));
        assert!(matches!(
            check_api_url("slack.com"),
            Err(ApiUrlError::Invalid(_))
        ));
    }

    #[test]
    fn response_url_bodies_carry_the_visibility() {
        let reply = crate::slack::blocks::help("/fleet ");
        let body = ResponseUrlMessage {
            content: content(&reply),
            response_type: response_type(&reply),
            replace_original: false,
        };
        let json = serde_json::to_value(&body).unwrap();
        assert_eq!(json["response_type"], "ephemeral");
        assert_eq!(json["text"], "Model Fleet commands");
        assert!(json["blocks"].is_array());
    }
}
