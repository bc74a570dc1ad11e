//! Planning (tfplugin5 `PlanResourceChange`) of every `modelfleet_*` resource: the plan modifiers in one place, in
//! the order they run, each a small function. No I/O: plans work without a cluster and before the CRDs exist.
//!
//! 1. [`id_and_namespace`]: `id` unknown on create, and `namespace` the provider's default whenever the
//!    configuration leaves it null (an Optional+Computed attribute may be filled only when its config is null), so a
//!    change of the provider's `namespace` replaces the object as a change of `namespace` does;
//! 2. [`with_plan_time_values`]: the kind's plan-time attributes (`capacity_class`, `url`, `job_name`), unknown while
//!    an input is unknown; a fit no class can hold fails the plan on its attribute path;
//! 3. [`use_state_for_unknown`]: the kind's run-time facts keep their prior value while the spec is unchanged
//!    (quantities compared by amount), and are unknown otherwise: refreshes never cause a perpetual diff;
//! 4. [`requires_replace`]: `name`, `namespace` and immutable spec fields that changed, where a quantity rewritten
//!    with the same amount (`0.5` -> `500m`) is not a change;
//! 5. [`transition_rules`]: an in-place update the CRD's transition rules (CEL with `oldSelf`, e.g. "`cancel` cannot
//!    be undone") would refuse fails the plan on its attribute, not the apply.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use super::attributes::{ID, NAME, NAMESPACE};
use super::fields::{self, Field};
use super::kind::{Kind, PlanInputs, Source};
use super::{Planned, quantity};
use crate::config::DefaultNamespace;
use crate::diag::{AttrPath, Diagnostics};
use crate::value::Value;

/// What the modifiers need to know about the resource type.
#[derive(Clone, Copy, Debug)]
pub struct Definition<'a> {
    /// The spec fields.
    pub fields: &'a [Field],
    /// The spec's OpenAPI schema (to compare quantities by amount).
    pub spec_schema: &'a Json,
    /// Terraform names of the attributes whose change requires replacement.
    pub replacing: &'a [String],
}

/// Plans a change of kind `K`: `prior` null = create, `proposed` null = destroy.
///
/// # Errors
/// The plan-time diagnostics of [`with_plan_time_values`].
pub fn plan<K: Kind>(
    definition: &Definition<'_>,
    default_namespace: &DefaultNamespace,
    prior: &Value,
    proposed: &Value,
    config: &Value,
) -> Result<Planned, Diagnostics> {
    if proposed.is_null() {
        return Ok(Planned {
            state: Value::Null,
            requires_replace: vec![],
            warnings: Diagnostics::new(),
        });
    }
    let Value::Object(planned) = proposed.clone() else {
        return Err(Diagnostics::error(
            "Invalid proposed state",
            "expected an object",
        ));
    };
    let planned = id_and_namespace(planned, prior, config, default_namespace);
    let planned = plan_time_values::<K>(definition.fields, planned)?;
    let planned = use_state_for_unknown::<K>(definition.spec_schema, prior, planned);
    let state = Value::Object(planned);
    let requires_replace = requires_replace(definition, prior, &state);
    if requires_replace.is_empty() && !spec_unchanged(definition.spec_schema, prior, &state) {
        let refused = transition_rules::<K>(definition.fields, prior, &state);
        if refused.has_errors() {
            return Err(refused);
        }
    }
    Ok(Planned {
        state,
        requires_replace,
        warnings: K::warnings(&known_attributes(definition.fields, config)),
    })
}

/// Step 5: the CRD's CEL rules evaluated on the update from `prior` to `planned` as the API server would
/// ([`model_fleet_api::validate::cel::validate_cel`] with `oldSelf`), for an in-place update whose old and new specs
/// are wholly known and differ (a replacement is a create, where transition rules do not apply; a quantity written
/// anew with the same amount is never sent; unknown values are not judged).
/// Each refusal is an error on its attribute that says how to get the change.
fn transition_rules<K: Kind>(fields: &[Field], prior: &Value, planned: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if prior.is_null() {
        return diags;
    }
    let (Ok((old, old_unknown)), Ok((new, new_unknown))) = (
        fields::to_known_json(fields, prior),
        fields::to_known_json(fields, planned),
    ) else {
        return diags;
    };
    if !old_unknown.is_empty() || !new_unknown.is_empty() {
        return diags;
    }
    let kind = <K::Object as kube::Resource>::kind(&());
    let manifest = |spec| serde_json::json!({"kind": kind, "spec": Json::Object(spec)});
    let errors = model_fleet_api::validate::cel::validate_cel(&manifest(new), Some(&manifest(old)));
    for error in errors {
        let path = fields::attr_path_for(fields, &error.path);
        let attribute = path
            .as_ref()
            .map_or_else(|| error.path.clone(), ToString::to_string);
        diags.push_error(
            path,
            format!("Update of {attribute} refused"),
            format!(
                "{error} (the API server would refuse this update of the {kind}: keep the value, or replace the \
                 resource with `terraform apply -replace=...`)"
            ),
        );
    }
    diags
}

/// The spec attributes of `config` whose values are wholly known, as JSON (JSON names): each top-level attribute
/// through [`known_json`], so one holding an unknown value anywhere is left out and warnings never judge what they
/// cannot see.
fn known_attributes(fields: &[Field], config: &Value) -> Map<String, Json> {
    let mut spec = Map::new();
    for field in fields {
        if let Some(Json::Object(one)) = known_json(fields, config, &[field.tf_name.as_str()]) {
            spec.extend(one);
        }
    }
    spec
}

/// Modifier 1: on create, `id` is unknown; a null `namespace` becomes the provider's default, on create (unknown
/// while the provider's own namespace is) and on update when it is known (an unknown one keeps the prior namespace
/// rather than plan a replacement that may be none). A new user's trial: a changed provider `namespace` planned no
/// change, and an import of `ns/name` into a configuration of another default namespace adopted the object there.
fn id_and_namespace(
    mut planned: BTreeMap<String, Value>,
    prior: &Value,
    config: &Value,
    default_namespace: &DefaultNamespace,
) -> BTreeMap<String, Value> {
    let create = prior.is_null();
    if create {
        planned.insert(ID.into(), Value::Unknown);
    }
    if matches!(config.get(NAMESPACE), None | Some(Value::Null)) {
        match default_namespace {
            DefaultNamespace::Known(ns) => {
                planned.insert(NAMESPACE.into(), Value::string(ns));
            }
            DefaultNamespace::Unknown if create => {
                planned.insert(NAMESPACE.into(), Value::Unknown);
            }
            DefaultNamespace::Unknown => {}
        }
    }
    planned
}

/// Modifier 2 as a step of [`plan`].
fn plan_time_values<K: Kind>(
    fields: &[Field],
    mut planned: BTreeMap<String, Value>,
) -> Result<BTreeMap<String, Value>, Diagnostics> {
    let resource = Value::Object(planned.clone());
    planned.extend(plan_time::<K>(fields, &resource)?);
    Ok(planned)
}

/// The kind's plan-time values for `resource` (a planned value or a state): each unknown while any input is unknown.
///
/// # Errors
/// The diagnostic of a value that cannot be planned (e.g. a fit no class holds, on `gpu.fit`).
pub fn plan_time<K: Kind>(
    fields: &[Field],
    resource: &Value,
) -> Result<BTreeMap<String, Value>, Diagnostics> {
    let mut out = BTreeMap::new();
    for computed in K::COMPUTED {
        let Source::Plan { inputs, value } = computed.source else {
            continue;
        };
        let name = resource.get(NAME);
        let spec = known_json(fields, resource, inputs);
        let planned = match (name, spec) {
            (Some(Value::String(name)), Some(spec)) => value(&PlanInputs { name, spec: &spec })?,
            _ => Value::Unknown,
        };
        out.insert(computed.name.to_string(), planned);
    }
    Ok(out)
}

/// `resource` with the kind's plan-time values recomputed, for refreshed and imported states (null on a value that
/// cannot be planned, which only a spec edited outside Terraform can cause on read; the next plan reports it).
pub fn with_plan_time_values<K: Kind>(fields: &[Field], resource: Value) -> Value {
    let values = plan_time::<K>(fields, &resource).unwrap_or_else(|_| {
        K::COMPUTED
            .iter()
            .filter(|c| c.is_plan_time())
            .map(|c| (c.name.to_string(), Value::Null))
            .collect()
    });
    super::object::merge(resource, values)
}

/// The JSON of the top-level attributes `names` of `resource` (spec layout, camelCase), or `None` when any of them
/// holds an unknown value.
fn known_json(fields: &[Field], resource: &Value, names: &[&str]) -> Option<Json> {
    let mut subset = BTreeMap::new();
    for name in names {
        let value = resource.get(name).cloned().unwrap_or(Value::Null);
        if !value.is_wholly_known() {
            return None;
        }
        subset.insert((*name).to_string(), value);
    }
    let relevant: Vec<Field> = fields
        .iter()
        .filter(|f| names.contains(&f.tf_name.as_str()))
        .cloned()
        .collect();
    fields::to_json(&relevant, &Value::Object(subset), &AttrPath::root())
        .ok()
        .map(|m: Map<String, Json>| Json::Object(m))
}

/// Modifier 3: the run-time facts keep their prior value while the spec is unchanged, else unknown.
fn use_state_for_unknown<K: Kind>(
    spec_schema: &Json,
    prior: &Value,
    mut planned: BTreeMap<String, Value>,
) -> BTreeMap<String, Value> {
    let unchanged = spec_unchanged(spec_schema, prior, &Value::Object(planned.clone()));
    for computed in K::COMPUTED {
        if let Source::Live(_) = computed.source {
            let value = match prior.get(computed.name) {
                Some(v) if unchanged => v.clone(),
                _ => Value::Unknown,
            };
            planned.insert(computed.name.to_string(), value);
        }
    }
    planned
}

/// Whether `planned` is the same object with the same spec as `prior` (quantities by amount): nothing to send to the
/// cluster, and the facts still describe it. False on create.
pub fn spec_unchanged(spec_schema: &Json, prior: &Value, planned: &Value) -> bool {
    !prior.is_null()
        && prior.get(NAME) == planned.get(NAME)
        && prior.get(NAMESPACE) == planned.get(NAMESPACE)
        && quantity::spec_equal(spec_schema, prior, planned)
}

/// Modifier 4: the replacing attributes that changed, a quantity rewritten with the same amount excepted.
fn requires_replace(definition: &Definition<'_>, prior: &Value, planned: &Value) -> Vec<AttrPath> {
    if prior.is_null() {
        return vec![];
    }
    definition
        .replacing
        .iter()
        .filter(|attr| {
            let (before, after) = (prior.get(attr), planned.get(attr));
            let is_spec = definition.fields.iter().any(|f| &f.tf_name == *attr);
            match (before, after) {
                (Some(b), Some(a)) if is_spec => {
                    let only =
                        |v: &Value| Value::Object(BTreeMap::from([((*attr).clone(), v.clone())]));
                    !quantity::spec_equal(definition.spec_schema, &only(b), &only(a))
                }
                _ => before != after,
            }
        })
        .map(|attr| AttrPath::attrs(&[attr]))
        .collect()
}
