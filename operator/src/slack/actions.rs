//! What commands do in the cluster: list the inventory, read a run, and change one field by server-side apply:
//! `spec.intent` with the field manager [`FIELD_MANAGER`], `spec.cancel` with [`CANCEL_FIELD_MANAGER`].
//!
//! The apply carries only that field, so the bot never takes over anything else (Terraform keeps the rest of the
//! spec). Each field has its own manager because an apply removes the fields its manager set before and leaves out:
//! with one manager, `training cancel` (an apply of `cancel` alone) would delete the `intent` an earlier
//! `training suspend` wrote. When another manager (e.g. Terraform's `terraform-modelfleet`) owns the field with a different value, the
//! apply conflicts and the person is told who owns it; `force` is only ever sent when the person typed it.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::DeserializeGuard;
use kube::{Client, Resource, ResourceExt};
use model_fleet_api::schedule::{ScheduleState, idle};
use model_fleet_api::v1alpha1::{API_VERSION, Dataset, InferenceService, Intent, TrainingRun};
use serde::de::DeserializeOwned;
use serde_json::json;

use super::access::{ActionError, Call};
use super::inventory::{self, Inventory, RunDetail, RunRow};

/// Field manager of the bot's applies of `spec.intent` (and the reporting controller of its Events).
pub const FIELD_MANAGER: &str = "model-fleet-slack";

/// Field manager of the bot's apply of `spec.cancel` (see the module docs for why it is not [`FIELD_MANAGER`]).
pub const CANCEL_FIELD_MANAGER: &str = "model-fleet-slack-cancel";

/// The two kinds a command changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// InferenceService (`start`, `stop`).
    Service,
    /// TrainingRun (`training suspend|resume|cancel`).
    Run,
}

impl Kind {
    /// The Kubernetes kind.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Service => "InferenceService",
            Kind::Run => "TrainingRun",
        }
    }

    /// The plural resource.
    pub fn resource(self) -> &'static str {
        match self {
            Kind::Service => "inferenceservices",
            Kind::Run => "trainingruns",
        }
    }

    fn api_resource(self) -> ApiResource {
        match self {
            Kind::Service => ApiResource::erase::<InferenceService>(&()),
            Kind::Run => ApiResource::erase::<TrainingRun>(&()),
        }
    }
}

/// The value a change writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Desired {
    /// `spec.intent`.
    Intent(Intent),
    /// `spec.cancel: true`.
    Cancel,
}

/// One change asked for.
#[derive(Clone, Debug)]
pub struct ChangeRequest<'a> {
    /// The kind.
    pub kind: Kind,
    /// Namespace.
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
    /// What to write.
    pub desired: Desired,
    /// Whether the person typed `force`.
    pub force: bool,
    /// The caller's name for messages (`slack:<id>`).
    pub who: &'a str,
}

/// What a change did.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The field was written.
    Changed {
        /// `spec.intent` or `spec.cancel`.
        field: &'static str,
        /// The value before.
        from: String,
        /// The value written.
        to: String,
        /// Managers the field was taken from with `force` (empty without a conflict).
        forced_from: Vec<String>,
        /// The object, for its Event.
        reference: Box<ObjectReference>,
    },
    /// The object already had the value: no write.
    Unchanged {
        /// The value it has.
        state: String,
    },
}

async fn list<K>(client: &Client, call: Call<'_>) -> Result<(Vec<K>, Vec<String>), ActionError>
where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + DeserializeOwned
        + Clone
        + std::fmt::Debug,
{
    let api: Api<DeserializeGuard<K>> = Api::namespaced(client.clone(), call.namespace);
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|e| call.error(e))?;
    let mut objects = Vec::new();
    let mut invalid = Vec::new();
    for item in list.items {
        match item.0 {
            Ok(object) => objects.push(object),
            Err(bad) => invalid.push(bad.metadata.name.unwrap_or_default()),
        }
    }
    objects.sort_by_key(|o: &K| o.name_any());
    Ok((objects, invalid))
}

fn list_call<'a>(
    who: &'a str,
    kind: &'static str,
    resource: &'static str,
    namespace: &'a str,
) -> Call<'a> {
    Call {
        user: who,
        verb: "list",
        kind,
        resource,
        namespace,
        name: "",
        field: "",
    }
}

/// The inventory of `namespace` as `who` may see it.
///
/// # Errors
/// [`ActionError::Forbidden`] when a list is refused, [`ActionError::Unavailable`].
pub async fn inventory(
    client: &Client,
    who: &str,
    namespace: &str,
    now: Timestamp,
) -> Result<Inventory, ActionError> {
    let call = |kind, resource| list_call(who, kind, resource, namespace);
    let (services, bad_services) =
        list::<InferenceService>(client, call("InferenceService", "inferenceservices")).await?;
    let (runs, bad_runs) = list::<TrainingRun>(client, call("TrainingRun", "trainingruns")).await?;
    let (datasets, bad_datasets) = list::<Dataset>(client, call("Dataset", "datasets")).await?;
    let invalid = [bad_services, bad_runs, bad_datasets].concat();
    if !invalid.is_empty() {
        tracing::warn!(%namespace, objects = ?invalid, "objects that do not match their schema were left out");
    }
    Ok(Inventory {
        namespace: namespace.to_owned(),
        services: services.iter().map(inventory::service_row).collect(),
        runs: runs.iter().map(|r| inventory::run_row(r, now)).collect(),
        datasets: datasets.iter().map(inventory::dataset_row).collect(),
    })
}

/// The training runs of `namespace`.
///
/// # Errors
/// As [`inventory`].
pub async fn runs(
    client: &Client,
    who: &str,
    namespace: &str,
    now: Timestamp,
) -> Result<Vec<RunRow>, ActionError> {
    let call = list_call(who, "TrainingRun", "trainingruns", namespace);
    let (runs, _) = list::<TrainingRun>(client, call).await?;
    Ok(runs.iter().map(|r| inventory::run_row(r, now)).collect())
}

/// One run in detail.
///
/// # Errors
/// [`ActionError::NotFound`] (with the names that exist), [`ActionError::Forbidden`], [`ActionError::Unavailable`].
pub async fn run_detail(
    client: &Client,
    who: &str,
    namespace: &str,
    name: &str,
    now: Timestamp,
) -> Result<RunDetail, ActionError> {
    let call = Call {
        verb: "get",
        name,
        ..list_call(who, "TrainingRun", "trainingruns", namespace)
    };
    let api: Api<TrainingRun> = Api::namespaced(client.clone(), namespace);
    match api.get(name).await {
        Ok(run) => Ok(inventory::run_detail(&run, now)),
        Err(e) => Err(with_known_names(client, Kind::Run, call.error(e)).await),
    }
}

/// Adds the names that exist to a [`ActionError::NotFound`] (best effort: a refused list adds none).
async fn with_known_names(client: &Client, kind: Kind, error: ActionError) -> ActionError {
    let ActionError::NotFound {
        kind: k,
        namespace,
        name,
        ..
    } = error
    else {
        return error;
    };
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &namespace, &kind.api_resource());
    let known = match api.list_metadata(&ListParams::default().limit(20)).await {
        Ok(list) => list.items.iter().map(ResourceExt::name_any).collect(),
        Err(_) => Vec::new(),
    };
    ActionError::NotFound {
        kind: k,
        namespace,
        name,
        known,
    }
}

/// The `spec` patch of `desired` and the field's value before and after, read from the object's `spec`.
fn planned_write(
    desired: Desired,
    spec: &serde_json::Value,
) -> (serde_json::Value, String, String) {
    match desired {
        Desired::Intent(intent) => {
            let from = spec["intent"]
                .as_str()
                .unwrap_or(Intent::Automatic.as_str());
            (
                json!({"intent": intent.as_str()}),
                from.to_owned(),
                intent.as_str().to_owned(),
            )
        }
        Desired::Cancel => (
            json!({"cancel": true}),
            "false".to_owned(),
            "true".to_owned(),
        ),
    }
}

/// Why `start` / `training resume` would not run `object` (its JSON as read), or `None`: a passed
/// `spec.schedule.expiresAt` keeps it suspended whatever its intent ([`ScheduleState::expired`]), and an
/// InferenceService suspended for being idle ([`idle::suspended`]) with `intent: active` already resumes only on a
/// spec change, which writing `active` again is not. Pure.
fn resume_blocked(kind: Kind, object: &serde_json::Value, now: Timestamp) -> Option<ActionError> {
    let expires_at = object
        .pointer("/spec/schedule/expiresAt")
        .and_then(serde_json::Value::as_str);
    if ScheduleState::of(expires_at, now).expired() {
        return Some(ActionError::Expired {
            expires_at: expires_at.unwrap_or_default().to_owned(),
        });
    }
    if kind != Kind::Service || object.pointer("/spec/intent") != Some(&json!("active")) {
        return None;
    }
    let isvc: InferenceService = serde_json::from_value(object.clone()).ok()?;
    idle::suspended(&isvc).then(|| ActionError::Idle {
        suspended_at: isvc
            .status
            .and_then(|s| s.idle)
            .and_then(|i| i.suspended_at)
            .unwrap_or_default(),
    })
}

/// Why `training suspend|resume|cancel` would not act on `object` (its JSON as read), or `None`: a run whose Job
/// finished (`status.phase` Succeeded or Failed) is no longer suspended, resumed or cancelled by anything (its
/// `Suspended` condition says so), so the bot would announce an effect that never happens (and `cancel: true` cannot
/// be undone). Pure.
fn run_finished(kind: Kind, object: &serde_json::Value) -> Option<ActionError> {
    if kind != Kind::Run {
        return None;
    }
    match object
        .pointer("/status/phase")
        .and_then(serde_json::Value::as_str)
    {
        Some(phase @ ("Succeeded" | "Failed")) => Some(ActionError::Finished {
            phase: phase.to_owned(),
        }),
        _ => None,
    }
}

/// The state to report when the write would change nothing, or `None` when it must be written: the field already
/// has the value, or `training resume` of a run whose intent is `automatic` (for a TrainingRun `automatic` and
/// `active` both run the Job: writing `active` would only make the bot own `spec.intent` and announce a resume that
/// resumes nothing). Pure.
fn already(kind: Kind, desired: Desired, from: &str, to: &str) -> Option<String> {
    if from == to {
        return Some(to.to_owned());
    }
    let resume_of_automatic = kind == Kind::Run
        && desired == Desired::Intent(Intent::Active)
        && from == Intent::Automatic.as_str();
    resume_of_automatic.then(|| "active (its intent `automatic` already runs its Job)".to_owned())
}

/// Writes one field of one object as its field manager ([`FIELD_MANAGER`] for `spec.intent`,
/// [`CANCEL_FIELD_MANAGER`] for `spec.cancel`), unless it already has the value.
///
/// # Errors
/// [`ActionError::NotFound`], [`ActionError::Cancelled`] (a cancelled run), [`ActionError::Conflict`] (another
/// manager owns the field and `force` was not typed), [`ActionError::Expired`] and [`ActionError::Idle`] (a
/// `start` / `resume` that would not run it, [`resume_blocked`]), [`ActionError::Forbidden`], [`ActionError::Invalid`],
/// [`ActionError::Finished`] (a run whose Job finished, [`run_finished`]), [`ActionError::Unavailable`] (the read),
/// [`ActionError::Uncertain`] (the write's answer was lost).
pub async fn change(client: &Client, request: &ChangeRequest<'_>) -> Result<Outcome, ActionError> {
    let kind = request.kind;
    let (field, manager) = match request.desired {
        Desired::Intent(_) => ("spec.intent", FIELD_MANAGER),
        Desired::Cancel => ("spec.cancel", CANCEL_FIELD_MANAGER),
    };
    let call = |verb| Call {
        user: request.who,
        verb,
        kind: kind.name(),
        resource: kind.resource(),
        namespace: request.namespace,
        name: request.name,
        field,
    };
    let resource = kind.api_resource();
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), request.namespace, &resource);
    let object = match api.get(request.name).await {
        Ok(object) => object,
        Err(e) => return Err(with_known_names(client, kind, call("get").error(e)).await),
    };
    let spec = &object.data["spec"];
    let cancelled = spec["cancel"].as_bool() == Some(true);
    if kind == Kind::Run && cancelled {
        if request.desired == Desired::Cancel {
            return Ok(Outcome::Unchanged {
                state: "cancelled".into(),
            });
        }
        return Err(ActionError::Cancelled {
            namespace: request.namespace.to_owned(),
            name: request.name.to_owned(),
        });
    }
    if let Some(refused) = run_finished(kind, &object.data) {
        return Err(refused);
    }
    if request.desired == Desired::Intent(Intent::Active) {
        let json =
            serde_json::to_value(&object).map_err(|e| ActionError::Unavailable(e.to_string()))?;
        resume_blocked(kind, &json, Timestamp::now()).map_or(Ok(()), Err)?;
    }
    let (patch, from, to) = planned_write(request.desired, spec);
    if let Some(state) = already(kind, request.desired, &from, &to) {
        return Ok(Outcome::Unchanged { state });
    }
    let body = json!({
        "apiVersion": API_VERSION, "kind": kind.name(),
        "metadata": {"name": request.name}, "spec": patch,
    });
    let apply = |force: bool| {
        let mut params = PatchParams::apply(manager);
        params.force = force;
        let api = api.clone();
        let body = body.clone();
        async move { api.patch(request.name, &params, &Patch::Apply(&body)).await }
    };
    // A write without an answer may still have been made: say so rather than "nothing was changed".
    let write_error = |e: kube::Error| match call("patch").error(e) {
        ActionError::Unavailable(message) => ActionError::Uncertain(message),
        other => other,
    };
    let (written, forced_from) = match apply(false).await.map_err(write_error) {
        Ok(written) => (written, Vec::new()),
        Err(ActionError::Conflict { managers, .. }) if request.force => {
            let written = apply(true).await.map_err(write_error)?;
            (written, managers)
        }
        Err(error) => return Err(error),
    };
    Ok(Outcome::Changed {
        field,
        from,
        to,
        forced_from,
        reference: Box::new(written.object_ref(&resource)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn service(spec: serde_json::Value, status: serde_json::Value) -> serde_json::Value {
        json!({"apiVersion": API_VERSION, "kind": "InferenceService",
               "metadata": {"name": "llama", "namespace": "team-a", "generation": 4},
               "spec": spec, "status": status})
    }

    /// A hunt's finding: `training suspend|resume|cancel` of a Succeeded or Failed run wrote the field and told the
    /// channel "Its Job runs again" / "Its Job stops for good" while the operator, as its Suspended condition says,
    /// no longer acts on a finished run (and `cancel: true` cannot be undone).
    #[test]
    fn a_finished_run_is_not_changed() {
        let run = |phase: serde_json::Value| {
            json!({"apiVersion": API_VERSION, "kind": "TrainingRun",
                   "metadata": {"name": "ft", "namespace": "team-a"},
                   "spec": {"container": {"image": "trainer"}}, "status": {"phase": phase}})
        };
        for phase in ["Succeeded", "Failed"] {
            assert_eq!(
                run_finished(Kind::Run, &run(json!(phase))),
                Some(ActionError::Finished {
                    phase: phase.into()
                })
            );
        }
        for phase in [
            json!("Running"),
            json!("Pending"),
            json!("Suspended"),
            json!(null),
        ] {
            assert_eq!(
                run_finished(Kind::Run, &run(phase.clone())),
                None,
                "{phase}"
            );
        }
        assert_eq!(run_finished(Kind::Service, &run(json!("Succeeded"))), None);
    }

    /// A hunt's finding: `training resume` of a run with no intent (`automatic`, which runs the Job just as `active`
    /// does) announced "resumed ... Its Job runs again" and made the bot own `spec.intent`.
    #[test]
    fn resuming_an_automatic_run_changes_nothing() {
        let resume = Desired::Intent(Intent::Active);
        assert!(
            already(Kind::Run, resume, "automatic", "active")
                .is_some_and(|state| state.starts_with("active"))
        );
        assert_eq!(
            already(Kind::Run, resume, "active", "active"),
            Some("active".into())
        );
        assert_eq!(
            already(
                Kind::Run,
                Desired::Intent(Intent::Suspended),
                "automatic",
                "suspended"
            ),
            None
        );
        // For an InferenceService `active` differs from `automatic` (never below 1 replica): `start` writes it.
        assert_eq!(already(Kind::Service, resume, "automatic", "active"), None);
        assert_eq!(already(Kind::Run, Desired::Cancel, "false", "true"), None);
    }

    #[test]
    fn a_resume_the_operator_would_not_run_is_refused_before_writing() {
        let now = at("2026-12-06T12:00:00Z");
        let model = json!({"name": "meta/llama"});
        let expired = service(
            json!({"model": model, "container": {"image": "vllm"}, "schedule": {"expiresAt": "2026-12-06T11:00:00Z"}}),
            json!({}),
        );
        for kind in [Kind::Service, Kind::Run] {
            assert_eq!(
                resume_blocked(kind, &expired, now),
                Some(ActionError::Expired {
                    expires_at: "2026-12-06T11:00:00Z".into()
                })
            );
        }
        let ahead = service(
            json!({"model": model, "container": {"image": "vllm"}, "schedule": {"expiresAt": "2026-12-06T13:00:00Z"}}),
            json!({}),
        );
        assert_eq!(resume_blocked(Kind::Service, &ahead, now), None);

        // Idle-suspended in this generation: `start` cannot resume it while `intent` already says active.
        let idle = |intent: &str, generation: i64| {
            service(
                json!({"model": model, "container": {"image": "vllm"}, "intent": intent,
                       "schedule": {"suspendAfterIdleSeconds": 600}}),
                json!({"idle": {"since": "2026-12-06T10:00:00Z", "suspendedAt": "2026-12-06T10:10:00Z",
                                "generation": generation}}),
            )
        };
        assert_eq!(
            resume_blocked(Kind::Service, &idle("active", 4), now),
            Some(ActionError::Idle {
                suspended_at: "2026-12-06T10:10:00Z".into()
            })
        );
        // `automatic` -> `active` is a spec change, which resumes it; an older generation's record is not current.
        assert_eq!(
            resume_blocked(Kind::Service, &idle("automatic", 4), now),
            None
        );
        assert_eq!(resume_blocked(Kind::Service, &idle("active", 3), now), None);
    }
}
