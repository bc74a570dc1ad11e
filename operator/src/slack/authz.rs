//! The bot's own authorization layer (pure): channel allowlist, then user allowlist. What an allowed person may
//! touch is then decided by Kubernetes RBAC, because every call made for an allowlisted user impersonates
//! `slack:<user id>` with the configured groups (the second layer, docs/SLACK.md).

use super::command::Command;
use super::config::Policy;

/// Prefix of the Kubernetes user name impersonated for a Slack user (`slack:U012AB3CD`).
pub const USER_PREFIX: &str = "slack:";

/// The Kubernetes identity a command runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// The bot's own ServiceAccount (read access only): read commands of people outside `SLACK_ALLOWED_USER_IDS`.
    Bot,
    /// Impersonation of `user` with `groups`: every call for an allowlisted person.
    Impersonated {
        /// `slack:<user id>`.
        user: String,
        /// The configured groups (e.g. `model-fleet:slack-users`).
        groups: Vec<String>,
    },
}

/// Why the bot itself refuses a command (before any Kubernetes call).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `SLACK_ALLOWED_CHANNEL_IDS` is set and does not hold this channel.
    Channel {
        /// The channel the command came from.
        channel: String,
        /// The channels where commands run.
        allowed: Vec<String>,
    },
    /// A read by someone outside `SLACK_ALLOWED_USER_IDS` of a namespace outside `SLACK_PUBLIC_READ_NAMESPACES`.
    NotPublic {
        /// The Slack user id.
        user: String,
        /// The namespace asked for.
        namespace: String,
        /// The namespaces such people may read (`None`: all, never refused).
        readable: Vec<String>,
    },
    /// A change asked by someone outside `SLACK_ALLOWED_USER_IDS` (everyone, when it is empty).
    ReadOnly {
        /// The Slack user id.
        user: String,
        /// Whether the allowlist is empty (read-only for everyone).
        nobody_allowed: bool,
    },
}

/// Decides whether `user` may run `command` in `channel`, and as whom.
///
/// `help` runs everywhere (it tells where the bot works); other commands only in allowed channels; changes only for
/// allowlisted users; reads of others (which run as the bot) only in `SLACK_PUBLIC_READ_NAMESPACES`.
///
/// # Errors
/// The [`Refusal`] to show the person.
pub fn decide(
    policy: &Policy,
    user: &str,
    channel: &str,
    command: &Command,
) -> Result<Caller, Refusal> {
    if matches!(command, Command::Help) {
        return Ok(Caller::Bot);
    }
    if let Some(allowed) = &policy.allowed_channels
        && !allowed.contains(channel)
    {
        return Err(Refusal::Channel {
            channel: channel.to_owned(),
            allowed: allowed.iter().cloned().collect(),
        });
    }
    if policy.allowed_users.contains(user) {
        return Ok(Caller::Impersonated {
            user: format!("{USER_PREFIX}{user}"),
            groups: policy.impersonation_groups.clone(),
        });
    }
    if command.is_mutation() {
        return Err(Refusal::ReadOnly {
            user: user.to_owned(),
            nobody_allowed: policy.allowed_users.is_empty(),
        });
    }
    if let Some(namespace) = read_namespace(command, &policy.default_namespace)
        && !policy.publicly_readable(namespace)
    {
        return Err(Refusal::NotPublic {
            user: user.to_owned(),
            namespace: namespace.to_owned(),
            readable: policy
                .public_read_namespaces
                .iter()
                .flatten()
                .cloned()
                .collect(),
        });
    }
    Ok(Caller::Bot)
}

/// The namespace a read command reads (`None` for commands that read nothing).
fn read_namespace<'a>(command: &'a Command, default: &'a str) -> Option<&'a str> {
    match command {
        Command::Inventory { namespace } | Command::TrainingList { namespace } => {
            Some(namespace.as_deref().unwrap_or(default))
        }
        Command::TrainingStatus { target } => Some(target.namespace_or(default)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slack::command::parse;

    fn policy(users: &str, channels: &str) -> Policy {
        Policy::parse(
            users,
            channels,
            "team-a",
            vec!["model-fleet:slack-users".into()],
        )
        .unwrap()
    }

    #[test]
    fn empty_allowlist_is_read_only_for_everyone() {
        let p = policy("", "");
        assert_eq!(
            decide(&p, "U0ANA", "C0ONE", &parse("inventory").unwrap()),
            Ok(Caller::Bot)
        );
        assert_eq!(
            decide(&p, "U0ANA", "C0ONE", &parse("stop llama").unwrap()),
            Err(Refusal::ReadOnly {
                user: "U0ANA".into(),
                nobody_allowed: true
            })
        );
    }

    #[test]
    fn allowlisted_users_are_impersonated_for_every_call() {
        let p = policy("U0ANA", "");
        let caller = Caller::Impersonated {
            user: "slack:U0ANA".into(),
            groups: vec!["model-fleet:slack-users".into()],
        };
        assert_eq!(
            decide(&p, "U0ANA", "C0ONE", &parse("stop llama").unwrap()),
            Ok(caller.clone())
        );
        assert_eq!(
            decide(&p, "U0ANA", "C0ONE", &parse("inventory").unwrap()),
            Ok(caller)
        );
        assert_eq!(
            decide(
                &p,
                "U0BOB",
                "C0ONE",
                &parse("training cancel x confirm").unwrap()
            ),
            Err(Refusal::ReadOnly {
                user: "U0BOB".into(),
                nobody_allowed: false
            })
        );
        assert_eq!(
            decide(&p, "U0BOB", "C0ONE", &parse("training list").unwrap()),
            Ok(Caller::Bot)
        );
    }

    #[test]
    fn others_read_only_the_public_namespaces_as_the_bot() {
        let p = policy("U0ANA", "");
        for text in [
            "inventory team-b",
            "training list team-b",
            "training status team-b/ft",
        ] {
            assert_eq!(
                decide(&p, "U0BOB", "C0ONE", &parse(text).unwrap()),
                Err(Refusal::NotPublic {
                    user: "U0BOB".into(),
                    namespace: "team-b".into(),
                    readable: vec!["team-a".into()]
                }),
                "{text}"
            );
        }
        // Allowlisted people read as themselves: the cluster's RBAC decides.
        assert!(decide(&p, "U0ANA", "C0ONE", &parse("inventory team-b").unwrap()).is_ok());
        let open = p.with_public_read("*").unwrap();
        assert_eq!(
            decide(&open, "U0BOB", "C0ONE", &parse("inventory team-b").unwrap()),
            Ok(Caller::Bot)
        );
    }

    #[test]
    fn channel_allowlist_applies_to_everything_but_help() {
        let p = policy("U0ANA", "C0FLEET");
        let refused = decide(&p, "U0ANA", "C0OTHER", &parse("inventory").unwrap());
        assert_eq!(
            refused,
            Err(Refusal::Channel {
                channel: "C0OTHER".into(),
                allowed: vec!["C0FLEET".into()]
            })
        );
        assert_eq!(
            decide(&p, "U0ANA", "C0OTHER", &parse("help").unwrap()),
            Ok(Caller::Bot)
        );
        assert!(decide(&p, "U0ANA", "C0FLEET", &parse("stop x").unwrap()).is_ok());
    }
}
