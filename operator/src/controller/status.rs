//! The status writer: one server-side apply through the status subresource, and none when nothing changed.
//!
//! DESIGN.md section 5: status via the status subresource with `observedGeneration`; a reconcile of an unchanged
//! object performs zero writes. The caller passes the desired status (with conditions already merged by
//! [`conditions::merge`], which keeps `lastTransitionTime`s); the writer compares it with
//! the current status ignoring timestamps ([`diff::status_differs`](super::diff::status_differs)) and writes only a
//! difference.

use kube::api::{Api, Patch, PatchParams};
use kube::core::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use model_fleet_api::conditions;
use model_fleet_api::render::FIELD_MANAGER;
use model_fleet_api::status::{Draft, HasConditions};

use super::diff::status_differs;
use super::error::{Error, Result};
use super::reconcile::Owner;
use super::written::StatusWrites;

/// A kind whose status the writer patches: a typed resource that deserializes from the API server's answer and can
/// be kept in [`StatusWrites`].
pub trait StatusObject:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static
{
}

impl<K> StatusObject for K where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// Whether [`write_status`] sent a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusWrite {
    /// The current status already matched: no request.
    Unchanged,
    /// The status subresource was patched.
    Written,
}

/// Writes `desired` as the status of the object `owner.name` in `api` unless `current` (the object's status as last
/// read, `None` when it has none) already matches it.
///
/// The write is a forced server-side apply of `{apiVersion, kind, metadata.resourceVersion, status}` on the status
/// subresource with field manager [`FIELD_MANAGER`], so fields the operator stops setting are removed. The
/// `resourceVersion` read with the object is a precondition (Kubernetes optimistic concurrency; server-side apply
/// honours it): a status computed from an outdated read, for instance a reconcile of an object that was deleted and
/// re-created under the same name meanwhile, never lands on the newer object (a `metadata.uid` in the body would
/// not do: the status subresource keeps the stored metadata).
///
/// The object the write returns is recorded in `writes` with the version it replaced ([`StatusWrites::record`]), for
/// a reconcile that starts before the watch delivers it.
///
/// # Errors
/// [`Error::Status`]: an unserializable status, or the request failed (409 Conflict when the object changed since
/// it was read; [`Error::is_conflict`]).
pub async fn write_status<K, S>(
    api: &Api<K>,
    writes: &StatusWrites,
    owner: &Owner,
    current: Option<&S>,
    desired: &S,
) -> Result<StatusWrite>
where
    K: StatusObject,
    S: Serialize,
{
    let name = &owner.name;
    let object = || format!("{}/{name}", K::kind(&()));
    let to_json =
        |status: &S| serde_json::to_value(status).map_err(|source| Error::status(object(), source));
    let desired = to_json(desired)?;
    let current = current.map(to_json).transpose()?;
    if !status_differs(current.as_ref(), &desired) {
        return Ok(StatusWrite::Unchanged);
    }
    let body = status_patch::<K>(desired, owner.resource_version.as_deref());
    let written = api
        .patch_status(
            name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(|e| Error::status(object(), e))?;
    if let Some(replaced) = &owner.resource_version {
        writes.record(replaced, written);
    }
    Ok(StatusWrite::Written)
}

/// The status step of a reconcile: merges the draft's conditions into the current ones (keeping transition times,
/// [`conditions::merge`], `observedGeneration` from `owner`), puts them into the draft's status, and writes it with
/// [`write_status`] unless unchanged.
///
/// Returns the status as it now stands, or `None` when the object was deleted while it was reconciled (404: nothing
/// to report on, case O-03).
///
/// # Errors
/// Those of [`write_status`] other than a 404.
pub async fn write_draft<K, S>(
    api: &Api<K>,
    writes: &StatusWrites,
    owner: &Owner,
    current: Option<&S>,
    draft: Draft<S>,
) -> Result<Option<S>>
where
    K: StatusObject,
    S: Serialize + HasConditions,
{
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    let current_conditions = current.map(HasConditions::conditions).unwrap_or_default();
    let merged = conditions::merge(
        current_conditions,
        &draft.conditions,
        owner.generation,
        &now,
    );
    let mut status = draft.status;
    status.set_conditions(merged);
    match write_status(api, writes, owner, current, &status).await {
        Ok(_) => Ok(Some(status)),
        Err(error) if error.is_not_found() => Ok(None),
        Err(error) => Err(error),
    }
}

/// The apply body for a status: `{apiVersion, kind, status}`, with `metadata.resourceVersion` when given (the
/// write's precondition).
pub fn status_patch<K: Resource<DynamicType = ()>>(
    status: Value,
    resource_version: Option<&str>,
) -> Value {
    let mut body = serde_json::json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "status": status,
    });
    if let Some(version) = resource_version {
        body["metadata"] = serde_json::json!({ "resourceVersion": version });
    }
    body
}
