//! What a person typed, as a [`Command`] (pure).
//!
//! The same words work after `/fleet`, after a mention of the bot and in a direct message. Refusals are
//! [`ParseError`]s that say what is wrong and what to type instead (without the `/fleet` or mention prefix, which
//! the renderer adds for the surface the person used).

use std::sync::LazyLock;

use model_fleet_api::names::{is_dns_label, is_dns_subdomain};
use regex::Regex;

/// A link Slack made of a URL or domain typed in a message: `<http://llama.ai|llama.ai>` (its label is what was typed).
static SLACK_LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"<(?:https?://|mailto:)[^<>|]*\|(?P<label>[^<>]*)>").expect("valid regex")
});

/// An object named in a command: `NAME` (in the default namespace) or `NAMESPACE/NAME`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The namespace when given as `NAMESPACE/NAME`.
    pub namespace: Option<String>,
    /// The object's `metadata.name`.
    pub name: String,
}

impl Target {
    /// The namespace to use: the given one or `default`.
    pub fn namespace_or<'a>(&'a self, default: &'a str) -> &'a str {
        self.namespace.as_deref().unwrap_or(default)
    }
}

/// `start` / `stop` of an InferenceService, `suspend` / `resume` of a TrainingRun: the intent written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// `intent: active`.
    On,
    /// `intent: suspended`.
    Off,
}

/// A feature whose commands exist in the grammar but are not enabled in this build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// `cost`.
    Cost,
    /// `snapshot`.
    Snapshot,
    /// `quota`.
    Quota,
}

impl Feature {
    /// The command word.
    pub fn word(self) -> &'static str {
        match self {
            Feature::Cost => "cost",
            Feature::Snapshot => "snapshot",
            Feature::Quota => "quota",
        }
    }
}

/// A parsed command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `help` (also an empty message).
    Help,
    /// `inventory [NAMESPACE]`: inference services, training runs and datasets.
    Inventory {
        /// The namespace, when given.
        namespace: Option<String>,
    },
    /// `start NAME` / `stop NAME [force]`: the InferenceService's `spec.intent`.
    Service {
        /// The InferenceService.
        target: Target,
        /// `On` = start (`active`), `Off` = stop (`suspended`).
        switch: Switch,
        /// `force`: take `spec.intent` over from another field manager (e.g. Terraform).
        force: bool,
    },
    /// `training list [NAMESPACE]`.
    TrainingList {
        /// The namespace, when given.
        namespace: Option<String>,
    },
    /// `training status NAME`.
    TrainingStatus {
        /// The TrainingRun.
        target: Target,
    },
    /// `training suspend|resume NAME [force]`: the TrainingRun's `spec.intent`.
    TrainingIntent {
        /// The TrainingRun.
        target: Target,
        /// `On` = resume (`active`), `Off` = suspend (`suspended`).
        switch: Switch,
        /// As for [`Command::Service`].
        force: bool,
    },
    /// `training cancel NAME confirm [force]`: `spec.cancel: true` (final).
    TrainingCancel {
        /// The TrainingRun.
        target: Target,
        /// As for [`Command::Service`].
        force: bool,
    },
    /// `cost`, `snapshot`, `quota`: answered "not enabled".
    NotEnabled(Feature),
}

impl Command {
    /// Whether the command changes an object (refused to users outside `SLACK_ALLOWED_USER_IDS`).
    pub fn is_mutation(&self) -> bool {
        matches!(
            self,
            Command::Service { .. }
                | Command::TrainingIntent { .. }
                | Command::TrainingCancel { .. }
        )
    }

    /// Whether the command needs the cluster (`help` and "not enabled" answers do not, and are answered in the ack).
    pub fn needs_cluster(&self) -> bool {
        !matches!(self, Command::Help | Command::NotEnabled(_))
    }
}

/// A command that cannot run as typed: what is wrong and, when there is one, what to type instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// What is wrong, one sentence.
    pub problem: String,
    /// The command to type instead (no `/fleet` prefix), when there is one.
    pub try_instead: Option<String>,
}

fn error(problem: impl Into<String>, try_instead: impl Into<String>) -> ParseError {
    ParseError {
        problem: problem.into(),
        try_instead: Some(try_instead.into()),
    }
}

/// Parses the text of a slash command, mention or direct message. Leading mentions (`<@U123>`) are dropped and
/// Slack's links and HTML escapes undone; command words and flags are case-insensitive, names are not.
///
/// # Errors
/// A [`ParseError`] for an unknown word, a missing or invalid name, extra words, or `training cancel` without
/// `confirm`.
pub fn parse(text: &str) -> Result<Command, ParseError> {
    // Slack turns what looks like a domain in a message (a mention, a DM) into a link, `<http://llama.ai|llama.ai>`:
    // the person typed the label. Links are Slack's own `<...>` (a typed `<` arrives as `&lt;`), so this comes first.
    let text = SLACK_LINK.replace_all(text, "$label");
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let words: Vec<&str> = text
        .split_whitespace()
        .skip_while(|w| w.starts_with("<@") && w.ends_with('>'))
        .collect();
    let Some((verb, rest)) = words.split_first() else {
        return Ok(Command::Help);
    };
    match verb.to_ascii_lowercase().as_str() {
        "help" | "?" => Ok(Command::Help),
        "inventory" | "inv" | "ls" => Ok(Command::Inventory {
            namespace: optional_namespace("inventory", rest)?,
        }),
        "start" => service(rest, Switch::On),
        "stop" => service(rest, Switch::Off),
        "training" | "train" => training(rest),
        "cost" | "costs" => Ok(Command::NotEnabled(Feature::Cost)),
        "snapshot" | "snapshots" => Ok(Command::NotEnabled(Feature::Snapshot)),
        "quota" | "quotas" => Ok(Command::NotEnabled(Feature::Quota)),
        other => Err(error(
            format!("I do not know the command `{other}`."),
            "help",
        )),
    }
}

fn service(rest: &[&str], switch: Switch) -> Result<Command, ParseError> {
    let verb = if switch == Switch::On {
        "start"
    } else {
        "stop"
    };
    let (target, flags) = target(verb, "an InferenceService", rest)?;
    let force = only_flags(verb, &target, flags, &["force"])?.contains(&"force");
    Ok(Command::Service {
        target,
        switch,
        force,
    })
}

fn training(rest: &[&str]) -> Result<Command, ParseError> {
    let Some((sub, rest)) = rest.split_first() else {
        return Err(error(
            "`training` needs one of list, status, suspend, resume, cancel.",
            "training list",
        ));
    };
    let sub = sub.to_ascii_lowercase();
    let verb = format!("training {sub}");
    match sub.as_str() {
        "list" | "ls" => Ok(Command::TrainingList {
            namespace: optional_namespace(&verb, rest)?,
        }),
        "status" => {
            let (target, flags) = target(&verb, "a TrainingRun", rest)?;
            only_flags(&verb, &target, flags, &[])?;
            Ok(Command::TrainingStatus { target })
        }
        "suspend" | "resume" => {
            let (target, flags) = target(&verb, "a TrainingRun", rest)?;
            let force = only_flags(&verb, &target, flags, &["force"])?.contains(&"force");
            let switch = if sub == "resume" {
                Switch::On
            } else {
                Switch::Off
            };
            Ok(Command::TrainingIntent {
                target,
                switch,
                force,
            })
        }
        "cancel" => {
            let (target, flags) = target(&verb, "a TrainingRun", rest)?;
            let flags = only_flags(&verb, &target, flags, &["confirm", "force"])?;
            if !flags.contains(&"confirm") {
                let name = display(&target);
                return Err(error(
                    format!(
                        "Cancelling `{name}` is final: its Job stops, the run keeps its history and can never be resumed."
                    ),
                    // The flags typed stay in the hint: a `force` dropped here would only conflict again.
                    if flags.contains(&"force") {
                        format!("training cancel {name} confirm force")
                    } else {
                        format!("training cancel {name} confirm")
                    },
                ));
            }
            Ok(Command::TrainingCancel {
                target,
                force: flags.contains(&"force"),
            })
        }
        other => Err(error(
            format!(
                "`training` has no subcommand `{other}`: use list, status, suspend, resume or cancel."
            ),
            "training list",
        )),
    }
}

/// `NAME` or `NAMESPACE/NAME` as typed, for messages.
pub fn display(target: &Target) -> String {
    match &target.namespace {
        Some(ns) => format!("{ns}/{}", target.name),
        None => target.name.clone(),
    }
}

fn target<'a>(
    verb: &str,
    what: &str,
    rest: &'a [&'a str],
) -> Result<(Target, &'a [&'a str]), ParseError> {
    let Some((first, flags)) = rest.split_first() else {
        return Err(error(
            format!("`{verb}` needs the name of {what}."),
            format!("{verb} NAME (or {verb} NAMESPACE/NAME)"),
        ));
    };
    let (namespace, name) = match first.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, *first),
    };
    if let Some(ns) = namespace.filter(|ns| !is_dns_label(ns)) {
        return Err(invalid_name(verb, "namespace", ns));
    }
    if !is_dns_subdomain(name) || name.is_empty() {
        return Err(invalid_name(verb, "name", name));
    }
    let target = Target {
        namespace: namespace.map(str::to_owned),
        name: name.to_owned(),
    };
    Ok((target, flags))
}

fn invalid_name(verb: &str, what: &str, text: &str) -> ParseError {
    let lower = text.to_ascii_lowercase();
    let hint = if lower != text && is_dns_subdomain(&lower) {
        format!("{verb} {lower}")
    } else {
        format!("{verb} NAME")
    };
    error(
        format!(
            "`{text}` is not a valid Kubernetes {what} (lowercase letters, digits, '-' and '.')."
        ),
        hint,
    )
}

/// The flags typed after a name, each one of `allowed` in any case (like the command words: `FORCE`, `Confirm`).
fn only_flags(
    verb: &str,
    target: &Target,
    words: &[&str],
    allowed: &[&'static str],
) -> Result<Vec<&'static str>, ParseError> {
    let mut flags = Vec::new();
    for word in words {
        let typed = word.to_ascii_lowercase();
        if let Some(flag) = allowed.iter().find(|flag| **flag == typed) {
            flags.push(*flag);
        } else {
            let mut instead = format!("{verb} {}", display(target));
            if let Some(flag) = allowed.first() {
                instead.push_str(&format!(" [{flag}]"));
            }
            return Err(error(
                format!("I do not understand `{word}` here."),
                instead,
            ));
        }
    }
    Ok(flags)
}

fn optional_namespace(verb: &str, rest: &[&str]) -> Result<Option<String>, ParseError> {
    match rest {
        [] => Ok(None),
        [ns] if is_dns_label(ns) => Ok(Some((*ns).to_owned())),
        [ns] => Err(invalid_name(verb, "namespace", ns)),
        [_, extra, ..] => Err(error(
            format!("I do not understand `{extra}` here: `{verb}` takes at most a namespace."),
            format!("{verb} NAMESPACE"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ns: Option<&str>, name: &str) -> Target {
        Target {
            namespace: ns.map(str::to_owned),
            name: name.to_owned(),
        }
    }

    #[test]
    fn parses_every_command() {
        assert_eq!(parse(""), Ok(Command::Help));
        assert_eq!(parse("<@UBOT>  "), Ok(Command::Help));
        assert_eq!(parse("HELP"), Ok(Command::Help));
        assert_eq!(
            parse("<@UBOT> inventory team-a"),
            Ok(Command::Inventory {
                namespace: Some("team-a".into())
            })
        );
        assert_eq!(
            parse("inventory"),
            Ok(Command::Inventory { namespace: None })
        );
        assert_eq!(
            parse("stop llama"),
            Ok(Command::Service {
                target: t(None, "llama"),
                switch: Switch::Off,
                force: false
            })
        );
        assert_eq!(
            parse("Start team-b/llama.v2 force"),
            Ok(Command::Service {
                target: t(Some("team-b"), "llama.v2"),
                switch: Switch::On,
                force: true
            })
        );
        assert_eq!(
            parse("training list"),
            Ok(Command::TrainingList { namespace: None })
        );
        assert_eq!(
            parse("training status ft-1"),
            Ok(Command::TrainingStatus {
                target: t(None, "ft-1")
            })
        );
        assert_eq!(
            parse("training resume ft-1"),
            Ok(Command::TrainingIntent {
                target: t(None, "ft-1"),
                switch: Switch::On,
                force: false
            })
        );
        assert_eq!(
            parse("training cancel ft-1 confirm"),
            Ok(Command::TrainingCancel {
                target: t(None, "ft-1"),
                force: false
            })
        );
        assert_eq!(parse("quota"), Ok(Command::NotEnabled(Feature::Quota)));
        assert_eq!(parse("cost team-a"), Ok(Command::NotEnabled(Feature::Cost)));
        assert_eq!(
            parse("snapshot"),
            Ok(Command::NotEnabled(Feature::Snapshot))
        );
    }

    #[test]
    fn only_changes_are_mutations() {
        assert!(parse("stop x").unwrap().is_mutation());
        assert!(parse("training suspend x").unwrap().is_mutation());
        assert!(parse("training cancel x confirm").unwrap().is_mutation());
        assert!(!parse("inventory").unwrap().is_mutation());
        assert!(!parse("training status x").unwrap().is_mutation());
        assert!(!parse("help").unwrap().needs_cluster());
        assert!(parse("inventory").unwrap().needs_cluster());
    }

    #[test]
    fn refusals_say_what_to_type_instead() {
        let e = parse("restart llama").unwrap_err();
        assert_eq!(e.problem, "I do not know the command `restart`.");
        assert_eq!(e.try_instead.as_deref(), Some("help"));
        let e = parse("stop").unwrap_err();
        assert_eq!(
            e.try_instead.as_deref(),
            Some("stop NAME (or stop NAMESPACE/NAME)")
        );
        let e = parse("stop Llama").unwrap_err();
        assert!(e.problem.contains("`Llama` is not a valid Kubernetes name"));
        assert_eq!(e.try_instead.as_deref(), Some("stop llama"));
        let e = parse("stop Team_B/llama").unwrap_err();
        assert!(e.problem.contains("namespace"), "{e:?}");
        let e = parse("stop llama now").unwrap_err();
        assert_eq!(e.problem, "I do not understand `now` here.");
        assert_eq!(e.try_instead.as_deref(), Some("stop llama [force]"));
        let e = parse("training cancel ft-1").unwrap_err();
        assert!(e.problem.contains("final"), "{e:?}");
        assert_eq!(
            e.try_instead.as_deref(),
            Some("training cancel ft-1 confirm")
        );
        let e = parse("training cancel team-a/ft-1 force").unwrap_err();
        assert_eq!(
            e.try_instead.as_deref(),
            Some("training cancel team-a/ft-1 confirm force")
        );
        let e = parse("training").unwrap_err();
        assert_eq!(e.try_instead.as_deref(), Some("training list"));
        let e = parse("training stop ft-1").unwrap_err();
        assert!(e.problem.contains("no subcommand `stop`"));
        let e = parse("inventory a b").unwrap_err();
        assert_eq!(e.try_instead.as_deref(), Some("inventory NAMESPACE"));
        let e = parse("training status ft-1 force").unwrap_err();
        assert_eq!(e.try_instead.as_deref(), Some("training status ft-1"));
    }

    /// A hunt's finding: in a mention or a DM Slack sends a name that looks like a domain as a link, so `stop
    /// llama.ai` arrived as `stop <http://llama.ai|llama.ai>` and was refused as an invalid name; flags were
    /// case-sensitive (`stop llama FORCE` refused) while command words are not.
    #[test]
    fn reads_what_slack_made_of_the_words() {
        assert_eq!(
            parse("<@UBOT> stop <http://llama.ai|llama.ai>"),
            Ok(Command::Service {
                target: t(None, "llama.ai"),
                switch: Switch::Off,
                force: false
            })
        );
        assert_eq!(
            parse("training status <http://team-a/ft.ml|team-a/ft.ml>"),
            Ok(Command::TrainingStatus {
                target: t(Some("team-a"), "ft.ml")
            })
        );
        assert_eq!(
            parse("stop llama FORCE"),
            Ok(Command::Service {
                target: t(None, "llama"),
                switch: Switch::Off,
                force: true
            })
        );
        assert_eq!(
            parse("training cancel ft Confirm"),
            Ok(Command::TrainingCancel {
                target: t(None, "ft"),
                force: false
            })
        );
        // A typed `<` is escaped by Slack and stays text.
        assert!(parse("stop &lt;http://x|y&gt;").is_err());
    }

    #[test]
    fn undoes_slack_escapes() {
        let e = parse("stop &lt;name&gt;").unwrap_err();
        assert!(e.problem.contains("`<name>`"), "{e:?}");
    }
}
