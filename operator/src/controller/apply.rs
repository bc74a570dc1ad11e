//! Server-side apply of children and pruning of children that are no longer rendered.
//!
//! DESIGN.md sections 3 and 5: children are applied with field manager [`FIELD_MANAGER`], `force`, and
//! `fieldValidation=Strict` (an unknown or duplicated field is refused instead of silently dropped); children that are
//! no longer rendered are deleted, selected by owner UID. Every child goes through [`Child`] (JSON + its
//! `ApiResource`), so typed k8s-openapi objects and `DynamicObject`s (ScaledObject, HTTPRoute: no k8s-openapi types)
//! share one code path. An apply is skipped when [`diff::needs_apply`](super::diff::needs_apply) says the live object
//! already matches (zero writes).

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, Preconditions,
    PropagationPolicy,
};
use kube::core::{ApiResource, Resource};
use kube::{Client, ResourceExt};
use serde::Serialize;
use serde_json::Value;

use super::children::ChildCaches;
use super::diff::{APPLIED_HASH_ANNOTATION, applied_hash, needs_apply};
use super::error::{Cause, Error, Invalid, Result};
use super::recreate;
use model_fleet_api::ownership;
pub use model_fleet_api::ownership::ForeignChild;
pub use model_fleet_api::render::FIELD_MANAGER;

/// Separate field manager that takes over `spec.replicas` of a Deployment before the operator stops setting it
/// (fixed -> autoscaled hand-over, DESIGN.md section 3), so dropping it from our apply does not reset it.
pub const HANDOVER_FIELD_MANAGER: &str = "model-fleet-operator-replicas-handover";

/// Patch parameters of a child apply: our field manager, `force` (we own what we render), strict field validation.
pub fn apply_params() -> PatchParams {
    PatchParams::apply(FIELD_MANAGER)
        .force()
        .validation_strict()
}

/// One rendered child object ready to apply: its resource (group/version/kind/plural), and its JSON body including
/// `apiVersion`, `kind` and `metadata.name`/`namespace`.
#[derive(Clone, Debug, PartialEq)]
pub struct Child {
    /// Which API resource the child is.
    pub resource: ApiResource,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// The full object as JSON.
    pub body: Value,
}

impl Child {
    /// Wraps a typed k8s-openapi object (Deployment, Service, ...).
    ///
    /// # Errors
    /// [`Error::Validate`] without name or namespace; [`Error::Apply`] if it does not serialize.
    pub fn typed<K>(object: &K) -> Result<Self>
    where
        K: Resource<DynamicType = ()> + Serialize,
    {
        let resource = ApiResource::erase::<K>(&());
        let name = object
            .meta()
            .name
            .clone()
            .ok_or(Invalid::MissingKey("metadata.name"))?;
        let namespace = object
            .meta()
            .namespace
            .clone()
            .ok_or(Invalid::MissingKey("metadata.namespace"))?;
        let mut body = serde_json::to_value(object)
            .map_err(|source| Error::apply(format!("{}/{name}", resource.kind), source))?;
        body["apiVersion"] = Value::String(resource.api_version.clone());
        body["kind"] = Value::String(resource.kind.clone());
        Ok(Self {
            resource,
            namespace,
            name,
            body,
        })
    }

    /// `Kind/name`, for logs and events.
    pub fn display(&self) -> String {
        format!("{}/{}", self.resource.kind, self.name)
    }

    /// The body with the [`APPLIED_HASH_ANNOTATION`] of its own content added (what is actually applied).
    pub fn with_hash(&self) -> Value {
        let mut body = self.body.clone();
        let hash = applied_hash(&body);
        let metadata = body.as_object_mut().map(|o| {
            o.entry("metadata")
                .or_insert_with(|| Value::Object(Default::default()))
        });
        if let Some(Value::Object(metadata)) = metadata {
            let annotations = metadata
                .entry("annotations")
                .or_insert_with(|| Value::Object(Default::default()));
            if !annotations.is_object() {
                *annotations = Value::Object(Default::default());
            }
            annotations[APPLIED_HASH_ANNOTATION] = Value::String(hash);
        }
        body
    }
}

/// What [`apply`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplyOutcome {
    /// The live object already matched: no request was sent.
    Unchanged,
    /// A server-side apply was sent (create or update).
    Applied,
    /// The apply could not mend the child another manager changed: it was deleted and created again
    /// ([`recreate`]; a Service only). The caller posts [`recreate::announce`].
    Recreated,
}

/// What a reconcile knows of a child before applying it ([`read`]).
// One lives per apply and is moved once: boxing the object would allocate for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Live {
    /// The child cache of its kind has listed and holds no child of that name ([`ChildCaches::unseen`]): nothing
    /// was read, and [`apply`] creates it with a create-only apply (one request for a new child instead of two).
    Unseen,
    /// Read from the API server ([`get_live`]); `None` when it does not exist.
    Read(Option<DynamicObject>),
}

impl Live {
    /// The live object, when one was read.
    pub fn object(&self) -> Option<&DynamicObject> {
        match self {
            Live::Unseen | Live::Read(None) => None,
            Live::Read(Some(object)) => Some(object),
        }
    }

    /// Whether an apply creates the child (unseen, or read and absent).
    pub fn is_absent(&self) -> bool {
        self.object().is_none()
    }
}

pub use model_fleet_api::ownership::CREATE_ONLY_VERSION;

/// The dynamic API of `resource` in `namespace`.
pub fn dynamic_api(client: &Client, resource: &ApiResource, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), namespace, resource)
}

/// Reads a child's live object (`None` when it does not exist).
///
/// # Errors
/// [`Error::Fetch`] for anything but a 404.
pub async fn get_live(client: &Client, child: &Child) -> Result<Option<DynamicObject>> {
    dynamic_api(client, &child.resource, &child.namespace)
        .get_opt(&child.name)
        .await
        .map_err(|e| Error::fetch(child.display(), e))
}

/// What is known of `child` before its apply: [`Live::Unseen`] without a request when the cache of its kind under
/// the owner label `label` has listed and holds no child of its name, else the object read ([`get_live`]). The cache
/// is only a hint: the create-only apply that follows [`Live::Unseen`] cannot touch an object that exists anyway.
///
/// # Errors
/// [`Error::Fetch`] when the read fails.
pub async fn read(
    client: &Client,
    caches: &ChildCaches,
    label: &'static str,
    child: &Child,
) -> Result<Live> {
    if caches.unseen(label, &child.resource.kind, &child.namespace, &child.name) {
        return Ok(Live::Unseen);
    }
    Ok(Live::Read(get_live(client, child).await?))
}

/// Server-side applies `child` unless the `live` object (from [`read`] or [`get_live`]) already matches; returns
/// what happened and the resulting object (the live one when unchanged). An unseen child is created with a
/// create-only apply ([`CREATE_ONLY_VERSION`]): its fields are owned through the same `Apply` entry of
/// [`FIELD_MANAGER`] as every later apply's. A write is recorded in `caches` ([`ChildCaches::wrote`]), so its own
/// watch event does not reconcile the owner again.
///
/// # Errors
/// [`Error::Apply`]: the API server refused (e.g. 422 for a field refused by strict validation), or the live object
/// cannot be turned into JSON; [`Error::Foreign`]: the object of that name is not ours; [`Error::Unseen`]: an
/// unseen child exists after all and is ours (the reconcile is retried on a fresh read).
///
/// A Service the apply cannot mend (422) may be deleted and created again first ([`recreate`]).
pub async fn apply(
    client: &Client,
    caches: &ChildCaches,
    child: &Child,
    live: Live,
) -> Result<(ApplyOutcome, DynamicObject)> {
    let mut desired = child.with_hash();
    let live = match live {
        Live::Read(live) => live,
        Live::Unseen => {
            desired["metadata"]["resourceVersion"] = Value::from(CREATE_ONLY_VERSION);
            return match send(client, caches, child, &desired).await {
                Err(Error::Apply {
                    source: Cause::Kube(kube::Error::Api(status)),
                    ..
                }) if status.code == 409 => Err(exists_after_all(client, child, &desired).await),
                sent => sent.map(|created| (ApplyOutcome::Applied, created)),
            };
        }
    };
    let live_json = live
        .as_ref()
        .map(serde_json::to_value)
        .transpose()
        .map_err(|source| Error::apply(child.display(), source))?;
    if let Some(live) = live.as_ref() {
        refuse_foreign(client, child, &desired, live).await?;
    }
    let Some(live) = live else {
        return Ok((
            ApplyOutcome::Applied,
            send(client, caches, child, &desired).await?,
        ));
    };
    if !needs_apply(&desired, live_json.as_ref()) {
        return Ok((ApplyOutcome::Unchanged, live));
    }
    match send(client, caches, child, &desired).await {
        Err(error) if recreate::may_mend(child, &error) => {
            let created =
                recreate::recreate(client, caches, (child, &live), &desired, error).await?;
            Ok((ApplyOutcome::Recreated, created))
        }
        sent => Ok((ApplyOutcome::Applied, sent?)),
    }
}

/// The server-side apply of `desired` (the body of `child`), recorded in `caches`.
pub(super) async fn send(
    client: &Client,
    caches: &ChildCaches,
    child: &Child,
    desired: &Value,
) -> Result<DynamicObject> {
    let api = dynamic_api(client, &child.resource, &child.namespace);
    let applied = api
        .patch(&child.name, &apply_params(), &Patch::Apply(desired))
        .await
        .map_err(|e| Error::apply(child.display(), e))?;
    caches.wrote(&child.resource.kind, &applied);
    tracing::info!(child = %child.display(), namespace = %child.namespace, "applied child");
    Ok(applied)
}

/// Why a create-only apply of `child` was refused (409: an object of its name exists): read it, and report it as
/// [`Error::Foreign`] when it is not ours, else [`Error::Unseen`] (also when it is gone again); a failed read is
/// reported as its [`Error::Fetch`].
async fn exists_after_all(client: &Client, child: &Child, desired: &Value) -> Error {
    let unseen = Error::Unseen {
        child: child.display(),
    };
    match get_live(client, child).await {
        Ok(Some(live)) => refuse_foreign(client, child, desired, &live)
            .await
            .err()
            .unwrap_or(unseen),
        Ok(None) => unseen,
        Err(error) => error,
    }
}

/// [`Error::Foreign`] when `live` (an object of `child`'s name) is not owned by the owner `desired` names; first
/// collects it when it is a child of a deleted predecessor ([`collect_predecessor_child`]).
async fn refuse_foreign(
    client: &Client,
    child: &Child,
    desired: &Value,
    live: &DynamicObject,
) -> Result<()> {
    let deleting = live.meta().deletion_timestamp.is_some();
    let owners = live.owner_references();
    let Some(foreign) = ForeignChild::detect(&child.display(), desired, owners, deleting) else {
        return Ok(());
    };
    if !deleting && let Some(predecessor) = ownership::predecessor_uid(desired, owners) {
        collect_predecessor_child(client, child, desired, live, &predecessor).await?;
    }
    Err(Error::Foreign(foreign))
}

/// Garbage-collector backstop for a child of a deleted predecessor ([`ownership::predecessor_uid`]): once the owner
/// `desired` names is read back live with its UID (the operator's cache may be the outdated one: then the live
/// child may be the newer object's, and nothing is deleted), deletes the child with its UID as precondition and
/// background propagation, as the collector would. The reconcile still waits ([`Error::Foreign`]) and creates its
/// own child once the name is free.
///
/// # Errors
/// [`Error::Fetch`] when the owner cannot be read; [`Error::Prune`] when the delete fails (a 404 or 409: already
/// gone or replaced, is fine).
async fn collect_predecessor_child(
    client: &Client,
    child: &Child,
    desired: &Value,
    live: &DynamicObject,
    predecessor: &str,
) -> Result<()> {
    let owner = &desired["metadata"]["ownerReferences"][0];
    let field = |name: &str| owner[name].as_str().unwrap_or_default();
    let (group, version) = match field("apiVersion").split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", field("apiVersion")),
    };
    let gvk = kube::core::GroupVersionKind::gvk(group, version, field("kind"));
    let owners = dynamic_api(client, &ApiResource::from_gvk(&gvk), &child.namespace);
    // A list by name, not a get: the operator's ClusterRole grants list and watch on its kinds, not get.
    let by_name = ListParams::default().fields(&format!("metadata.name={}", field("name")));
    let current = owners
        .list_metadata(&by_name)
        .await
        .map_err(|e| Error::fetch(format!("{}/{}", field("kind"), field("name")), e))?;
    if !current
        .items
        .iter()
        .any(|o| o.metadata.uid.as_deref() == Some(field("uid")))
    {
        return Ok(());
    }
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: live.uid(),
            resource_version: None,
        }),
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    match dynamic_api(client, &child.resource, &child.namespace)
        .delete(&child.name, &params)
        .await
    {
        Ok(_) => {
            tracing::warn!(child = %child.display(), namespace = %child.namespace, predecessor,
                "deleted a child of a deleted predecessor that the garbage collector had left");
            Ok(())
        }
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => Ok(()),
        Err(e) => Err(Error::prune(child.display(), e)),
    }
}

/// Whether `field_manager` owns `spec.replicas` of `object` through an `Apply` entry of its managedFields.
pub fn owns_spec_replicas(object: &DynamicObject, field_manager: &str) -> bool {
    object.managed_fields().iter().any(|entry| {
        entry.manager.as_deref() == Some(field_manager)
            && entry.operation.as_deref() == Some("Apply")
            && entry.subresource.as_deref().unwrap_or("").is_empty()
            && entry
                .fields_v1
                .as_ref()
                .and_then(|f| f.0.get("f:spec"))
                .and_then(|spec| spec.get("f:replicas"))
                .is_some()
    })
}

/// Fixed -> autoscaled hand-over (DESIGN.md section 3): applies `spec.replicas = replicas` under
/// [`HANDOVER_FIELD_MANAGER`], so that field stays owned (and keeps its value) once our main apply omits it.
/// The autoscaler then takes it over with its own updates.
///
/// # Errors
/// [`Error::Apply`].
pub async fn hand_over_replicas(
    client: &Client,
    resource: &ApiResource,
    namespace: &str,
    name: &str,
    replicas: i64,
) -> Result<()> {
    let body = serde_json::json!({
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": replicas},
    });
    let params = PatchParams::apply(HANDOVER_FIELD_MANAGER)
        .force()
        .validation_strict();
    dynamic_api(client, resource, namespace)
        .patch(name, &params, &Patch::Apply(&body))
        .await
        .map_err(|e| Error::apply(format!("{}/{name} spec.replicas", resource.kind), e))?;
    tracing::info!(%namespace, %name, replicas, "handed spec.replicas over to the autoscaler");
    Ok(())
}

/// Which live children to delete: those carrying `owner_uid` in their ownerReferences, not being deleted already,
/// whose `(kind, name)` is not in `keep`. Pure selection used by [`prune`].
pub fn prune_selection<'a>(
    live: &'a [ObjectMeta],
    kind: &str,
    owner_uid: &str,
    keep: &BTreeSet<(String, String)>,
) -> Vec<&'a ObjectMeta> {
    live.iter()
        .filter(|meta| {
            meta.owner_references
                .iter()
                .flatten()
                .any(|owner| owner.uid == owner_uid)
        })
        .filter(|meta| meta.deletion_timestamp.is_none())
        .filter(|meta| {
            let name = meta.name.clone().unwrap_or_default();
            !keep.contains(&(kind.to_owned(), name))
        })
        .collect()
}

/// The owner whose children [`prune`] deletes: its namespace and UID, and the label `(key, value)` its children
/// carry.
#[derive(Clone, Copy, Debug)]
pub struct PruneOwner<'a> {
    /// Namespace of the owner and its children.
    pub namespace: &'a str,
    /// The owner's UID (children are selected by their ownerReferences).
    pub uid: &'a str,
    /// The owner label of its children, e.g. `("modelfleet.io/inference", "<name>")`.
    pub label: (&'static str, &'a str),
}

/// Deletes children of the given `kinds` in the owner's namespace that carry its label, are owned by its UID and are
/// not in `keep` (`(kind, name)` pairs of the desired set). The children are read from `caches` (no request) when
/// that kind is cached and listed otherwise; a kind whose CRD is absent (404 on list) is skipped. Each delete has the
/// child's UID as a precondition, so an object that a stale cache still shows but that was replaced since is never
/// deleted. Returns the `Kind/name`s deleted.
///
/// # Errors
/// [`Error::Prune`] for list or delete failures other than 404 (gone) and 409 (replaced since it was read).
pub async fn prune(
    client: &Client,
    caches: &ChildCaches,
    owner: PruneOwner<'_>,
    kinds: &[ApiResource],
    keep: &BTreeSet<(String, String)>,
) -> Result<Vec<String>> {
    let mut deleted = Vec::new();
    for resource in kinds {
        let api = dynamic_api(client, resource, owner.namespace);
        let live = match caches.labelled(&resource.kind, owner.namespace, owner.label) {
            Some(cached) => cached,
            None => {
                let selector = format!("{}={}", owner.label.0, owner.label.1);
                match api.list(&ListParams::default().labels(&selector)).await {
                    Ok(list) => list.items.into_iter().map(|o| o.metadata).collect(),
                    Err(kube::Error::Api(status)) if status.code == 404 => continue,
                    Err(e) => return Err(Error::prune(resource.kind.clone(), e)),
                }
            }
        };
        for meta in prune_selection(&live, &resource.kind, owner.uid, keep) {
            let name = meta.name.clone().unwrap_or_default();
            let params = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: meta.uid.clone(),
                    resource_version: None,
                }),
                ..DeleteParams::background()
            };
            match api.delete(&name, &params).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {
                    continue;
                }
                Err(e) => return Err(Error::prune(format!("{}/{name}", resource.kind), e)),
            }
            let child = format!("{}/{name}", resource.kind);
            tracing::info!(%child, namespace = %owner.namespace, "pruned child no longer rendered");
            deleted.push(child);
        }
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        FieldsV1, ManagedFieldsEntry, ObjectMeta, OwnerReference,
    };
    use serde_json::json;

    fn owned(name: &str, uid: &str) -> DynamicObject {
        let resource = ApiResource::erase::<Deployment>(&());
        let mut object = DynamicObject::new(name, &resource).within("ns");
        object.metadata.owner_references = Some(vec![OwnerReference {
            uid: uid.into(),
            name: "owner".into(),
            kind: "InferenceService".into(),
            api_version: "modelfleet.io/v1alpha1".into(),
            ..Default::default()
        }]);
        object
    }

    #[test]
    fn a_foreign_child_is_reported_as_foreign_object_and_waited_for() {
        let foreign = ForeignChild {
            child: "Deployment/m".into(),
            owners: "no owner".into(),
        };
        let error = Error::Foreign(foreign.clone());
        assert_eq!(error.reason(), ForeignChild::REASON);
        assert!(error.is_wait());
        assert_eq!(error.to_string(), foreign.to_string());
    }

    #[test]
    fn typed_child_carries_api_version_kind_and_hash() {
        let deployment = Deployment {
            metadata: ObjectMeta {
                name: Some("llm".into()),
                namespace: Some("ns".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let child = Child::typed(&deployment).unwrap();
        assert_eq!(child.display(), "Deployment/llm");
        assert_eq!(child.body["apiVersion"], "apps/v1");
        let body = child.with_hash();
        let hash = body["metadata"]["annotations"][APPLIED_HASH_ANNOTATION]
            .as_str()
            .unwrap();
        assert_eq!(hash, applied_hash(&child.body));
        assert!(!needs_apply(&body, Some(&body)));
    }

    #[test]
    fn typed_child_without_namespace_is_an_error() {
        let deployment = Deployment {
            metadata: ObjectMeta {
                name: Some("llm".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(matches!(
            Child::typed(&deployment),
            Err(Error::Validate(Invalid::MissingKey(_)))
        ));
    }

    #[test]
    fn prune_selects_only_owned_children_not_desired() {
        let live = vec![
            owned("keep", "u1"),
            owned("stale", "u1"),
            owned("foreign", "u2"),
        ];
        let keep = BTreeSet::from([("Deployment".to_owned(), "keep".to_owned())]);
        let live: Vec<ObjectMeta> = live.into_iter().map(|o| o.metadata).collect();
        let names: Vec<String> = prune_selection(&live, "Deployment", "u1", &keep)
            .into_iter()
            .map(|meta| meta.name.clone().unwrap_or_default())
            .collect();
        assert_eq!(names, vec!["stale".to_owned()]);
    }

    #[test]
    fn detects_who_owns_spec_replicas() {
        let mut object = owned("llm", "u1");
        object.metadata.managed_fields = Some(vec![
            ManagedFieldsEntry {
                manager: Some(FIELD_MANAGER.into()),
                operation: Some("Apply".into()),
                fields_v1: Some(FieldsV1(
                    json!({"f:spec": {"f:replicas": {}, "f:template": {}}}),
                )),
                ..Default::default()
            },
            ManagedFieldsEntry {
                manager: Some("kube-controller-manager".into()),
                operation: Some("Update".into()),
                subresource: Some("status".into()),
                fields_v1: Some(FieldsV1(json!({"f:status": {}}))),
                ..Default::default()
            },
        ]);
        assert!(owns_spec_replicas(&object, FIELD_MANAGER));
        assert!(!owns_spec_replicas(&object, HANDOVER_FIELD_MANAGER));
    }
}
