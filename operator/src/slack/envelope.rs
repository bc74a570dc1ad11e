//! Socket Mode frames (pure): what arrived, who asked what where, and whether it was seen before.
//!
//! Slack sends `hello` when a connection is ready, `disconnect` before it closes one (reasons `refresh_requested`,
//! `warning`, `link_disabled`), and envelopes (`slash_commands`, `events_api`, `interactive`) that must be
//! acknowledged with their `envelope_id` within 3 seconds. An envelope not acknowledged in time is redelivered with
//! the same `envelope_id` and a higher `retry_attempt` (possibly on another connection), so the bot remembers what it
//! handled ([`Dedup`]) and handles each envelope once. Payloads are slack-morphism's models.

use std::collections::{HashSet, VecDeque};

use serde::Deserialize;
use slack_morphism::events::{SlackCommandEvent, SlackEventCallbackBody, SlackPushEventCallback};
use slack_morphism::prelude::SlackChannelType;

/// One text frame from the Socket Mode WebSocket.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    /// The connection is ready.
    Hello {
        /// Connections Slack counts for this app.
        num_connections: Option<u32>,
    },
    /// Slack will close this connection; the client must open a new one.
    Disconnect {
        /// `refresh_requested`, `warning`, `link_disabled`, ...
        reason: String,
    },
    /// An envelope to acknowledge.
    Envelope(Envelope),
}

/// An envelope: a slash command, an Events API callback or an interaction.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope {
    /// `envelope_id`, echoed in the ack.
    pub id: String,
    /// `slash_commands`, `events_api`, `interactive`, or another type Slack adds later.
    pub kind: String,
    /// `retry_attempt` (0 on first delivery).
    pub retry_attempt: u32,
    /// `retry_reason` of a redelivery (e.g. `timeout`).
    pub retry_reason: Option<String>,
    /// `payload`, decoded by [`request`].
    pub payload: serde_json::Value,
}

#[derive(Deserialize)]
struct RawFrame {
    #[serde(rename = "type")]
    kind: String,
    envelope_id: Option<String>,
    #[serde(default)]
    retry_attempt: u32,
    retry_reason: Option<String>,
    #[serde(default)]
    payload: serde_json::Value,
    reason: Option<String>,
    num_connections: Option<u32>,
}

/// Decodes a text frame.
///
/// # Errors
/// The frame is not JSON, has no `type`, or is an envelope type without `envelope_id`.
pub fn frame(text: &str) -> Result<Frame, String> {
    let raw: RawFrame =
        serde_json::from_str(text).map_err(|e| format!("not a Socket Mode frame: {e}"))?;
    match raw.kind.as_str() {
        "hello" => Ok(Frame::Hello {
            num_connections: raw.num_connections,
        }),
        "disconnect" => Ok(Frame::Disconnect {
            reason: raw.reason.unwrap_or_default(),
        }),
        kind => Ok(Frame::Envelope(Envelope {
            id: raw
                .envelope_id
                .ok_or_else(|| format!("a `{kind}` frame without envelope_id"))?,
            kind: kind.to_owned(),
            retry_attempt: raw.retry_attempt,
            retry_reason: raw.retry_reason,
            payload: raw.payload,
        })),
    }
}

/// Where a command came from, which decides how replies are sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Surface {
    /// `/fleet ...`: replies in the ack and through `response_url`.
    Slash {
        /// The command as registered (`/fleet`).
        command: String,
        /// Where follow-ups go (valid 30 minutes, 5 uses).
        response_url: String,
    },
    /// `@bot ...` in a channel: replies in the thread (`chat.postMessage`), refusals only to the person
    /// (`chat.postEphemeral`).
    Mention {
        /// The thread to reply in (the mention's own `ts` when it was not in a thread).
        thread_ts: String,
    },
    /// A direct message to the bot: replies in the conversation.
    Direct,
}

/// A person's command, whatever the surface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The Slack user id (`U...`).
    pub user: String,
    /// The channel or DM id.
    pub channel: String,
    /// What they typed (for mentions, with the mention itself).
    pub text: String,
    /// The surface.
    pub surface: Surface,
    /// A key of the payload that is the same on every delivery (`trigger_id` of a slash command, `event_id` of an
    /// event), checked beside the envelope id.
    pub payload_key: String,
}

/// The person's request in an envelope, or `None` for envelopes the bot ignores (interactions, message edits, its
/// own messages, other event types).
///
/// # Errors
/// The payload does not match the envelope type's model.
pub fn request(envelope: &Envelope, bot_user: &str) -> Result<Option<Request>, String> {
    match envelope.kind.as_str() {
        "slash_commands" => {
            let event: SlackCommandEvent = serde_json::from_value(envelope.payload.clone())
                .map_err(|e| format!("slash command payload: {e}"))?;
            Ok(Some(Request {
                user: event.user_id.0,
                channel: event.channel_id.0,
                text: event.text.unwrap_or_default(),
                surface: Surface::Slash {
                    command: event.command.0,
                    response_url: event.response_url.0.to_string(),
                },
                payload_key: format!("trigger:{}", event.trigger_id.0),
            }))
        }
        "events_api" => {
            let callback: SlackPushEventCallback = serde_json::from_value(envelope.payload.clone())
                .map_err(|e| format!("events_api payload: {e}"))?;
            Ok(event_request(callback, bot_user))
        }
        _ => Ok(None),
    }
}

fn event_request(callback: SlackPushEventCallback, bot_user: &str) -> Option<Request> {
    let payload_key = format!("event:{}", callback.event_id.0);
    match callback.event {
        // Editing a message that mentions the bot delivers a new `app_mention` (new event id) with `edited` set: the
        // command ran when the message was first posted, so an edit (a typo fixed) must not run it again.
        SlackEventCallbackBody::AppMention(mention) if mention.edited.is_some() => None,
        SlackEventCallbackBody::AppMention(mention) => Some(Request {
            user: mention.user.0,
            channel: mention.channel.0,
            text: mention.content.text.unwrap_or_default(),
            surface: Surface::Mention {
                thread_ts: mention.origin.thread_ts.unwrap_or(mention.origin.ts).0,
            },
            payload_key,
        }),
        SlackEventCallbackBody::Message(message) => {
            let direct = message.origin.channel_type == Some(SlackChannelType("im".into()));
            let from_person = message.subtype.is_none() && message.sender.bot_id.is_none();
            let user = message.sender.user?.0;
            if !direct || !from_person || user == bot_user {
                return None;
            }
            Some(Request {
                user,
                channel: message.origin.channel?.0,
                text: message.content.and_then(|c| c.text).unwrap_or_default(),
                surface: Surface::Direct,
                payload_key,
            })
        }
        _ => None,
    }
}

/// The envelope ids and payload keys handled recently (bounded: the oldest are forgotten first). Slack redelivers
/// within minutes, far fewer than [`Dedup::CAPACITY`] envelopes apart.
#[derive(Debug, Default)]
pub struct Dedup {
    seen: HashSet<String>,
    order: VecDeque<String>,
}

impl Dedup {
    /// Keys remembered.
    pub const CAPACITY: usize = 4096;

    /// Records `keys`; `true` when none of them was seen before (the envelope is new).
    pub fn first_time(&mut self, keys: &[&str]) -> bool {
        let new = keys.iter().all(|k| !self.seen.contains(*k));
        for key in keys {
            if self.seen.insert((*key).to_owned()) {
                self.order.push_back((*key).to_owned());
            }
        }
        while self.order.len() > Self::CAPACITY {
            if let Some(old) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn slash(id: &str, retry: u32) -> String {
        json!({"type": "slash_commands", "envelope_id": id, "retry_attempt": retry, "retry_reason": "timeout",
               "accepts_response_payload": true,
               "payload": {"token": "legacy", "team_id": "T1", "team_domain": "acme", "channel_id": "C1",
                           "channel_name": "fleet", "user_id": "U1", "user_name": "ana", "command": "/fleet",
                           "text": "stop llama", "api_app_id": "A1", "is_enterprise_install": "false",
                           "response_url": "https://hooks.slack.com/commands/T1/1/abc", "trigger_id": "1.2.3"}})
        .to_string()
    }

    fn event(event: serde_json::Value) -> Envelope {
        let text = json!({"type": "events_api", "envelope_id": "e1", "accepts_response_payload": false,
            "payload": {"token": "legacy", "team_id": "T1", "api_app_id": "A1", "event": event,
                        "type": "event_callback", "event_id": "Ev1", "event_time": 1700000000}});
        match frame(&text.to_string()).unwrap() {
            Frame::Envelope(e) => e,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn decodes_control_frames() {
        assert_eq!(
            frame(
                r#"{"type":"hello","num_connections":1,"debug_info":{"host":"h"},"connection_info":{"app_id":"A"}}"#
            ),
            Ok(Frame::Hello {
                num_connections: Some(1)
            })
        );
        assert_eq!(
            frame(
                r#"{"type":"disconnect","reason":"refresh_requested","debug_info":{"host":"h"}}"#
            ),
            Ok(Frame::Disconnect {
                reason: "refresh_requested".into()
            })
        );
        assert!(frame("not json").is_err());
        assert!(
            frame(r#"{"type":"events_api"}"#)
                .unwrap_err()
                .contains("without envelope_id")
        );
    }

    #[test]
    fn a_slash_command_is_a_request_with_its_response_url() {
        let Frame::Envelope(envelope) = frame(&slash("s1", 2)).unwrap() else {
            panic!()
        };
        assert_eq!((envelope.id.as_str(), envelope.retry_attempt), ("s1", 2));
        assert_eq!(envelope.retry_reason.as_deref(), Some("timeout"));
        let request = request(&envelope, "UBOT").unwrap().unwrap();
        assert_eq!(
            (request.user.as_str(), request.channel.as_str()),
            ("U1", "C1")
        );
        assert_eq!(request.text, "stop llama");
        assert_eq!(request.payload_key, "trigger:1.2.3");
        assert_eq!(
            request.surface,
            Surface::Slash {
                command: "/fleet".into(),
                response_url: "https://hooks.slack.com/commands/T1/1/abc".into()
            }
        );
    }

    #[test]
    fn mentions_reply_in_their_thread() {
        let e = event(
            json!({"type": "app_mention", "user": "U1", "text": "<@UBOT> inventory", "ts": "10.1",
                             "channel": "C1", "event_ts": "10.1"}),
        );
        let r = request(&e, "UBOT").unwrap().unwrap();
        assert_eq!(
            r.surface,
            Surface::Mention {
                thread_ts: "10.1".into()
            }
        );
        assert_eq!(r.payload_key, "event:Ev1");
        let e = event(
            json!({"type": "app_mention", "user": "U1", "text": "<@UBOT> help", "ts": "10.2",
                             "thread_ts": "9.0", "channel": "C1", "event_ts": "10.2"}),
        );
        assert_eq!(
            request(&e, "UBOT").unwrap().unwrap().surface,
            Surface::Mention {
                thread_ts: "9.0".into()
            }
        );
        let edited = event(
            json!({"type": "app_mention", "user": "U1", "text": "<@UBOT> stop llama", "ts": "10.3",
                   "channel": "C1", "event_ts": "10.9", "edited": {"user": "U1", "ts": "10.9"}}),
        );
        assert_eq!(
            request(&edited, "UBOT"),
            Ok(None),
            "an edit does not run the command again"
        );
    }

    #[test]
    fn direct_messages_from_people_only() {
        let dm = |extra: serde_json::Value| {
            let mut body = json!({"type": "message", "channel": "D1", "user": "U1", "text": "inventory",
                                  "ts": "11.1", "event_ts": "11.1", "channel_type": "im"});
            body.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            request(&event(body), "UBOT").unwrap()
        };
        let r = dm(json!({})).unwrap();
        assert_eq!(
            (r.channel.as_str(), r.surface.clone()),
            ("D1", Surface::Direct)
        );
        assert_eq!(dm(json!({"bot_id": "B1"})), None, "the bot's own reply");
        assert_eq!(dm(json!({"user": "UBOT"})), None);
        assert_eq!(dm(json!({"subtype": "message_changed"})), None);
        assert_eq!(dm(json!({"channel_type": "channel"})), None);
    }

    #[test]
    fn other_envelopes_are_ignored() {
        let e = Envelope {
            id: "i".into(),
            kind: "interactive".into(),
            retry_attempt: 0,
            retry_reason: None,
            payload: json!({}),
        };
        assert_eq!(request(&e, "UBOT"), Ok(None));
        let bad = Envelope {
            kind: "slash_commands".into(),
            ..e
        };
        assert!(
            request(&bad, "UBOT")
                .unwrap_err()
                .contains("slash command payload")
        );
    }

    #[test]
    fn dedup_handles_each_envelope_once() {
        let mut dedup = Dedup::default();
        assert!(dedup.first_time(&["env:1", "trigger:a"]));
        assert!(!dedup.first_time(&["env:1", "trigger:a"]), "redelivery");
        assert!(
            !dedup.first_time(&["env:2", "trigger:a"]),
            "same payload, new envelope"
        );
        assert!(dedup.first_time(&["env:3", "trigger:b"]));
        for i in 0..Dedup::CAPACITY {
            dedup.first_time(&[&format!("k{i}")]);
        }
        assert!(
            dedup.first_time(&["env:1"]),
            "forgotten after CAPACITY newer keys"
        );
    }
}
