//! Data sources `modelfleet_inference`, `modelfleet_training` and `modelfleet_dataset`: read one existing object of
//! the kind by `name` and `namespace`, for a configuration that uses an object it does not manage (one another
//! workspace, a GitOps tool or `kubectl` created): a service's `url` and readiness, a run's Job name and phase, a
//! Dataset's version. Read-only: a data source never writes and never waits.
//!
//! Schema ([`read_only_block`]): the resource type's schema with every argument made a computed attribute, nested
//! blocks included (tfplugin5 has no computed blocks, so each becomes a computed attribute of the block's object
//! type, read as `data.modelfleet_inference.x.gateway.hostnames`); `name` required, `namespace` optional (the
//! provider's `namespace` when null), `id` computed; no `wait_for`, no `timeouts`.
//!
//! Values: the object's whole spec (not only the fields a field manager owns, as a resource's refresh keeps), the
//! kind's plan-time values recomputed from it and its facts read from the status, as an import reads them. Terraform
//! reads a data source during plan when its configuration is known, else during apply. A missing object is an error
//! naming it and the namespace, not an empty result. While the provider's connection settings are unknown (a cluster
//! this configuration creates), a read is refused rather than sent to whatever cluster the default kubeconfig names.

use std::sync::Arc;

use super::ProviderContext;
use super::Resource as _;
use super::attributes::{NAME, NAMESPACE, TIMEOUTS, WAIT_FOR};
use super::kind::Kind;
use super::object::CustomResource;
use crate::config::DefaultNamespace;
use crate::diag::{AttrPath, Diagnostics};
use crate::schema::{Attribute, Block, Nesting, Schema};
use crate::value::{Type, Value};

/// A data source type (tfplugin5 `ValidateDataSourceConfig` and `ReadDataSource`).
#[tonic::async_trait]
pub trait DataSource: Send + Sync {
    /// Terraform type name, e.g. `modelfleet_inference` (the same name as the resource type).
    fn type_name(&self) -> &str;

    /// The schema (version 0: data sources keep no state between runs).
    fn schema(&self) -> &Schema;

    /// Static checks of a configuration (values may be unknown). No I/O.
    fn validate(&self, config: &Value) -> Diagnostics;

    /// Reads the object `config` names.
    ///
    /// # Errors
    /// Diagnostics when the object does not exist (on the `name` attribute), the provider's connection settings or
    /// (with `namespace` null) its namespace are not known yet, a value read is not known, or the API request failed.
    async fn read(&self, ctx: &ProviderContext, config: &Value) -> Result<Value, Diagnostics>;
}

/// The data source of kind `K`, reading through the resource type's own machinery ([`CustomResource::observed`]).
pub struct ExistingObject<K: Kind> {
    resource: Arc<CustomResource<K>>,
    schema: Schema,
}

impl<K: Kind> ExistingObject<K> {
    /// The data source reading the objects `resource` manages (shared with the resource type's registration).
    pub fn new(resource: Arc<CustomResource<K>>) -> Self {
        let schema = Schema {
            version: 0,
            block: read_only_block(&resource.schema().block, resource_kind::<K>()),
        };
        ExistingObject { resource, schema }
    }
}

/// The Kubernetes kind of `K`, for descriptions and messages.
fn resource_kind<K: Kind>() -> String {
    use kube::Resource as _;
    K::Object::kind(&()).into_owned()
}

/// The data source schema derived from a resource schema `resource` of Kubernetes kind `kind` (see the module docs).
/// Pure.
pub fn read_only_block(resource: &Block, kind: String) -> Block {
    let mut attributes = Vec::new();
    for attribute in &resource.attributes {
        attributes.push(match attribute.name.as_str() {
            WAIT_FOR => continue,
            NAME => Attribute::required(
                NAME,
                Type::String,
                &format!("Name of the {kind} to read (metadata.name)."),
            ),
            NAMESPACE => Attribute::optional_computed(
                NAMESPACE,
                Type::String,
                &format!("Namespace of the {kind} (default: the provider's `namespace`)."),
            ),
            _ => Attribute {
                required: false,
                optional: false,
                computed: true,
                ..attribute.clone()
            },
        });
    }
    for nested in resource.blocks.iter().filter(|b| b.type_name != TIMEOUTS) {
        let how = match nested.nesting {
            Nesting::Single => "an object, null when the spec has none",
            Nesting::List => "a list of objects",
            Nesting::Set => "a set of objects",
            Nesting::Map => "a map of objects by label",
        };
        let summary = nested.block.description.trim_end_matches('.');
        let description = format!(
            "{summary}{} The spec's `{name}` as {how}, with the fields of the resource type's `{name}` block.",
            if summary.is_empty() { "" } else { "." },
            name = nested.type_name
        );
        let mut attribute = Attribute::computed(
            &nested.type_name,
            nested.value_type(),
            description.trim_start(),
        );
        attribute.sensitive = nested.block.contains_sensitive();
        attributes.push(attribute);
    }
    Block {
        attributes,
        blocks: Vec::new(),
        description: format!(
            "Reads an existing {kind} by name: its whole spec, its status facts and the values its resource type \
             computes. Never writes; reading one that does not exist is an error."
        ),
    }
}

/// The namespace `config` names, or the provider's default.
///
/// # Errors
/// The provider's `namespace` is unknown and the configuration names none.
fn namespace_of(config: &Value, default: &DefaultNamespace) -> Result<String, Diagnostics> {
    if let Some(namespace) = config.get(NAMESPACE).and_then(Value::as_str) {
        return Ok(namespace.to_string());
    }
    match default {
        DefaultNamespace::Known(namespace) => Ok(namespace.clone()),
        DefaultNamespace::Unknown => Err(Diagnostics::error_at(
            AttrPath::attrs(&[NAMESPACE]),
            "Namespace not known yet",
            "The provider's `namespace` depends on something not applied yet; set `namespace` on the data source.",
        )),
    }
}

#[tonic::async_trait]
impl<K: Kind> DataSource for ExistingObject<K> {
    fn type_name(&self) -> &str {
        K::TYPE_NAME
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        super::validate::identity::<K>(config)
    }

    async fn read(&self, ctx: &ProviderContext, config: &Value) -> Result<Value, Diagnostics> {
        let name = config.get(NAME).and_then(Value::as_str).ok_or_else(|| {
            Diagnostics::error_at(
                AttrPath::attrs(&[NAME]),
                "Missing name",
                "Set `name` to the object to read.",
            )
        })?;
        ctx.require_known_connection(
            &format!("{} cannot be read", K::TYPE_NAME),
            "Add `depends_on` naming what the provider settings come from, so Terraform reads it during apply.",
        )?;
        let namespace = namespace_of(config, &ctx.config.namespace)?;
        let Some(state) = self.resource.observed(ctx, &namespace, name).await? else {
            let kind = resource_kind::<K>();
            return Err(Diagnostics::error_at(
                AttrPath::attrs(&[NAME]),
                format!("{kind} not found"),
                format!(
                    "No {kind} named {name:?} exists in namespace {namespace:?}. A data source reads an existing \
                     object: check `name` and `namespace`, or create it with a {} resource.",
                    K::TYPE_NAME
                ),
            ));
        };
        let value = project(&self.schema.block, &state);
        if !value.is_wholly_known() {
            // Only a plan-time value whose input cannot be converted back to JSON is unknown, which the CRD's schema
            // rules out; Terraform refuses an unknown in a data source's result.
            return Err(Diagnostics::error(
                format!("Cannot read {} {namespace}/{name}", resource_kind::<K>()),
                "A value computed from its spec is not known; check the spec with `model-fleet-operator render -f`.",
            ));
        }
        Ok(value)
    }
}

/// `state` (a resource state of the same kind) cut to the attributes of `block`, a data source schema: each value
/// as the state holds it (a nested block's value is already the object, list or set its attribute type describes),
/// null where the state has none. Pure.
pub fn project(block: &Block, state: &Value) -> Value {
    Value::Object(
        block
            .attributes
            .iter()
            .map(|a| {
                let value = state.get(&a.name).cloned().unwrap_or(Value::Null);
                (a.name.clone(), value)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests;
