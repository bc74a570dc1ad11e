//! What commands do in the cluster: list the inventory, read a run, and change one field (`spec.intent` or
//! `spec.cancel`) by server-side apply with the field manager `model-fleet-slack`.
//!
//! The apply carries only that field, so the bot never takes over anything else (Terraform keeps the rest of the
//! spec). When another manager (e.g. Terraform's `terraform-modelfleet`) owns the field with a different value, the
//! apply conflicts and the person is told who owns it; `force` is only ever sent when the person typed it.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::DeserializeGuard;
use kube::{Client, Resource, ResourceExt};
use model_fleet_api::v1alpha1::{API_VERSION, Dataset, InferenceService, Intent, TrainingRun};
use serde::de::DeserializeOwned;
use serde_json::json;

use super::access::{ActionError, Call};
use super::inventory::{self, Inventory, RunDetail, RunRow};

/// Field manager of the bot's applies.
pub const FIELD_MANAGER: &str = "model-fleet-slack";

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

/// Writes one field of one object as [`FIELD_MANAGER`], unless it already has the value.
///
/// # Errors
/// [`ActionError::NotFound`], [`ActionError::Cancelled`] (a cancelled run), [`ActionError::Conflict`] (another
/// manager owns the field and `force` was not typed), [`ActionError::Forbidden`], [`ActionError::Invalid`],
/// [`ActionError::Unavailable`].
pub async fn change(client: &Client, request: &ChangeRequest<'_>) -> Result<Outcome, ActionError> {
    let kind = request.kind;
    let field = match request.desired {
        Desired::Intent(_) => "spec.intent",
        Desired::Cancel => "spec.cancel",
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
    let (patch, from, to) = planned_write(request.desired, spec);
    if from == to {
        return Ok(Outcome::Unchanged { state: to });
    }
    let body = json!({
        "apiVersion": API_VERSION, "kind": kind.name(),
        "metadata": {"name": request.name}, "spec": patch,
    });
    let apply = |force: bool| {
        let mut params = PatchParams::apply(FIELD_MANAGER);
        params.force = force;
        let api = api.clone();
        let body = body.clone();
        async move { api.patch(request.name, &params, &Patch::Apply(&body)).await }
    };
    let (written, forced_from) = match apply(false).await.map_err(|e| call("patch").error(e)) {
        Ok(written) => (written, Vec::new()),
        Err(ActionError::Conflict { managers, .. }) if request.force => {
            let written = apply(true).await.map_err(|e| call("patch").error(e))?;
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
