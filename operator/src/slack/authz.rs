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
/// allowlisted users.
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
    Ok(Caller::Bot)
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
