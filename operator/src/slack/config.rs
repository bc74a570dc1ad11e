//! The bot's settings: the three credentials (environment only, never logged) and the authorization lists.
//!
//! Credentials come from `SLACK_BOT_TOKEN` (`xoxb-`, Web API), `SLACK_APP_TOKEN` (`xapp-`, `apps.connections.open`)
//! and optionally `SLACK_SIGNING_SECRET` (not used by Socket Mode, which has no inbound HTTP; accepted so one Secret
//! serves both transports). In a cluster they come from the Secret keys `slack-bot-token`, `slack-app-token` and
//! `slack-signing-secret` (docs/SLACK.md). They are held as [`Secret`], whose `Debug` prints only the length, and
//! no error message ever includes a value.

use std::collections::BTreeSet;
use std::fmt;

use model_fleet_api::names::is_dns_label;

/// Environment variable of the bot token (`xoxb-...`).
pub const BOT_TOKEN_ENV: &str = "SLACK_BOT_TOKEN";
/// Environment variable of the app-level token (`xapp-...`, scope `connections:write`).
pub const APP_TOKEN_ENV: &str = "SLACK_APP_TOKEN";
/// Environment variable of the signing secret (optional in Socket Mode).
pub const SIGNING_SECRET_ENV: &str = "SLACK_SIGNING_SECRET";

/// A credential: `Debug` shows only its length, there is no `Display`, and the value is read with [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one place that sends it (an `Authorization` header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret(redacted, {} bytes)", self.0.len())
    }
}

/// The bot's credentials.
#[derive(Clone, Debug)]
pub struct Credentials {
    /// `SLACK_BOT_TOKEN`: posts replies (`chat.postMessage`, `chat.postEphemeral`) and checks itself (`auth.test`).
    pub bot_token: Secret,
    /// `SLACK_APP_TOKEN`: opens Socket Mode connections (`apps.connections.open`).
    pub app_token: Secret,
    /// `SLACK_SIGNING_SECRET`, when set (unused by Socket Mode).
    pub signing_secret: Option<Secret>,
}

/// A credential that is missing or malformed; the message names the variable and the fix, never the value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// A required variable is unset or empty.
    #[error(
        "{0} is not set: put the {1} in it (in a cluster, from the Secret key {2}; docs/SLACK.md says where to find it)"
    )]
    Missing(&'static str, &'static str, &'static str),
    /// A token with the wrong prefix (e.g. the bot token in the app token's place).
    #[error("{0} does not start with `{1}`: it must hold the {2} (the two tokens may be swapped)")]
    WrongPrefix(&'static str, &'static str, &'static str),
    /// A list entry that is not a Slack id.
    #[error(
        "{var} has `{entry}`, which is not a Slack {what} id ({example}); separate ids with commas"
    )]
    BadId {
        /// The variable.
        var: &'static str,
        /// The offending entry.
        entry: String,
        /// `user` or `channel`.
        what: &'static str,
        /// An example of a valid id.
        example: &'static str,
    },
    /// `DEFAULT_WORKLOAD_NAMESPACE` is not a namespace name.
    #[error(
        "DEFAULT_WORKLOAD_NAMESPACE `{0}` is not a valid namespace name (lowercase letters, digits and '-')"
    )]
    BadNamespace(String),
    /// An entry of `SLACK_PUBLIC_READ_NAMESPACES` that is neither a namespace name nor `*`.
    #[error(
        "SLACK_PUBLIC_READ_NAMESPACES has `{0}`, which is not a namespace name (lowercase letters, digits and '-') \
         nor `*`; separate namespaces with commas"
    )]
    BadReadNamespace(String),
}

impl Credentials {
    /// Reads the credentials through `lookup` (`std::env::var` in the binary, a map in tests).
    ///
    /// # Errors
    /// [`ConfigError::Missing`] or [`ConfigError::WrongPrefix`], naming the variable.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let read =
            |var: &'static str, what: &'static str, key: &'static str, prefix: &'static str| {
                let value = lookup(var)
                    .map(|v| v.trim().to_owned())
                    .filter(|v| !v.is_empty());
                let value = value.ok_or(ConfigError::Missing(var, what, key))?;
                if !value.starts_with(prefix) {
                    return Err(ConfigError::WrongPrefix(var, prefix, what));
                }
                Ok(Secret::new(value))
            };
        Ok(Self {
            bot_token: read(BOT_TOKEN_ENV, "bot token", "slack-bot-token", "xoxb-")?,
            app_token: read(APP_TOKEN_ENV, "app-level token", "slack-app-token", "xapp-")?,
            signing_secret: lookup(SIGNING_SECRET_ENV)
                .filter(|v| !v.trim().is_empty())
                .map(Secret::new),
        })
    }

    /// Every credential value, for log scrubbing checks.
    pub fn values(&self) -> Vec<&str> {
        let mut values = vec![self.bot_token.expose(), self.app_token.expose()];
        values.extend(self.signing_secret.as_ref().map(Secret::expose));
        values
    }
}

/// Who may do what, before Kubernetes RBAC decides (the first of the two layers, docs/SLACK.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// `SLACK_ALLOWED_USER_IDS`: users whose commands run impersonated and may change things. Empty: read-only for
    /// everyone.
    pub allowed_users: BTreeSet<String>,
    /// `SLACK_ALLOWED_CHANNEL_IDS`: when set, the only channels (and DM ids) where commands other than `help` run.
    pub allowed_channels: Option<BTreeSet<String>>,
    /// `DEFAULT_WORKLOAD_NAMESPACE` (default `default`): the namespace of names given without `NAMESPACE/`.
    pub default_namespace: String,
    /// Groups added to the impersonated `slack:<user id>` (default `model-fleet:slack-users`).
    pub impersonation_groups: Vec<String>,
    /// `SLACK_PUBLIC_READ_NAMESPACES`: the namespaces people outside `allowed_users` may read. Their reads run as the
    /// bot, whose read access reaches every namespace, so this list is what keeps them out of the others. `None`:
    /// every namespace (`*`); by default only `default_namespace`.
    pub public_read_namespaces: Option<BTreeSet<String>>,
}

impl Policy {
    /// Builds the policy from the raw variable values (comma or whitespace separated id lists).
    ///
    /// # Errors
    /// [`ConfigError::BadId`] for an entry that is not a Slack id, [`ConfigError::BadNamespace`].
    pub fn parse(
        users: &str,
        channels: &str,
        default_namespace: &str,
        impersonation_groups: Vec<String>,
    ) -> Result<Self, ConfigError> {
        let users = id_list(
            users,
            "SLACK_ALLOWED_USER_IDS",
            "user",
            &['U', 'W'],
            "U012AB3CD",
        )?;
        let channels = id_list(
            channels,
            "SLACK_ALLOWED_CHANNEL_IDS",
            "channel",
            &['C', 'G', 'D'],
            "C012AB3CD",
        )?;
        let namespace = match default_namespace.trim() {
            "" => "default".to_owned(),
            ns if is_dns_label(ns) => ns.to_owned(),
            ns => return Err(ConfigError::BadNamespace(ns.to_owned())),
        };
        Ok(Self {
            allowed_users: users,
            allowed_channels: (!channels.is_empty()).then_some(channels),
            public_read_namespaces: Some(BTreeSet::from([namespace.clone()])),
            default_namespace: namespace,
            impersonation_groups,
        })
    }

    /// Sets [`Policy::public_read_namespaces`] from `SLACK_PUBLIC_READ_NAMESPACES`: namespaces separated by commas or
    /// whitespace, `*` for every namespace; empty keeps the default (the default namespace only).
    ///
    /// # Errors
    /// [`ConfigError::BadReadNamespace`] for an entry that is not a namespace name.
    pub fn with_public_read(mut self, text: &str) -> Result<Self, ConfigError> {
        let entries: Vec<&str> = text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|entry| !entry.is_empty())
            .collect();
        if entries.contains(&"*") {
            self.public_read_namespaces = None;
        } else if !entries.is_empty() {
            let mut namespaces = BTreeSet::new();
            for entry in entries {
                if !is_dns_label(entry) {
                    return Err(ConfigError::BadReadNamespace(entry.to_owned()));
                }
                namespaces.insert(entry.to_owned());
            }
            self.public_read_namespaces = Some(namespaces);
        }
        Ok(self)
    }

    /// Whether people outside the allowlist may read `namespace` ([`Policy::public_read_namespaces`]).
    pub fn publicly_readable(&self, namespace: &str) -> bool {
        self.public_read_namespaces
            .as_ref()
            .is_none_or(|namespaces| namespaces.contains(namespace))
    }
}

fn id_list(
    text: &str,
    var: &'static str,
    what: &'static str,
    prefixes: &[char],
    example: &'static str,
) -> Result<BTreeSet<String>, ConfigError> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            let valid = entry.len() >= 3
                && entry.starts_with(prefixes)
                && entry
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
            if valid {
                Ok(entry.to_owned())
            } else {
                Err(ConfigError::BadId {
                    var,
                    entry: entry.to_owned(),
                    what,
                    example,
                })
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn reads_credentials_and_never_prints_them() {
        let creds = Credentials::from_lookup(env(&[
            (BOT_TOKEN_ENV, "xoxb-1-hidden"),
            (APP_TOKEN_ENV, " xapp-1-hidden "),
        ]))
        .unwrap();
        assert_eq!(creds.app_token.expose(), "xapp-1-hidden");
        assert_eq!(creds.signing_secret, None);
        let printed = format!("{creds:?}");
        assert!(!printed.contains("hidden"), "{printed}");
        assert!(printed.contains("redacted"), "{printed}");
    }

    #[test]
    fn names_the_missing_or_swapped_variable() {
        let missing = Credentials::from_lookup(env(&[(APP_TOKEN_ENV, "xapp-1")])).unwrap_err();
        assert_eq!(
            missing,
            ConfigError::Missing(BOT_TOKEN_ENV, "bot token", "slack-bot-token")
        );
        let swapped = Credentials::from_lookup(env(&[
            (BOT_TOKEN_ENV, "xapp-oops"),
            (APP_TOKEN_ENV, "xoxb-oops"),
        ]))
        .unwrap_err();
        assert!(
            swapped
                .to_string()
                .contains("SLACK_BOT_TOKEN does not start with `xoxb-`")
        );
        assert!(!swapped.to_string().contains("oops"));
    }

    #[test]
    fn parses_the_policy_lists() {
        let groups = vec!["model-fleet:slack-users".to_owned()];
        let policy = Policy::parse("U1AB, W2CD\nU3EF", "", "", groups.clone()).unwrap();
        assert_eq!(policy.allowed_users.len(), 3);
        assert_eq!(policy.allowed_channels, None);
        assert_eq!(policy.default_namespace, "default");
        let policy = Policy::parse("", "C0FLEET,D0DM", "team-a", groups.clone()).unwrap();
        assert!(policy.allowed_users.is_empty());
        assert_eq!(policy.allowed_channels.unwrap().len(), 2);
        let bad = Policy::parse("alice", "", "", groups.clone()).unwrap_err();
        assert!(
            bad.to_string()
                .contains("`alice`, which is not a Slack user id"),
            "{bad}"
        );
        let bad = Policy::parse("", "", "Team_A", groups.clone()).unwrap_err();
        assert_eq!(bad, ConfigError::BadNamespace("Team_A".into()));
    }

    #[test]
    fn people_outside_the_allowlist_read_the_default_namespace_unless_told_otherwise() {
        let groups = vec!["model-fleet:slack-users".to_owned()];
        let policy = Policy::parse("", "", "team-a", groups).unwrap();
        assert!(policy.publicly_readable("team-a") && !policy.publicly_readable("team-b"));
        let listed = policy.clone().with_public_read("team-b, team-c").unwrap();
        assert!(listed.publicly_readable("team-c") && !listed.publicly_readable("team-a"));
        assert!(
            policy
                .clone()
                .with_public_read("")
                .unwrap()
                .publicly_readable("team-a")
        );
        let all = policy.clone().with_public_read("*").unwrap();
        assert!(all.publicly_readable("anything"));
        assert_eq!(
            policy.with_public_read("team-b,Team_C").unwrap_err(),
            ConfigError::BadReadNamespace("Team_C".into())
        );
    }
}
