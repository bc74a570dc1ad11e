//! Refusals and failures as replies (pure): what happened, why, and what to type instead.

use super::access::ActionError;
use super::authz::Refusal;
use super::blocks::{self, Reply};

/// Whether a field manager is Terraform's: any name starting `terraform` in any case. The Model Fleet provider's
/// default is `terraform-modelfleet`; its `field_manager` setting takes any name, and its description asks for one
/// starting `terraform` (a name such as `ml-platform` gets the generic advice); hashicorp/kubernetes'
/// `kubernetes_manifest` writes as `Terraform`.
fn is_terraform(manager: &str) -> bool {
    manager
        .get(..9)
        .is_some_and(|head| head.eq_ignore_ascii_case("terraform"))
}

/// Known field managers, named the way people know them.
fn manager_name(manager: &str) -> String {
    match manager {
        terraform if is_terraform(terraform) => format!("Terraform (`{terraform}`)"),
        "kubectl" | "kubectl-client-side-apply" | "kubectl-edit" | "kubectl-patch" => {
            format!("kubectl (`{manager}`)")
        }
        other => format!("`{other}`"),
    }
}

/// What to do about a conflict on `field` (`spec.intent`, `spec.cancel`) owned by `managers`: Terraform's advice names
/// the attribute its configuration sets (`intent`, `cancel`).
fn conflict_advice(field: &str, managers: &[String]) -> String {
    if managers.iter().any(|m| is_terraform(m)) {
        let attribute = field.strip_prefix("spec.").unwrap_or(field);
        format!(
            "Change `{attribute}` in the Terraform configuration and apply it, or take the field over with `force`: \
             Terraform then reports a conflict on its next apply until its configuration says the same."
        )
    } else {
        "Change it where it is managed, or take the field over with `force`.".to_owned()
    }
}

/// A refusal of the bot's own layer.
pub fn refusal(refusal: &Refusal, prefix: &str) -> Reply {
    match refusal {
        Refusal::Channel { channel, allowed } => {
            let allowed: Vec<String> = allowed.iter().map(|c| format!("<#{c}>")).collect();
            blocks::problem(
                &format!("Model Fleet commands do not run in <#{channel}>."),
                Some(&format!(
                    "They run in {} (SLACK_ALLOWED_CHANNEL_IDS).",
                    allowed.join(", ")
                )),
                Some("help"),
                prefix,
            )
        }
        Refusal::NotPublic {
            user,
            namespace,
            readable,
        } => {
            let readable: Vec<String> = readable.iter().map(|ns| format!("`{ns}`")).collect();
            blocks::problem(
                &format!("`{namespace}` is not open to people outside SLACK_ALLOWED_USER_IDS."),
                Some(&format!(
                    "Without a Kubernetes identity of your own you may read {} (SLACK_PUBLIC_READ_NAMESPACES). An \
                     admin adds your user id `{user}` to SLACK_ALLOWED_USER_IDS and gives `slack:{user}` a role \
                     in `{namespace}` (docs/SLACK.md). Nothing was changed.",
                    readable.join(", ")
                )),
                Some("inventory"),
                prefix,
            )
        }
        Refusal::ReadOnly {
            user,
            nobody_allowed,
        } => {
            let why = if *nobody_allowed {
                "This Model Fleet bot is read-only: SLACK_ALLOWED_USER_IDS is empty.".to_owned()
            } else {
                format!("<@{user}> is not in SLACK_ALLOWED_USER_IDS, so it can only read.")
            };
            blocks::problem(
                "You may look but not change anything through Slack.",
                Some(&format!(
                    "{why} An admin adds your user id `{user}` there and gives `slack:{user}` a Kubernetes role \
                     (docs/SLACK.md). Nothing was changed."
                )),
                Some("inventory"),
                prefix,
            )
        }
    }
}

/// What the command was, for the hints of [`failure`].
#[derive(Clone, Copy, Debug)]
pub struct Attempt<'a> {
    /// The words to repeat (e.g. `stop`, `training suspend`).
    pub verb: &'a str,
    /// The namespace used.
    pub namespace: &'a str,
    /// The object name, when the command names one.
    pub name: Option<&'a str>,
}

/// A failed Kubernetes call.
pub fn failure(error: &ActionError, attempt: Attempt<'_>, prefix: &str) -> Reply {
    let verb = attempt.verb;
    let ns = attempt.namespace;
    let name = attempt.name.unwrap_or("NAME");
    match error {
        ActionError::Forbidden { user, .. } => blocks::problem(
            &format!("{error}."),
            Some(if user == "the bot" {
                "Reads of people outside SLACK_ALLOWED_USER_IDS run as the bot, whose read access an admin grants \
                 (the bot's `model-fleet-slack` role, docs/SLACK.md). Nothing was changed."
            } else {
                "The cluster's RBAC decides what each Slack user may do: an admin binds a Role to your \
                 `slack:<user id>` user in that namespace (docs/SLACK.md). Nothing was changed."
            }),
            Some(&format!("inventory {ns}")),
            prefix,
        ),
        ActionError::CannotImpersonate { user, .. } => blocks::problem(
            &format!("The bot is not allowed to act as `{user}`."),
            Some(
                "Its ServiceAccount needs `impersonate` on that user (the `users` rule of charts/model-fleet-operator/files/slack-rbac.yaml). \
                 Nothing was changed.",
            ),
            None,
            prefix,
        ),
        ActionError::NotFound { kind, known, .. } => {
            let detail = if known.is_empty() {
                format!("No {kind} is visible to you in `{ns}`.")
            } else {
                format!("{kind}s in `{ns}`: {}.", known.join(", "))
            };
            blocks::problem(
                &format!("There is no {kind} `{name}` in namespace `{ns}`."),
                Some(&format!(
                    "{detail} A name in another namespace is written NAMESPACE/NAME."
                )),
                Some(&retyped(verb, &format!("NAMESPACE/{name}"), false)),
                prefix,
            )
        }
        ActionError::Conflict { field, managers } => {
            let owners: Vec<String> = managers.iter().map(|m| manager_name(m)).collect();
            let advice = conflict_advice(field, managers);
            blocks::problem(
                &format!(
                    "`{field}` of `{ns}/{name}` is managed by {}: nothing was changed.",
                    owners.join(", ")
                ),
                Some(&advice),
                Some(&retyped(
                    verb,
                    &format!("{}{name}", namespace_prefix(attempt)),
                    true,
                )),
                prefix,
            )
        }
        ActionError::Cancelled { .. }
        | ActionError::Expired { .. }
        | ActionError::Finished { .. }
        | ActionError::Idle { .. }
        | ActionError::Invalid(_)
        | ActionError::Unavailable(_)
        | ActionError::Uncertain(_) => unmade(error, attempt, prefix),
    }
}

/// A change the bot did not make (a cancelled or finished run, a schedule or idleness it would not override, the API
/// server refusing it), or could not confirm.
fn unmade(error: &ActionError, attempt: Attempt<'_>, prefix: &str) -> Reply {
    let ns = attempt.namespace;
    let name = attempt.name.unwrap_or("NAME");
    // Where the person sees the object's state now.
    let state = if attempt.verb.starts_with("training") {
        format!("training status {}{name}", namespace_prefix(attempt))
    } else {
        format!("inventory {ns}")
    };
    match error {
        ActionError::Expired { expires_at } => blocks::problem(
            &format!(
                "`{ns}/{name}` stays suspended: its `spec.schedule.expiresAt` ({expires_at}) has passed, and the \
                 operator keeps it suspended whatever its intent. Nothing was changed."
            ),
            Some(
                "Move `schedule.expires_at` later, or remove it, where the object is managed (its Terraform \
                 configuration): then it runs again.",
            ),
            Some(&state),
            prefix,
        ),
        ActionError::Cancelled { .. } => blocks::problem(
            &format!("{error}: a cancelled run is final, nothing about it can change."),
            Some("Create a new TrainingRun to train again."),
            Some(&state),
            prefix,
        ),
        ActionError::Finished { phase } => blocks::problem(
            &format!(
                "`{ns}/{name}` already finished (phase {phase}): its intent and cancel no longer act on it. Nothing \
                 was changed."
            ),
            Some("Create a new TrainingRun to train again."),
            Some(&state),
            prefix,
        ),
        ActionError::Idle { suspended_at } => blocks::problem(
            &format!(
                "`{ns}/{name}` is suspended for being idle since {suspended_at}, and its intent is already \
                 `active`: `start` alone changes nothing."
            ),
            Some(
                "A change of its spec resumes it (the idle count starts again): `stop` it, then `start` it, or \
                 change it where it is managed.",
            ),
            Some(&format!("stop {}{name}", namespace_prefix(attempt))),
            prefix,
        ),
        ActionError::Invalid(message) => blocks::problem(
            "The API server refused the change: nothing was changed.",
            Some(&blocks::escape(message)),
            None,
            prefix,
        ),
        ActionError::Unavailable(message) => blocks::problem(
            "The Kubernetes API did not answer: nothing was changed. Try again in a minute.",
            Some(&blocks::escape(message)),
            None,
            prefix,
        ),
        ActionError::Uncertain(message) => blocks::problem(
            "The Kubernetes API did not answer the change: it may or may not have been made. Look before trying \
             again.",
            Some(&blocks::escape(message)),
            Some(&state),
            prefix,
        ),
        // `failure` sends only the kinds above here; any other is still said plainly.
        other => blocks::problem(&format!("{other}."), None, None, prefix),
    }
}

/// The command to type again: `VERB TARGET`, with `confirm` when the verb needs it (`training cancel`) and `force`
/// when asked.
fn retyped(verb: &str, target: &str, force: bool) -> String {
    let confirm = if verb == "training cancel" {
        " confirm"
    } else {
        ""
    };
    let force = if force { " force" } else { "" };
    format!("{verb} {target}{confirm}{force}")
}

fn namespace_prefix(attempt: Attempt<'_>) -> String {
    format!("{}/", attempt.namespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(reply: &Reply) -> String {
        format!(
            "{} {}",
            reply.text,
            serde_json::to_string(&reply.blocks).unwrap()
        )
    }

    const STOP: Attempt<'static> = Attempt {
        verb: "stop",
        namespace: "team-a",
        name: Some("llama"),
    };

    /// `training resume team-a/ft`.
    const RESUME: Attempt<'static> = Attempt {
        verb: "training resume",
        namespace: "team-a",
        name: Some("ft"),
    };

    #[test]
    fn a_terraform_conflict_explains_force() {
        let error = ActionError::Conflict {
            field: "spec.intent",
            managers: vec!["terraform-modelfleet".into()],
        };
        let t = text(&failure(&error, STOP, "/fleet "));
        assert!(
            t.contains("`spec.intent` of `team-a/llama` is managed by Terraform"),
            "{t}"
        );
        assert!(t.contains("Try `/fleet stop team-a/llama force`"), "{t}");
    }

    #[test]
    fn any_terraform_field_manager_gets_the_terraform_advice() {
        for manager in ["terraform-team-a", "Terraform"] {
            let error = ActionError::Conflict {
                field: "spec.intent",
                managers: vec![manager.into()],
            };
            let t = text(&failure(&error, STOP, "/fleet "));
            assert!(
                t.contains(&format!("managed by Terraform (`{manager}`)")),
                "{t}"
            );
            assert!(t.contains("Terraform configuration"), "{t}");
        }
        for other in ["terra", "kubectl", "helm", "t\u{e9}rraform"] {
            assert!(!is_terraform(other), "{other}");
        }
    }

    #[test]
    fn hints_of_a_cancel_keep_its_confirm() {
        let cancel = Attempt {
            verb: "training cancel",
            namespace: "team-a",
            name: Some("ft"),
        };
        let conflict = ActionError::Conflict {
            field: "spec.cancel",
            managers: vec!["kubectl".into()],
        };
        let t = text(&failure(&conflict, cancel, "/fleet "));
        assert!(
            t.contains("Try `/fleet training cancel team-a/ft confirm force`"),
            "{t}"
        );
        // A hunt's finding: a Terraform-owned `spec.cancel` (`cancel = false` in the configuration) was advised to
        // "Change `intent` in the Terraform configuration".
        let terraform = ActionError::Conflict {
            field: "spec.cancel",
            managers: vec!["terraform-modelfleet".into()],
        };
        let t = text(&failure(&terraform, cancel, "/fleet "));
        assert!(
            t.contains("Change `cancel` in the Terraform configuration") && !t.contains("`intent`"),
            "{t}"
        );
        let missing = ActionError::NotFound {
            kind: "TrainingRun",
            namespace: "team-a".into(),
            name: "ft".into(),
            known: Vec::new(),
        };
        let t = text(&failure(&missing, cancel, "/fleet "));
        assert!(
            t.contains("Try `/fleet training cancel NAMESPACE/ft confirm`"),
            "{t}"
        );
    }

    #[test]
    fn a_resume_that_would_not_run_says_what_would() {
        let expired = ActionError::Expired {
            expires_at: "2026-12-06T11:00:00Z".into(),
        };
        let t = text(&failure(&expired, RESUME, "/fleet "));
        assert!(
            t.contains("`team-a/ft` stays suspended: its `spec.schedule.expiresAt` (2026-12-06T11:00:00Z) has passed")
                && t.contains("Try `/fleet training status team-a/ft`"),
            "{t}"
        );
        let start = Attempt {
            verb: "start",
            ..STOP
        };
        let idle = ActionError::Idle {
            suspended_at: "2026-12-06T10:10:00Z".into(),
        };
        let t = text(&failure(&idle, start, "/fleet "));
        assert!(
            t.contains("suspended for being idle since 2026-12-06T10:10:00Z")
                && t.contains("Try `/fleet stop team-a/llama`"),
            "{t}"
        );
    }

    #[test]
    fn a_finished_run_says_why_nothing_changed() {
        let finished = ActionError::Finished {
            phase: "Failed".into(),
        };
        let t = text(&failure(&finished, RESUME, "/fleet "));
        assert!(
            t.contains("`team-a/ft` already finished (phase Failed)")
                && t.contains("Nothing was changed")
                && t.contains("Try `/fleet training status team-a/ft`"),
            "{t}"
        );
    }

    #[test]
    fn a_lost_answer_to_a_write_does_not_claim_nothing_changed() {
        let lost = ActionError::Uncertain("connection reset <by peer>".into());
        let t = text(&failure(&lost, STOP, "/fleet "));
        assert!(
            t.contains("it may or may not have been made")
                && !t.contains("nothing was changed")
                && t.contains("connection reset &lt;by peer&gt;")
                && t.contains("Try `/fleet inventory team-a`"),
            "{t}"
        );
    }

    #[test]
    fn not_found_lists_what_exists() {
        let error = ActionError::NotFound {
            kind: "InferenceService",
            namespace: "team-a".into(),
            name: "llama".into(),
            known: vec!["qwen".into()],
        };
        let t = text(&failure(&error, STOP, ""));
        assert!(
            t.contains("There is no InferenceService `llama` in namespace `team-a`."),
            "{t}"
        );
        assert!(t.contains("InferenceServices in `team-a`: qwen."), "{t}");
        assert!(t.contains("Try `stop NAMESPACE/llama`"), "{t}");
    }

    #[test]
    fn rbac_denials_name_the_mapped_user() {
        let error = ActionError::Forbidden {
            user: "slack:U1".into(),
            verb: "patch",
            resource: "inferenceservices",
            namespace: "team-a".into(),
        };
        let t = text(&failure(&error, STOP, "/fleet "));
        assert!(
            t.contains(
                "Kubernetes RBAC does not let slack:U1 patch inferenceservices in namespace team-a."
            ),
            "{t}"
        );
    }

    #[test]
    fn refusals_say_who_can_fix_them() {
        let t = text(&refusal(
            &Refusal::ReadOnly {
                user: "U9".into(),
                nobody_allowed: false,
            },
            "/fleet ",
        ));
        assert!(t.contains("<@U9> is not in SLACK_ALLOWED_USER_IDS"), "{t}");
        let t = text(&refusal(
            &Refusal::Channel {
                channel: "C2".into(),
                allowed: vec!["C1".into()],
            },
            "",
        ));
        assert!(
            t.contains("do not run in <#C2>") && t.contains("<#C1>"),
            "{t}"
        );
    }
}
