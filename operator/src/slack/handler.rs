//! From an envelope to replies: dedup, parse, authorize, acknowledge at once, run the rest in the background and
//! post the result.
//!
//! [`plan`] is the pure part: a command that needs no cluster (help, refusals, "not enabled") is answered in the
//! ack itself; anything else is acknowledged with "working on it" and continues in a task, so the ack never waits for
//! the Kubernetes API (Slack's limit is 3 seconds).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::runtime::events::Reporter;
use model_fleet_api::v1alpha1::Intent;
use serde_json::json;
use tokio_util::task::TaskTracker;

use super::access::{Clients, caller_name};
use super::actions::{self, ChangeRequest, Desired, Kind, Outcome};
use super::authz::{self, Caller};
use super::blocks::{self, Change, Reply};
use super::command::{self, Command, Switch, Target};
use super::config::Policy;
use super::envelope::{self, Dedup, Envelope, Request, Surface};
use super::explain::{self, Attempt};
use super::post::{self, Poster};
use crate::controller::events::{self, EventRecorder};

/// What to do with a request.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// Answer now (in the ack of a slash command), nothing else.
    Answer(Reply),
    /// Run `command` as `caller` in the background.
    Run {
        /// The command.
        command: Command,
        /// Who it runs as.
        caller: Caller,
    },
}

/// Parses and authorizes a request (pure).
pub fn plan(policy: &Policy, request: &Request, prefix: &str) -> Plan {
    let command = match command::parse(&request.text) {
        Ok(command) => command,
        Err(error) => return Plan::Answer(blocks::parse_error(&error, prefix)),
    };
    match authz::decide(policy, &request.user, &request.channel, &command) {
        Err(refusal) => Plan::Answer(explain::refusal(&refusal, prefix)),
        Ok(_) if command == Command::Help => Plan::Answer(blocks::help(prefix)),
        Ok(_) if !command.needs_cluster() => match command {
            Command::NotEnabled(feature) => Plan::Answer(blocks::not_enabled(feature, prefix)),
            _ => Plan::Answer(blocks::help(prefix)),
        },
        Ok(caller) => Plan::Run { command, caller },
    }
}

/// The bot's own Slack identity (from `auth.test`).
#[derive(Clone, Debug)]
pub struct BotUser {
    /// Its user id (messages from it are ignored).
    pub id: String,
    /// Its name, for the mention prefix in hints (`@model-fleet stop NAME`).
    pub name: String,
}

/// Everything a request needs.
pub struct Bot {
    /// The authorization lists.
    pub policy: Policy,
    /// Kubernetes clients.
    pub clients: Clients,
    /// Who Events on changed objects come from (written with the bot's own identity).
    pub reporter: Reporter,
    /// Replies.
    pub poster: Poster,
    /// The bot's Slack user.
    pub user: BotUser,
    /// Test hook: wait this long before the Kubernetes calls of a command.
    pub delay: Duration,
    /// Envelopes handled.
    pub dedup: Mutex<Dedup>,
    /// The commands and replies still running, so a shutdown lets them finish ([`Bot::drain`]).
    pub tasks: TaskTracker,
}

fn ack(envelope: &Envelope, payload: Option<&Reply>) -> String {
    match payload {
        Some(reply) => json!({"envelope_id": envelope.id, "payload": {
            "text": reply.text, "blocks": reply.blocks, "response_type": post::response_type(reply)}}),
        None => json!({"envelope_id": envelope.id}),
    }
    .to_string()
}

impl Bot {
    /// The hint prefix of a surface: `/fleet `, `@bot ` or nothing in a DM.
    pub fn prefix(&self, surface: &Surface) -> String {
        match surface {
            Surface::Slash { command, .. } => format!("{command} "),
            Surface::Mention { .. } => format!("@{} ", self.user.name),
            Surface::Direct => String::new(),
        }
    }

    /// Handles one envelope and returns its ack frame. Never waits for Kubernetes or the Web API.
    pub fn on_envelope(self: &Arc<Self>, envelope: Envelope) -> String {
        let request = match envelope::request(&envelope, &self.user.id) {
            Ok(Some(request)) => request,
            Ok(None) => return ack(&envelope, None),
            Err(error) => {
                tracing::warn!(envelope_id = %envelope.id, %error, "unreadable envelope acknowledged");
                return ack(&envelope, None);
            }
        };
        let envelope_key = format!("envelope:{}", envelope.id);
        let first = self
            .dedup
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .first_time(&[&envelope_key, &request.payload_key]);
        let prefix = self.prefix(&request.surface);
        let slash = matches!(request.surface, Surface::Slash { .. });
        let plan = plan(&self.policy, &request, &prefix);
        if !first {
            tracing::info!(envelope_id = %envelope.id, retry_attempt = envelope.retry_attempt,
                retry_reason = envelope.retry_reason.as_deref().unwrap_or(""), slack_user = %request.user,
                "redelivered envelope: acknowledged again, not run again");
            // Slack redelivers because it saw no ack: the lost one may have carried a slash command's only answer, so
            // that answer goes again (planning is pure: nothing runs twice). A command that ran posts its result
            // through `response_url`, so its redelivery gets a bare ack, not a late "working on it".
            return match plan {
                Plan::Answer(reply) if slash => ack(&envelope, Some(&reply)),
                _ => ack(&envelope, None),
            };
        }
        tracing::info!(envelope_id = %envelope.id, retry_attempt = envelope.retry_attempt,
            slack_user = %request.user, channel = %request.channel, surface = surface_name(&request.surface),
            text = %request.text, "slack command");
        match plan {
            Plan::Answer(reply) if slash => ack(&envelope, Some(&reply)),
            Plan::Answer(reply) => {
                self.spawn_post(request, reply);
                ack(&envelope, None)
            }
            Plan::Run { command, caller } => {
                let working = blocks::working(&request.text);
                let bot = self.clone();
                self.tasks.spawn(async move {
                    let reply = bot.execute(&request, &command, &caller, &prefix).await;
                    bot.post(&request, &reply).await;
                });
                ack(&envelope, slash.then_some(&working))
            }
        }
    }

    fn spawn_post(self: &Arc<Self>, request: Request, reply: Reply) {
        let bot = self.clone();
        self.tasks
            .spawn(async move { bot.post(&request, &reply).await });
    }

    /// At shutdown, after the connections closed: waits up to `grace` for the commands and replies still running
    /// (a change already written still gets its Event and its reply). Returns how many were cut short.
    pub async fn drain(&self, grace: Duration) -> usize {
        self.tasks.close();
        if tokio::time::timeout(grace, self.tasks.wait()).await.is_ok() {
            0
        } else {
            self.tasks.len()
        }
    }

    async fn post(&self, request: &Request, reply: &Reply) {
        if let Err(error) = self.poster.post(request, reply).await {
            tracing::warn!(slack_user = %request.user, channel = %request.channel, %error, "could not post a reply");
        }
    }

    /// Runs a command that needs the cluster and renders its reply.
    pub async fn execute(
        &self,
        request: &Request,
        command: &Command,
        caller: &Caller,
        prefix: &str,
    ) -> Reply {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        let client = match self.clients.for_caller(caller) {
            Ok(client) => client,
            Err(error) => {
                return explain::failure(&error, self.attempt("help", None, None), prefix);
            }
        };
        let who = caller_name(caller);
        match command {
            Command::Inventory { .. }
            | Command::TrainingList { .. }
            | Command::TrainingStatus { .. } => self.read(&client, who, command, prefix).await,
            Command::Service {
                target,
                switch,
                force,
            } => {
                let (verb, intent) = match switch {
                    Switch::On => ("start", Intent::Active),
                    Switch::Off => ("stop", Intent::Suspended),
                };
                let change = (Kind::Service, Desired::Intent(intent), *force);
                self.change(&client, request, who, verb, target, change, prefix)
                    .await
            }
            Command::TrainingIntent {
                target,
                switch,
                force,
            } => {
                let (verb, intent) = match switch {
                    Switch::On => ("training resume", Intent::Active),
                    Switch::Off => ("training suspend", Intent::Suspended),
                };
                let change = (Kind::Run, Desired::Intent(intent), *force);
                self.change(&client, request, who, verb, target, change, prefix)
                    .await
            }
            Command::TrainingCancel { target, force } => {
                let change = (Kind::Run, Desired::Cancel, *force);
                self.change(
                    &client,
                    request,
                    who,
                    "training cancel",
                    target,
                    change,
                    prefix,
                )
                .await
            }
            Command::Help | Command::NotEnabled(_) => blocks::help(prefix),
        }
    }

    /// The read commands (`inventory`, `training list`, `training status`) and their replies.
    async fn read(
        &self,
        client: &kube::Client,
        who: &str,
        command: &Command,
        prefix: &str,
    ) -> Reply {
        let now = Timestamp::now();
        let default_ns = self.policy.default_namespace.as_str();
        let client = client.clone();
        match command {
            Command::Inventory { namespace } => {
                let ns = namespace.as_deref().unwrap_or(default_ns);
                match actions::inventory(&client, who, ns, now).await {
                    Ok(inventory) => blocks::inventory(&inventory),
                    Err(e) => {
                        explain::failure(&e, self.attempt("inventory", Some(ns), None), prefix)
                    }
                }
            }
            Command::TrainingList { namespace } => {
                let ns = namespace.as_deref().unwrap_or(default_ns);
                match actions::runs(&client, who, ns, now).await {
                    Ok(runs) => blocks::training_list(ns, &runs),
                    Err(e) => {
                        explain::failure(&e, self.attempt("training list", Some(ns), None), prefix)
                    }
                }
            }
            Command::TrainingStatus { target } => {
                let ns = target.namespace_or(default_ns);
                match actions::run_detail(&client, who, ns, &target.name, now).await {
                    Ok(detail) => blocks::training_status(&detail),
                    Err(e) => {
                        let attempt = self.attempt("training status", Some(ns), Some(&target.name));
                        explain::failure(&e, attempt, prefix)
                    }
                }
            }
            _ => blocks::help(prefix),
        }
    }

    fn attempt<'a>(
        &'a self,
        verb: &'a str,
        namespace: Option<&'a str>,
        name: Option<&'a str>,
    ) -> Attempt<'a> {
        Attempt {
            verb,
            namespace: namespace.unwrap_or(&self.policy.default_namespace),
            name,
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn change(
        &self,
        client: &kube::Client,
        request: &Request,
        who: &str,
        verb: &str,
        target: &Target,
        (kind, desired, force): (Kind, Desired, bool),
        prefix: &str,
    ) -> Reply {
        let namespace = target.namespace_or(&self.policy.default_namespace);
        let asked = ChangeRequest {
            kind,
            namespace,
            name: &target.name,
            desired,
            force,
            who,
        };
        let attempt = self.attempt(verb, Some(namespace), Some(&target.name));
        match actions::change(client, &asked).await {
            Ok(Outcome::Unchanged { state }) => {
                blocks::unchanged(kind.name(), namespace, &target.name, &state)
            }
            Ok(Outcome::Changed {
                field,
                from,
                to,
                forced_from,
                reference,
            }) => {
                let change = Change {
                    user: request.user.clone(),
                    verb: past_tense(verb),
                    kind: kind.name(),
                    namespace: namespace.to_owned(),
                    name: target.name.clone(),
                    field: format!("{field}: {from} → {to}"),
                    effect: effect(kind, desired),
                    forced_from,
                };
                self.record(&change, who, &reference).await;
                blocks::changed(&change)
            }
            Err(error) => {
                tracing::info!(slack_user = %request.user, as_user = %who, command = %verb, %namespace,
                    name = %target.name, %error, "slack change refused");
                explain::failure(&error, attempt, prefix)
            }
        }
    }

    async fn record(
        &self,
        change: &Change,
        who: &str,
        reference: &k8s_openapi::api::core::v1::ObjectReference,
    ) {
        let forced = if change.forced_from.is_empty() {
            String::new()
        } else {
            format!(
                " (taken over from {} with force)",
                change.forced_from.join(", ")
            )
        };
        let note = format!(
            "Slack user {} (as {who}) {} it from Slack: {}{forced}",
            change.user, change.verb, change.field
        );
        tracing::info!(slack_user = %change.user, as_user = %who, kind = change.kind, namespace = %change.namespace,
            name = %change.name, change = %change.field, forced_from = ?change.forced_from, "slack change made");
        let reason = format!("Slack{}", capitalized(change.verb));
        // Each change names its own Slack user: an Event of its own ([`EventRecorder`]).
        let recorder = EventRecorder::new(self.clients.bot(), self.reporter.clone());
        events::normal(&recorder, reference, &reason, "SlackCommand", note).await;
    }
}

fn surface_name(surface: &Surface) -> &'static str {
    match surface {
        Surface::Slash { .. } => "slash_command",
        Surface::Mention { .. } => "app_mention",
        Surface::Direct => "direct_message",
    }
}

fn past_tense(verb: &str) -> &'static str {
    match verb {
        "start" => "started",
        "stop" => "stopped",
        "training suspend" => "suspended",
        "training resume" => "resumed",
        _ => "cancelled",
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

fn effect(kind: Kind, desired: Desired) -> &'static str {
    match (kind, desired) {
        (Kind::Service, Desired::Intent(Intent::Suspended)) => {
            "The operator scales it to 0 replicas and pauses its autoscaler; nothing is deleted."
        }
        (Kind::Service, _) => "The operator keeps at least 1 replica running.",
        (Kind::Run, Desired::Intent(Intent::Suspended)) => {
            "Its Job is suspended: pods stop, progress is kept."
        }
        (Kind::Run, Desired::Cancel) => "Its Job stops for good; the run and its history are kept.",
        (Kind::Run, _) => "Its Job runs again.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(user: &str, channel: &str, text: &str) -> Request {
        Request {
            user: user.into(),
            channel: channel.into(),
            text: text.into(),
            surface: Surface::Direct,
            payload_key: "k".into(),
        }
    }

    fn policy() -> Policy {
        Policy::parse("U0ANA", "C0ONE,D0DM", "team-a", vec!["g".into()]).unwrap()
    }

    #[test]
    fn answers_without_the_cluster_when_it_can() {
        let answer = |r: &Request| match plan(&policy(), r, "/fleet ") {
            Plan::Answer(reply) => reply.text,
            Plan::Run { .. } => panic!("expected an answer"),
        };
        assert_eq!(
            answer(&request("U0BOB", "C0NINE", "help")),
            "Model Fleet commands"
        );
        assert!(answer(&request("U0ANA", "C0ONE", "cost")).contains("`cost` is not enabled"));
        assert!(answer(&request("U0ANA", "C0ONE", "frobnicate")).contains("`frobnicate`"));
        assert!(
            answer(&request("U0ANA", "C0NINE", "inventory")).contains("do not run in <#C0NINE>")
        );
        assert!(answer(&request("U0BOB", "C0ONE", "stop llama")).contains("look but not change"));
    }

    #[test]
    fn runs_as_the_mapped_identity() {
        let Plan::Run { command, caller } =
            plan(&policy(), &request("U0ANA", "D0DM", "stop llama"), "")
        else {
            panic!()
        };
        assert!(command.is_mutation());
        assert_eq!(
            caller,
            Caller::Impersonated {
                user: "slack:U0ANA".into(),
                groups: vec!["g".into()]
            }
        );
        let Plan::Run { caller, .. } = plan(&policy(), &request("U0BOB", "C0ONE", "inventory"), "")
        else {
            panic!()
        };
        assert_eq!(caller, Caller::Bot);
    }

    #[test]
    fn acks_echo_the_envelope_id() {
        let envelope = Envelope {
            id: "e1".into(),
            kind: "slash_commands".into(),
            retry_attempt: 0,
            retry_reason: None,
            payload: json!({}),
        };
        assert_eq!(ack(&envelope, None), r#"{"envelope_id":"e1"}"#);
        let with = ack(&envelope, Some(&blocks::help("/fleet ")));
        let value: serde_json::Value = serde_json::from_str(&with).unwrap();
        assert_eq!(value["payload"]["response_type"], "ephemeral");
        assert_eq!(value["envelope_id"], "e1");
    }

    #[test]
    fn event_reasons_are_words() {
        assert_eq!(capitalized(past_tense("stop")), "Stopped");
        assert_eq!(capitalized(past_tense("training cancel")), "Cancelled");
    }
}
