//! The Slack bot (`model-fleet-operator slack`): `/fleet` commands, mentions and direct messages over Socket Mode
//! (no public ingress), authorized in two layers: the bot's allowlists, then Kubernetes RBAC through impersonation
//! of `slack:<user id>` (docs/SLACK.md).
//!
//! One job per module:
//! - [`config`]: credentials from the environment (never logged) and the authorization lists;
//! - [`socket`]: the Socket Mode transport (slack-morphism's WebSocket clients, our frame listener);
//! - [`envelope`]: frames, requests and redelivery dedup (pure);
//! - [`command`]: what a person typed (pure); [`authz`]: the bot's own allow/refuse decision (pure);
//! - [`handler`]: ack at once, run in the background, post the reply;
//! - [`access`]: Kubernetes clients (impersonation) and API errors; [`actions`]: inventory, reads and
//!   server-side applies of one field (`model-fleet-slack`);
//! - [`inventory`]: rows (pure); [`blocks`]: Block Kit replies (pure); [`explain`]: refusals and failures (pure);
//! - [`post`]: the Web API (`chat.postMessage`, `chat.postEphemeral`, `response_url`).

pub mod access;
pub mod actions;
pub mod authz;
pub mod blocks;
pub mod command;
pub mod config;
pub mod envelope;
pub mod explain;
pub mod handler;
pub mod inventory;
pub mod post;
pub mod socket;
