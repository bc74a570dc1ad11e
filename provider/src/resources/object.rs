//! [`CustomResource<K>`]: a Terraform resource backed by one namespaced custom resource of kind `K`, managed by
//! server-side apply. Everything kind-specific comes from [`Kind`]; everything here is the same for all kinds.
//!
//! State layout: `id` (`namespace/name`, computed), `name` (required), `namespace` (optional, defaults to the
//! provider's namespace), the `spec` properties flattened at the top level (schema derived from the CRD, see
//! [`super::fields`]), the kind's computed attributes, `wait_for` (kinds with waits) and a `timeouts` block.
//!
//! Lifecycle rules (DESIGN.md section 6, terraform-plugin-protocol notes):
//! * plan does no I/O (works without a cluster and before the CRDs exist); its modifiers are [`super::plan`];
//! * create refuses to adopt an existing object (import it instead);
//! * create/update is a server-side apply with the configured field manager (and `force` when configured); a change
//!   of only `wait_for`, `timeouts` or the written form of an equal quantity sends nothing;
//! * read maps only fields we manage, keeps the written form of equal quantities, refreshes the kind's facts; a 404
//!   returns null (Terraform plans a create); an object being deleted stays, with a warning ([`terminating`]);
//! * delete waits until the object is gone; a timeout names the blocking finalizers;
//! * `wait_for` bounds by `timeouts`; on timeout the new state is returned with the error, so Terraform keeps
//!   (taints) the object instead of creating it twice;
//! * import takes `namespace/name`.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::time::Duration;

use kube::api::{Api, DynamicObject};
use kube::core::ApiResource;
use serde_json::{Map, Value as Json};

pub use import::parse_import_id;

use super::api_error::{self, Action};
use super::attributes::{ID, NAME, NAMESPACE, TIMEOUTS, WAIT_FOR};
use super::fields::{self, Field};
use super::kind::{Kind, Source};
use super::snapshot::{self, Lookup};
use super::takeover::Takeover;
use super::{
    Applied, Planned, ProviderContext, Resource, Wrote, managed, plan, quantity, timeouts,
};
use crate::diag::{AttrPath, Diagnostics};
use crate::schema::Schema;
use crate::value::Value;

/// Attributes every custom-resource-backed type has besides the spec and the kind's own.
pub const META_ATTRIBUTES: &[&str] = &[ID, NAME, NAMESPACE, TIMEOUTS, WAIT_FOR];

/// How often delete polls for the object to disappear.
const DELETE_POLL: Duration = Duration::from_millis(500);

/// Default wait for `wait_for` after a create or update.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(20 * 60);

/// How often a wait polls the object.
const WAIT_POLL: Duration = Duration::from_secs(1);

/// A `modelfleet_*` resource type for the custom resource kind `K` (see the module docs).
pub struct CustomResource<K: Kind> {
    api: ApiResource,
    fields: Vec<Field>,
    spec_schema: Json,
    /// Terraform names of the attributes whose change requires replacement.
    replacing: Vec<String>,
    schema: Schema,
    kind: PhantomData<K>,
}

/// Why a resource type could not be defined (a programming error caught by tests).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DefinitionError {
    /// A spec property or computed attribute collides with another attribute.
    #[error("attribute {0:?} is defined twice")]
    Collision(String),
    /// A mutable field is not a spec property.
    #[error("mutable field {0:?} is not a spec property")]
    UnknownMutable(String),
}

impl<K: Kind> CustomResource<K> {
    /// Defines the resource type from `K`'s CRD.
    ///
    /// # Errors
    /// [`DefinitionError`] when the spec collides with built-in or computed attributes, or `K::MUTABLE` names an
    /// unknown property.
    pub fn new() -> Result<Self, DefinitionError> {
        let api = ApiResource::erase::<K::Object>(&());
        let spec_schema = model_fleet_api::validate::schema_of(&api.kind)
            .and_then(|s| s.pointer("/properties/spec"))
            .cloned()
            .unwrap_or_default();
        let fields = fields::with_terraform_names(fields::fields_from_openapi(&spec_schema));
        let mut taken: Vec<&str> = META_ATTRIBUTES.to_vec();
        for name in fields
            .iter()
            .map(|f| f.tf_name.as_str())
            .chain(K::COMPUTED.iter().map(|c| c.name))
        {
            if taken.contains(&name) {
                return Err(DefinitionError::Collision(name.to_string()));
            }
            taken.push(name);
        }
        let replacing = schema::replacing_attributes(&fields, K::MUTABLE)?;
        let schema = Schema {
            version: 0,
            block: schema::block::<K>(&fields),
        };
        Ok(CustomResource {
            api,
            fields,
            spec_schema,
            replacing,
            schema,
            kind: PhantomData,
        })
    }

    /// The spec fields.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The `spec` OpenAPI schema of the kind's CRD (JSON).
    pub fn spec_schema(&self) -> &Json {
        &self.spec_schema
    }

    /// Terraform names of the attributes whose change requires replacement (`name`, `namespace`, immutable spec
    /// fields).
    pub fn replacing_attributes(&self) -> &[String] {
        &self.replacing
    }

    fn client_api(&self, client: kube::Client, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(client, namespace, &self.api)
    }

    async fn client(&self, ctx: &ProviderContext) -> Result<kube::Client, Diagnostics> {
        ctx.client.get().await.map_err(|e| e.to_diagnostics())
    }

    fn api_error(
        &self,
        err: kube::Error,
        action: Action,
        object: &str,
        ctx: &ProviderContext,
    ) -> Diagnostics {
        api_error::diagnostics(err, action, &self.api, object, &self.fields, ctx)
    }

    /// The live object `state` names (`namespace`, `name`), or `None` when it is gone (the object's own 404; a
    /// missing CRD or another cluster is an error, see [`api_error::get_object`]).
    ///
    /// # Errors
    /// The API request failed (the diagnostic names the object and says what to check).
    pub async fn fetch(
        &self,
        ctx: &ProviderContext,
        state: &Value,
    ) -> Result<Option<DynamicObject>, Diagnostics> {
        let (api, namespace, name) = self.api_of(ctx, state).await?;
        self.get(ctx, &api, &namespace, &name).await
    }

    /// The namespace's client, the namespace and the name of the object `state` names.
    ///
    /// # Errors
    /// `state` lacks a namespace or name, or no client could be built (the diagnostic says which).
    async fn api_of(
        &self,
        ctx: &ProviderContext,
        state: &Value,
    ) -> Result<(Api<DynamicObject>, String, String), Diagnostics> {
        let (namespace, name) = namespace_and_name(state)?;
        let api = self.client_api(self.client(ctx).await?, &namespace);
        Ok((api, namespace, name))
    }

    /// One GET of `namespace/name` through `api` (its namespace's client): [`Self::fetch`] once the names are known.
    async fn get(
        &self,
        ctx: &ProviderContext,
        api: &Api<DynamicObject>,
        namespace: &str,
        name: &str,
    ) -> Result<Option<DynamicObject>, Diagnostics> {
        let object = format!("{namespace}/{name}");
        api_error::get_object(api, name)
            .await
            .map_err(|e| self.api_error(e, Action::Read, &object, ctx))
    }

    /// The state of the live object `namespace/name` as a whole (one GET): its entire spec, whoever wrote it, the
    /// kind's facts and plan-time values; `wait_for` and `timeouts` null. What an import and a data source read.
    /// `None` when the object does not exist.
    ///
    /// # Errors
    /// The API request failed (the diagnostic names the object and says what to check).
    pub async fn observed(
        &self,
        ctx: &ProviderContext,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, Diagnostics> {
        let api = self.client_api(self.client(ctx).await?, namespace);
        let Some(current) = self.get(ctx, &api, namespace, name).await? else {
            return Ok(None);
        };
        let spec = current
            .data
            .get("spec")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        let state = self.state_from_spec(namespace, name, &spec, &Value::Null);
        let object = serde_json::to_value(&current).unwrap_or(Json::Null);
        Ok(Some(plan::with_plan_time_values::<K>(
            &self.fields,
            merge(state, live_facts::<K>(&object)),
        )))
    }

    /// The live object of `state` for a refresh: from the snapshot of its namespace once this process lists it
    /// ([`super::snapshot`]), else with one GET ([`Self::get`]; `None` when the object is gone).
    async fn refresh_read(
        &self,
        ctx: &ProviderContext,
        state: &Value,
    ) -> Result<Option<DynamicObject>, Diagnostics> {
        let (api, namespace, name) = self.api_of(ctx, state).await?;
        let key = (
            format!("{}/{}", self.api.api_version, self.api.plural),
            namespace.clone(),
        );
        match ctx
            .snapshots
            .lookup(key, &name, || snapshot::list(&api))
            .await
        {
            Lookup::Listed(object) => Ok(Some(*object)),
            Lookup::Get => self.get(ctx, &api, &namespace, &name).await,
        }
    }

    /// The refreshed state for `live`, the object of `state` (pure): the spec fields `field_manager` owns (its
    /// managedFields entry) plus the values at the paths `state` already holds ([`managed::visible`]: edits by other
    /// managers to fields we set show up as drift, while fields other managers added beside ours, which an apply
    /// cannot remove, do not), with the written form of
    /// equal quantities kept; `wait_for` and `timeouts` from `state`; the kind's facts from `live`; the plan-time
    /// values recomputed.
    pub fn state_from_live(
        &self,
        field_manager: &str,
        state: &Value,
        live: &DynamicObject,
    ) -> Value {
        let spec = live
            .data
            .get("spec")
            .cloned()
            .unwrap_or(Json::Object(Map::new()));
        let owned = managed::owned_spec_fields(
            live.metadata.managed_fields.as_deref().unwrap_or_default(),
            field_manager,
        );
        let prior =
            fields::to_known_json(&self.fields, state).map_or(Json::Null, |(p, _)| Json::Object(p));
        let filtered = managed::visible(&spec, owned.as_ref(), &prior);
        let namespace = live.metadata.namespace.clone().unwrap_or_default();
        let name = live.metadata.name.clone().unwrap_or_default();
        let mut read = self.state_from_spec(&namespace, &name, &filtered, state);
        quantity::keep_written(&self.spec_schema, state, &mut read);
        let object = serde_json::to_value(live).unwrap_or(Json::Null);
        plan::with_plan_time_values::<K>(&self.fields, merge(read, live_facts::<K>(&object)))
    }

    /// A state value: `spec` (JSON, already filtered) plus the meta attributes; `wait_for` and `timeouts` come from
    /// `previous` (null on import); facts and plan-time values are the caller's.
    fn state_from_spec(
        &self,
        namespace: &str,
        name: &str,
        spec: &Map<String, Json>,
        previous: &Value,
    ) -> Value {
        let mut state = match fields::from_json(&self.fields, spec) {
            Value::Object(attrs) => attrs,
            _ => BTreeMap::new(),
        };
        state.insert(ID.into(), Value::string(format!("{namespace}/{name}")));
        state.insert(NAME.into(), Value::string(name));
        state.insert(NAMESPACE.into(), Value::string(namespace));
        state.insert(
            TIMEOUTS.into(),
            previous.get(TIMEOUTS).cloned().unwrap_or(Value::Null),
        );
        if !K::WAIT_VALUES.is_empty() {
            state.insert(
                WAIT_FOR.into(),
                previous.get(WAIT_FOR).cloned().unwrap_or(Value::Null),
            );
        }
        Value::Object(state)
    }
}

/// The kind's run-time facts from the object's JSON (every [`Source::Live`] attribute).
pub fn live_facts<K: Kind>(object: &Json) -> BTreeMap<String, Value> {
    K::COMPUTED
        .iter()
        .filter_map(|c| match c.source {
            Source::Live(read) => Some((c.name.to_string(), read(object))),
            Source::Plan { .. } => None,
        })
        .collect()
}

/// `resource` with `values` set.
pub fn merge(resource: Value, values: BTreeMap<String, Value>) -> Value {
    match resource {
        Value::Object(mut attrs) => {
            attrs.extend(values);
            Value::Object(attrs)
        }
        other => other,
    }
}

/// `namespace` and `name` of a state value.
fn namespace_and_name(state: &Value) -> Result<(String, String), Diagnostics> {
    let get = |attr: &str| {
        state
            .get(attr)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                Diagnostics::error_at(
                    AttrPath::attrs(&[attr]),
                    "Incomplete state",
                    format!("The state has no {attr}."),
                )
            })
    };
    Ok((get(NAMESPACE)?, get(NAME)?))
}

#[tonic::async_trait]
impl<K: Kind> Resource for CustomResource<K> {
    fn type_name(&self) -> &str {
        K::TYPE_NAME
    }

    fn kind(&self) -> &str {
        &self.api.kind
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        super::validate::config::<K>(&self.fields, &self.spec_schema, config)
    }

    fn plan(
        &self,
        ctx: &ProviderContext,
        prior: &Value,
        proposed: &Value,
        config: &Value,
    ) -> Result<Planned, Diagnostics> {
        plan::plan::<K>(
            &plan::Definition {
                fields: &self.fields,
                spec_schema: &self.spec_schema,
                replacing: &self.replacing,
            },
            &ctx.config.namespace,
            prior,
            proposed,
            config,
        )
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        state: &Value,
    ) -> Result<(Value, Diagnostics), Diagnostics> {
        // One object (a GET or the namespace's snapshot): the spec fields and the status facts come from it.
        let live = self.refresh_read(ctx, state).await?;
        Ok(self.refreshed(&ctx.config.field_manager, state, live.as_ref()))
    }

    async fn apply(
        &self,
        ctx: &ProviderContext,
        (prior, planned, config): (&Value, &Value, &Value),
        takeover: &Takeover,
    ) -> Applied {
        let failed = |diagnostics| Applied {
            state: prior.clone(),
            diagnostics,
            wrote: None,
        };
        // This process writes: reads after it must not be served from a snapshot taken before.
        ctx.snapshots.invalidate();
        if planned.is_null() {
            return match self.delete(ctx, prior).await {
                Ok(()) => Applied {
                    state: Value::Null,
                    diagnostics: Diagnostics::new(),
                    wrote: None,
                },
                Err(diags) => failed(diags),
            };
        }
        // Nothing to send when only wait_for, timeouts or the written form of an equal quantity changed (a
        // TrainingRun's spec could not take even that).
        let (state, mut diagnostics, wrote) =
            if plan::spec_unchanged(&self.spec_schema, prior, planned) {
                (planned.clone(), Diagnostics::new(), None)
            } else {
                match self
                    .create_or_update(ctx, (prior, planned, config), takeover)
                    .await
                {
                    Ok(written) => (
                        written.state,
                        written.warnings,
                        Some(Wrote { uid: written.uid }),
                    ),
                    Err(diags) => return failed(diags),
                }
            };
        if K::WAIT_VALUES.is_empty() {
            return Applied {
                state,
                diagnostics,
                wrote,
            };
        }
        let which = if prior.is_null() { "create" } else { "update" };
        let timeout = timeouts::get(planned, which, DEFAULT_WAIT);
        let (object, waited) = self.wait(ctx, &state, timeout, prior.is_null()).await;
        diagnostics.extend(waited);
        Applied {
            state: write::fill_unknown_facts::<K>(state, object.as_ref()),
            diagnostics,
            wrote,
        }
    }

    async fn import(&self, ctx: &ProviderContext, id: &str) -> Result<Value, Diagnostics> {
        let (namespace, name) = parse_import_id(&self.api.kind, id)?;
        self.observed(ctx, &namespace, &name).await?.ok_or_else(|| {
            Diagnostics::error(
                "Cannot import non-existent remote object",
                format!(
                    "{} {id} does not exist (checked namespace {namespace:?}).",
                    self.api.kind
                ),
            )
        })
    }
}

mod import;
mod schema;
mod terminating;
mod write;

#[cfg(test)]
mod tests;
