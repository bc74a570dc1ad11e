//! A Terraform resource backed by one namespaced custom resource, managed by server-side apply.
//!
//! State layout: `id` (`namespace/name`, computed), `name` (required), `namespace` (optional,
//! defaults to the provider's namespace), the `spec` properties flattened at the top level
//! (schema derived from the CRD, see [`super::fields`]) and a `timeouts` block.
//!
//! Lifecycle rules (DESIGN.md section 6, terraform-plugin-protocol notes):
//! * plan does no I/O (works without a cluster and before the CRDs exist);
//! * non-computed attributes are planned exactly as configured;
//! * `name`, `namespace` and immutable spec fields require replacement when they change;
//! * create refuses to adopt an existing object (import it instead);
//! * create/update is a server-side apply with the configured field manager and `force`;
//! * read maps only fields we manage; a 404 returns null (Terraform plans a create);
//! * delete waits until the object is gone; a timeout names the blocking finalizers;
//! * import takes `namespace/name`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use kube::core::ApiResource;
use serde_json::{Map, Value as Json};

use super::fields::{self, Field};
use super::{Planned, ProviderContext, Resource, managed, names, timeouts};
use crate::config::DefaultNamespace;
use crate::diag::{AttrPath, Diagnostics};
use crate::schema::{Attribute, Block, Schema};
use crate::value::{Type, Value};

/// Attributes every custom-resource-backed type has besides the spec.
pub const META_ATTRIBUTES: &[&str] = &["id", "name", "namespace", "timeouts"];

/// How often delete polls for the object to disappear.
const DELETE_POLL: Duration = Duration::from_millis(500);

/// A `modelfleet_*` resource type for one custom resource kind.
pub struct CustomResourceType {
    type_name: String,
    api: ApiResource,
    fields: Vec<Field>,
    /// Terraform names of spec attributes that may change in place.
    mutable: Vec<String>,
    schema: Schema,
}

/// Why a resource type could not be defined (a programming error caught by tests).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DefinitionError {
    /// A spec property collides with a meta attribute.
    #[error("spec property {0:?} collides with a built-in attribute")]
    Collision(String),
    /// A mutable field is not a spec property.
    #[error("mutable field {0:?} is not a spec property")]
    UnknownMutable(String),
}

impl CustomResourceType {
    /// Defines a resource type from the kind's API coordinates and its `spec` OpenAPI schema.
    /// `mutable_json_fields` are the spec properties (JSON names) that may change in place;
    /// every other property requires replacement.
    ///
    /// # Errors
    /// [`DefinitionError`] when the schema collides with built-in attributes or
    /// `mutable_json_fields` names an unknown property.
    pub fn new(
        type_name: &str,
        api: ApiResource,
        spec_schema: &Json,
        mutable_json_fields: &[&str],
        description: &str,
    ) -> Result<CustomResourceType, DefinitionError> {
        let fields = fields::fields_from_openapi(spec_schema);
        if let Some(f) = fields
            .iter()
            .find(|f| META_ATTRIBUTES.contains(&f.tf_name.as_str()))
        {
            return Err(DefinitionError::Collision(f.tf_name.clone()));
        }
        let mutable = mutable_json_fields
            .iter()
            .map(|json_name| {
                fields
                    .iter()
                    .find(|f| f.json_name == *json_name)
                    .map(|f| f.tf_name.clone())
                    .ok_or_else(|| DefinitionError::UnknownMutable((*json_name).to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut block = Block {
            description: description.to_string(),
            attributes: vec![
                Attribute::computed("id", Type::String, "`namespace/name` of the object."),
                Attribute::required(
                    "name",
                    Type::String,
                    "Object name (metadata.name). Changing it replaces the object.",
                ),
                Attribute::optional_computed(
                    "namespace",
                    Type::String,
                    "Namespace (default: the provider's `namespace`). Changing it replaces the \
                     object.",
                ),
            ],
            blocks: vec![],
        };
        fields::add_to_block(&mut block, &fields);
        block.blocks.push(timeouts::block());
        Ok(CustomResourceType {
            type_name: type_name.to_string(),
            api,
            fields,
            mutable,
            schema: Schema { version: 0, block },
        })
    }

    /// The spec fields.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The live object `state` names (`namespace`, `name`), or `None` when it is gone (404).
    ///
    /// # Errors
    /// The API request failed (the diagnostic names the object and says what to check).
    pub async fn fetch(
        &self,
        ctx: &ProviderContext,
        state: &Value,
    ) -> Result<Option<DynamicObject>, Diagnostics> {
        let (namespace, name) = namespace_and_name(state)?;
        let object = format!("{namespace}/{name}");
        let api = self.api(self.client(ctx).await?, &namespace);
        let current = api
            .get_opt(&name)
            .await
            .map_err(|e| self.api_error(e, "read", &object, ctx))?;
        if current.is_none() {
            tracing::info!(%object, "object is gone; removing it from state");
        }
        Ok(current)
    }

    /// The refreshed state for `current`, the live object of `state` (pure): the spec fields
    /// `field_manager` owns (its managedFields entry), plus the fields `state` already holds, so
    /// edits by other managers to fields we manage show up as drift, while fields only the API
    /// server or the operator set do not.
    pub fn state_from_live(
        &self,
        field_manager: &str,
        state: &Value,
        current: &DynamicObject,
    ) -> Value {
        let namespace = current.metadata.namespace.clone().unwrap_or_default();
        let name = current.metadata.name.clone().unwrap_or_default();
        let spec = current
            .data
            .get("spec")
            .cloned()
            .unwrap_or(Json::Object(Map::new()));
        let owned = managed::owned_spec_fields(
            current
                .metadata
                .managed_fields
                .as_deref()
                .unwrap_or_default(),
            field_manager,
        );
        // Fields we manage: owned by our field manager, or present in our state (so edits by
        // other managers to fields we manage show up as drift).
        let mut filtered = match &owned {
            Some(set) => managed::prune(&spec, set)
                .as_object()
                .cloned()
                .unwrap_or_default(),
            None => Map::new(),
        };
        for field in &self.fields {
            let in_state = match state.get(&field.tf_name) {
                None | Some(Value::Null) => false,
                Some(Value::List(items)) => !items.is_empty(),
                Some(Value::Map(entries)) => !entries.is_empty(),
                Some(_) => true,
            };
            if in_state && let Some(value) = spec.get(&field.json_name) {
                filtered.insert(field.json_name.clone(), value.clone());
            }
        }
        let timeouts = state.get("timeouts").cloned().unwrap_or(Value::Null);
        self.state_from_object(&namespace, &name, &filtered, timeouts)
    }

    /// Terraform names of the attributes whose change requires replacement.
    pub fn replacing_attributes(&self) -> Vec<String> {
        let mut names = vec!["name".to_string(), "namespace".to_string()];
        names.extend(
            self.fields
                .iter()
                .filter(|f| !self.mutable.contains(&f.tf_name))
                .map(|f| f.tf_name.clone()),
        );
        names
    }

    fn kind(&self) -> &str {
        &self.api.kind
    }

    fn api(&self, client: kube::Client, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(client, namespace, &self.api)
    }

    async fn client(&self, ctx: &ProviderContext) -> Result<kube::Client, Diagnostics> {
        ctx.client.get().await.map_err(|e| e.to_diagnostics())
    }

    /// The state value for an object: spec (already filtered) plus meta attributes.
    fn state_from_object(
        &self,
        namespace: &str,
        name: &str,
        spec: &Map<String, Json>,
        timeouts: Value,
    ) -> Value {
        let mut state = match fields::from_json(&self.fields, spec) {
            Value::Object(attrs) => attrs,
            _ => BTreeMap::new(),
        };
        state.insert("id".into(), Value::string(format!("{namespace}/{name}")));
        state.insert("name".into(), Value::string(name));
        state.insert("namespace".into(), Value::string(namespace));
        state.insert("timeouts".into(), timeouts);
        Value::Object(state)
    }

    /// Translates a Kubernetes API error into diagnostics with attribute paths where possible.
    fn api_error(
        &self,
        err: kube::Error,
        action: &str,
        object: &str,
        ctx: &ProviderContext,
    ) -> Diagnostics {
        let kube::Error::Api(status) = &err else {
            return Diagnostics::error(
                format!("Cannot {action} {} {object}", self.kind()),
                format!("Kubernetes API request failed: {err}"),
            );
        };
        if status.is_conflict() && action == "apply" {
            return Diagnostics::error(
                format!("Field manager conflict applying {} {object}", self.kind()),
                format!(
                    "{}\n\nAnother field manager owns these fields (named above with the fields). \
                     Make the configuration agree with it, remove its changes, or set \
                     force_conflicts = true in the provider block to take ownership as field \
                     manager {:?}.",
                    status.message, ctx.config.field_manager
                ),
            );
        }
        if status.is_not_found() && status.details.as_ref().is_none_or(|d| d.name.is_empty()) {
            return Diagnostics::error(
                format!("{} API not found", self.kind()),
                format!(
                    "The API server has no {}/{} {} resource ({}): install the Model Fleet CRDs \
                     (chart or `model-fleet-operator crd`) before applying. Server said: {}",
                    self.api.group,
                    self.api.version,
                    self.api.plural,
                    self.kind(),
                    status.message
                ),
            );
        }
        let mut diags = Diagnostics::new();
        let causes = status
            .details
            .as_ref()
            .map(|d| d.causes.as_slice())
            .unwrap_or_default();
        for cause in causes {
            let path = fields::attr_path_for(&self.fields, &cause.field);
            diags.push_error(
                path,
                format!("Invalid {} {object}", self.kind()),
                format!("{} (field {})", cause.message, cause.field),
            );
        }
        if diags.0.is_empty() {
            diags.push_error(
                None,
                format!("Cannot {action} {} {object}", self.kind()),
                format!(
                    "{} ({}, HTTP {})",
                    status.message, status.reason, status.code
                ),
            );
        }
        diags
    }

    async fn delete(&self, ctx: &ProviderContext, prior: &Value) -> Result<(), Diagnostics> {
        let (namespace, name) = namespace_and_name(prior)?;
        let object = format!("{namespace}/{name}");
        let api = self.api(self.client(ctx).await?, &namespace);
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.is_not_found() => return Ok(()),
            Err(e) => return Err(self.api_error(e, "delete", &object, ctx)),
        }
        let timeout = timeouts::get(prior, "delete", timeouts::DEFAULT_DELETE);
        let started = Instant::now();
        loop {
            let current = api
                .get_opt(&name)
                .await
                .map_err(|e| self.api_error(e, "read", &object, ctx))?;
            let Some(current) = current else {
                return Ok(());
            };
            if started.elapsed() >= timeout {
                let finalizers = current.metadata.finalizers.unwrap_or_default();
                let blocking = if finalizers.is_empty() {
                    "no finalizers are set; the API server has not finished deleting it".to_string()
                } else {
                    format!("it is held by finalizers: {}", finalizers.join(", "))
                };
                return Err(Diagnostics::error(
                    format!("Timed out deleting {} {object}", self.kind()),
                    format!(
                        "The object still exists after {}s: {blocking}. The controller owning a \
                         finalizer must remove it (for example when a TrainingRun using the \
                         Dataset finishes); the resource stays in state so destroy can be \
                         retried. Raise timeouts.delete to wait longer.",
                        timeout.as_secs()
                    ),
                ));
            }
            tokio::time::sleep(DELETE_POLL).await;
        }
    }

    async fn create_or_update(
        &self,
        ctx: &ProviderContext,
        prior: &Value,
        planned: &Value,
        config: &Value,
    ) -> Result<Value, Diagnostics> {
        // The planned state may still hold unknowns for values that came from other resources;
        // at apply time the configuration is wholly known, and every non-computed attribute is
        // planned exactly as configured, so the configuration is the source of truth.
        let desired = if config.is_null() { planned } else { config };
        let name = desired
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Diagnostics::error_at(AttrPath::attrs(&["name"]), "Name not known", ""))?
            .to_string();
        let namespace = match planned.get("namespace") {
            Some(Value::String(ns)) => ns.clone(),
            _ => match (config.get("namespace"), &ctx.config.namespace) {
                (Some(Value::String(ns)), _) => ns.clone(),
                (_, DefaultNamespace::Known(ns)) => ns.clone(),
                (_, DefaultNamespace::Unknown) => {
                    return Err(Diagnostics::error_at(
                        AttrPath::attrs(&["namespace"]),
                        "Namespace not known",
                        "The provider's namespace is still unknown at apply time.",
                    ));
                }
            },
        };
        let object = format!("{namespace}/{name}");
        let spec = fields::to_json(&self.fields, desired, &AttrPath::root())?;
        let api = self.api(self.client(ctx).await?, &namespace);
        if prior.is_null() {
            let existing = api
                .get_opt(&name)
                .await
                .map_err(|e| self.api_error(e, "read", &object, ctx))?;
            if existing.is_some() {
                return Err(Diagnostics::error(
                    format!("{} {object} already exists", self.kind()),
                    format!(
                        "An object with this name exists but is not in Terraform state. Import \
                         it with: terraform import {}.<name> {object}",
                        self.type_name
                    ),
                ));
            }
        }
        let manifest = serde_json::json!({
            "apiVersion": self.api.api_version,
            "kind": self.api.kind,
            "metadata": { "name": name, "namespace": namespace },
            "spec": spec,
        });
        let mut params = PatchParams::apply(&ctx.config.field_manager);
        if ctx.config.force_conflicts {
            params = params.force();
        }
        api.patch(&name, &params, &Patch::Apply(&manifest))
            .await
            .map_err(|e| self.api_error(e, "apply", &object, ctx))?;
        // The CRDs add no defaults, so the object holds exactly the planned spec: the new state
        // is the plan with the computed attributes filled (every known planned value unchanged).
        let mut state = match desired {
            Value::Object(attrs) => attrs.clone(),
            _ => BTreeMap::new(),
        };
        state.insert("id".into(), Value::string(&object));
        state.insert("namespace".into(), Value::string(&namespace));
        Ok(Value::Object(state))
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
    Ok((get("namespace")?, get("name")?))
}

/// Splits an import ID `namespace/name`.
///
/// # Errors
/// A diagnostic explaining the expected form.
pub fn parse_import_id(kind: &str, id: &str) -> Result<(String, String), Diagnostics> {
    let invalid = |why: &str| {
        Diagnostics::error(
            "Invalid import ID",
            format!(
                "{why}: expected \"namespace/name\" of the {kind}, e.g. \"ml/corpus-v3\", got {id:?}."
            ),
        )
    };
    let Some((namespace, name)) = id.split_once('/') else {
        return Err(invalid("the ID has no namespace"));
    };
    if !names::is_dns_label(namespace) {
        return Err(invalid("the namespace part is not a valid namespace name"));
    }
    if !names::is_dns_subdomain(name) {
        return Err(invalid("the name part is not a valid object name"));
    }
    Ok((namespace.to_string(), name.to_string()))
}

#[tonic::async_trait]
impl Resource for CustomResourceType {
    fn type_name(&self) -> &str {
        &self.type_name
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut diags = Diagnostics::new();
        if let Some(Value::String(name)) = config.get("name")
            && !names::is_dns_subdomain(name)
        {
            diags.push_error(
                Some(AttrPath::attrs(&["name"])),
                "Invalid name",
                format!(
                    "{name:?} is not a valid {} name: lowercase letters, digits, '-' and '.', up \
                     to 253 characters, starting and ending with a letter or digit.",
                    self.kind()
                ),
            );
        }
        if let Some(Value::String(ns)) = config.get("namespace")
            && !names::is_dns_label(ns)
        {
            diags.push_error(
                Some(AttrPath::attrs(&["namespace"])),
                "Invalid namespace",
                format!("{ns:?} is not a valid namespace name (RFC 1123 label)."),
            );
        }
        diags.extend(timeouts::validate(config));
        for field in &self.fields {
            if let (fields::FieldKind::Json, Some(Value::String(text))) =
                (&field.kind, config.get(&field.tf_name))
                && serde_json::from_str::<Json>(text).is_err()
            {
                diags.push_error(
                    Some(AttrPath::attrs(&[&field.tf_name])),
                    "Invalid JSON",
                    "This attribute takes a JSON document (use jsonencode()).",
                );
            }
        }
        diags
    }

    fn plan(
        &self,
        ctx: &ProviderContext,
        prior: &Value,
        proposed: &Value,
        config: &Value,
    ) -> Result<Planned, Diagnostics> {
        if proposed.is_null() {
            return Ok(Planned {
                state: Value::Null,
                requires_replace: vec![],
            });
        }
        let Value::Object(mut planned) = proposed.clone() else {
            return Err(Diagnostics::error(
                "Invalid proposed state",
                "expected an object",
            ));
        };
        if prior.is_null() {
            planned.insert("id".into(), Value::Unknown);
            if matches!(config.get("namespace"), None | Some(Value::Null)) {
                planned.insert(
                    "namespace".into(),
                    match &ctx.config.namespace {
                        DefaultNamespace::Known(ns) => Value::string(ns),
                        DefaultNamespace::Unknown => Value::Unknown,
                    },
                );
            }
        }
        let planned = Value::Object(planned);
        let requires_replace = if prior.is_null() {
            vec![]
        } else {
            self.replacing_attributes()
                .into_iter()
                .filter(|attr| prior.get(attr) != planned.get(attr))
                .map(|attr| AttrPath::attrs(&[&attr]))
                .collect()
        };
        Ok(Planned {
            state: planned,
            requires_replace,
        })
    }

    async fn read(&self, ctx: &ProviderContext, state: &Value) -> Result<Value, Diagnostics> {
        Ok(match self.fetch(ctx, state).await? {
            Some(current) => self.state_from_live(&ctx.config.field_manager, state, &current),
            None => Value::Null,
        })
    }

    async fn apply(
        &self,
        ctx: &ProviderContext,
        prior: &Value,
        planned: &Value,
        config: &Value,
    ) -> (Value, Diagnostics) {
        if planned.is_null() {
            return match self.delete(ctx, prior).await {
                Ok(()) => (Value::Null, Diagnostics::new()),
                Err(diags) => (prior.clone(), diags),
            };
        }
        match self.create_or_update(ctx, prior, planned, config).await {
            Ok(state) => (state, Diagnostics::new()),
            Err(diags) => (prior.clone(), diags),
        }
    }

    async fn import(&self, ctx: &ProviderContext, id: &str) -> Result<Value, Diagnostics> {
        let (namespace, name) = parse_import_id(self.kind(), id)?;
        let api = self.api(self.client(ctx).await?, &namespace);
        let current = api
            .get_opt(&name)
            .await
            .map_err(|e| self.api_error(e, "read", id, ctx))?
            .ok_or_else(|| {
                Diagnostics::error(
                    "Cannot import non-existent remote object",
                    format!(
                        "{} {id} does not exist (checked namespace {namespace:?}).",
                        self.kind()
                    ),
                )
            })?;
        let spec = current
            .data
            .get("spec")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        Ok(self.state_from_object(&namespace, &name, &spec, Value::Null))
    }
}

#[cfg(test)]
mod tests;
