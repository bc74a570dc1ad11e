//! Kubernetes access for Slack users: the bot's own client (read access), impersonated clients for allowlisted
//! users (`Impersonate-User: slack:<id>`, `Impersonate-Group: ...`, so the cluster's RBAC decides), and API errors
//! turned into [`ActionError`]s a person can act on.

use std::time::Duration;

use kube::Client;
use regex::Regex;

use super::authz::Caller;

/// A Kubernetes call that failed, in terms the reply explains.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ActionError {
    /// RBAC refused the (impersonated) user.
    #[error("Kubernetes RBAC does not let {user} {verb} {resource} in namespace {namespace}")]
    Forbidden {
        /// `slack:<id>` or `the bot`.
        user: String,
        /// `get`, `list`, `patch`.
        verb: &'static str,
        /// Plural resource, e.g. `inferenceservices`.
        resource: &'static str,
        /// Namespace.
        namespace: String,
    },
    /// The bot's ServiceAccount may not impersonate this user or group.
    #[error("the bot may not impersonate {user}: {message}")]
    CannotImpersonate {
        /// `slack:<id>`.
        user: String,
        /// The API server's message.
        message: String,
    },
    /// No such object.
    #[error("there is no {kind} {name} in namespace {namespace}")]
    NotFound {
        /// `InferenceService` or `TrainingRun`.
        kind: &'static str,
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// Names that do exist there (as far as the caller may list them).
        known: Vec<String>,
    },
    /// Another field manager owns the field (server-side apply conflict).
    #[error("{field} is managed by {}", managers.join(", "))]
    Conflict {
        /// e.g. `spec.intent`.
        field: &'static str,
        /// The other managers, e.g. `terraform-modelfleet`.
        managers: Vec<String>,
    },
    /// The API server refused the change (validation, a CEL rule, an admission webhook).
    #[error("the API server refused the change: {0}")]
    Invalid(String),
    /// The run is cancelled: nothing about it can change any more.
    #[error("TrainingRun {namespace}/{name} is cancelled")]
    Cancelled {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// `start` / `training resume` of an object whose `spec.schedule.expiresAt` has passed: the operator keeps it
    /// suspended whatever its intent (docs/resources), so writing `active` would change nothing that runs.
    #[error("spec.schedule.expiresAt {expires_at} has passed")]
    Expired {
        /// The RFC 3339 time as written in the spec.
        expires_at: String,
    },
    /// `start` of an InferenceService suspended for being idle (`spec.schedule.suspendAfterIdleSeconds`) whose intent
    /// is already `active`: only a spec change resumes it, and writing `active` again changes nothing.
    #[error("it is suspended for being idle since {suspended_at} and its intent is already active")]
    Idle {
        /// `status.idle.suspendedAt`.
        suspended_at: String,
    },
    /// `training suspend|resume|cancel` of a run that already finished (`status.phase` Succeeded or Failed): the
    /// operator no longer acts on its intent or cancel, so writing them would change nothing that runs.
    #[error("the run already finished (phase {phase})")]
    Finished {
        /// `status.phase`: `Succeeded` or `Failed`.
        phase: String,
    },
    /// The API did not answer, or answered something else.
    #[error("the Kubernetes API failed: {0}")]
    Unavailable(String),
    /// A write whose answer was lost (no answer in time, a dropped connection, a 5xx): it may or may not have been
    /// made.
    #[error("the Kubernetes API did not answer the change: {0}")]
    Uncertain(String),
}

/// What a failed call was doing, to name it in [`ActionError::Forbidden`] and [`ActionError::NotFound`].
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// Who made it (`slack:<id>` or `the bot`).
    pub user: &'a str,
    /// The verb.
    pub verb: &'static str,
    /// The kind (`InferenceService`).
    pub kind: &'static str,
    /// The plural resource.
    pub resource: &'static str,
    /// Namespace.
    pub namespace: &'a str,
    /// Name, for calls on one object.
    pub name: &'a str,
    /// The field a change writes (`spec.intent`, `spec.cancel`), named in conflicts.
    pub field: &'static str,
}

impl Call<'_> {
    /// Maps a kube error of this call.
    pub fn error(&self, error: kube::Error) -> ActionError {
        let kube::Error::Api(status) = error else {
            return ActionError::Unavailable(error.to_string());
        };
        match status.code {
            403 if status.message.contains("cannot impersonate") => {
                ActionError::CannotImpersonate {
                    user: self.user.to_owned(),
                    message: status.message.clone(),
                }
            }
            // RBAC's own wording (`... is forbidden: User "slack:U1" cannot patch resource ...`); other 403s are an
            // admission webhook's denial or a namespace being deleted, which no Role binding would change.
            403 if status.message.contains(" cannot ") => ActionError::Forbidden {
                user: self.user.to_owned(),
                verb: self.verb,
                resource: self.resource,
                namespace: self.namespace.to_owned(),
            },
            403 => ActionError::Invalid(status.message.clone()),
            404 => ActionError::NotFound {
                kind: self.kind,
                namespace: self.namespace.to_owned(),
                name: self.name.to_owned(),
                known: Vec::new(),
            },
            409 => ActionError::Conflict {
                field: self.field,
                managers: conflicting_managers(&status.message),
            },
            400 | 422 => ActionError::Invalid(status.message.clone()),
            _ => ActionError::Unavailable(status.message.clone()),
        }
    }
}

/// The field managers named in a server-side apply conflict message, each once, in the message's order. The API
/// server words one conflict `Apply failed with 1 conflict: conflict with "terraform-modelfleet": .spec.intent` and
/// several `Apply failed with 2 conflicts: conflicts with "a":\n- .spec.intent\nconflicts with "b" using v1:\n- ...`
/// (`getConflictMessage`, k8s.io/apimachinery `managedfields/internal/conflict.go`).
pub fn conflicting_managers(message: &str) -> Vec<String> {
    let pattern = Regex::new(r#"conflicts? with "([^"]+)""#).expect("valid regex");
    let mut managers: Vec<String> = Vec::new();
    for name in pattern.captures_iter(message).map(|c| c[1].to_owned()) {
        if !managers.contains(&name) {
            managers.push(name);
        }
    }
    if managers.is_empty() {
        managers.push("another field manager".to_owned());
    }
    managers
}

/// How long one Kubernetes call may wait for its answer before the bot reports "no answer" (kube-client waits forever
/// by default: its `read_timeout` is unset so that watches and exec sessions live, and the bot makes neither).
pub const API_TIMEOUT: Duration = Duration::from_secs(20);

/// Builds Kubernetes clients for callers.
#[derive(Clone)]
pub struct Clients {
    base: kube::Config,
    bot: Client,
}

impl Clients {
    /// From the bot's own configuration (in cluster: its ServiceAccount). Calls that set no `read_timeout` get
    /// [`API_TIMEOUT`], counted from each request (not from when its pooled connection went idle), for the bot and
    /// every impersonated client alike.
    ///
    /// # Errors
    /// The client cannot be built from `config`.
    pub fn new(mut base: kube::Config) -> Result<Self, kube::Error> {
        if base.read_timeout.is_none() {
            base.read_timeout = Some(API_TIMEOUT);
            base.reset_reader_on_write = true;
        }
        let bot = Client::try_from(base.clone())?;
        Ok(Self { base, bot })
    }

    /// The bot's own client (reads of non-allowlisted users, Events).
    pub fn bot(&self) -> Client {
        self.bot.clone()
    }

    /// The client for `caller`: the bot's own, or a new one impersonating the mapped identity.
    ///
    /// # Errors
    /// [`ActionError::Unavailable`] when the client cannot be built.
    pub fn for_caller(&self, caller: &Caller) -> Result<Client, ActionError> {
        match caller {
            Caller::Bot => Ok(self.bot.clone()),
            Caller::Impersonated { user, groups } => {
                let mut config = self.base.clone();
                // The whole impersonated identity is the Slack user's: nothing of a kubeconfig's own impersonation
                // (its uid or extra fields) may carry over to it.
                config.auth_info.impersonate = Some(user.clone());
                config.auth_info.impersonate_groups = Some(groups.clone());
                config.auth_info.impersonate_uid = None;
                config.auth_info.impersonate_user_extra = None;
                Client::try_from(config).map_err(|e| ActionError::Unavailable(e.to_string()))
            }
        }
    }
}

/// How the caller is named in messages: `slack:<id>` or `the bot`.
pub fn caller_name(caller: &Caller) -> &str {
    match caller {
        Caller::Bot => "the bot",
        Caller::Impersonated { user, .. } => user,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16, message: &str) -> kube::Error {
        let status = kube::core::Status {
            code,
            message: message.into(),
            ..kube::core::Status::default()
        };
        kube::Error::Api(Box::new(status))
    }

    const CALL: Call<'static> = Call {
        user: "slack:U1",
        verb: "patch",
        kind: "InferenceService",
        resource: "inferenceservices",
        namespace: "team-a",
        name: "llama",
        field: "spec.intent",
    };

    #[test]
    fn maps_api_errors() {
        assert_eq!(
            CALL.error(api_error(
                403,
                "inferenceservices.modelfleet.io \"llama\" is forbidden: User \"slack:U1\" cannot patch resource \
                 \"inferenceservices\" in API group \"modelfleet.io\" in the namespace \"team-a\""
            )),
            ActionError::Forbidden {
                user: "slack:U1".into(),
                verb: "patch",
                resource: "inferenceservices",
                namespace: "team-a".into()
            }
        );
        assert!(matches!(
            CALL.error(api_error(403, "users \"slack:U1\" is forbidden: User \"bot\" cannot impersonate resource \"users\"")),
            ActionError::CannotImpersonate { .. }
        ));
        let webhook =
            "admission webhook \"policy.example.com\" denied the request: changes are frozen";
        assert_eq!(
            CALL.error(api_error(403, webhook)),
            ActionError::Invalid(webhook.into())
        );
        assert!(matches!(
            CALL.error(api_error(404, "not found")),
            ActionError::NotFound { .. }
        ));
        assert_eq!(
            CALL.error(api_error(
                409,
                "Apply failed with 1 conflict: conflict with \"terraform-modelfleet\" using modelfleet.io/v1alpha1: .spec.intent"
            )),
            ActionError::Conflict {
                field: "spec.intent",
                managers: vec!["terraform-modelfleet".into()]
            }
        );
        assert!(matches!(
            CALL.error(api_error(422, "cel")),
            ActionError::Invalid(_)
        ));
        assert!(matches!(
            CALL.error(api_error(500, "etcd")),
            ActionError::Unavailable(_)
        ));
    }

    #[test]
    fn conflicts_without_a_manager_name_still_read_well() {
        assert_eq!(
            conflicting_managers("conflict"),
            vec!["another field manager".to_owned()]
        );
        // The API server's wording of several conflicts (one line per manager, then its fields).
        assert_eq!(
            conflicting_managers(
                "Apply failed with 3 conflicts: conflicts with \"kubectl\" using modelfleet.io/v1alpha1:\n\
                 - .spec.intent\n- .spec.cancel\nconflicts with \"terraform-modelfleet\":\n- .spec.intent"
            ),
            vec!["kubectl".to_owned(), "terraform-modelfleet".to_owned()]
        );
    }
}
