//! Static checks of a resource configuration (tfplugin5 `ValidateResourceTypeConfig`): values may be unknown, and
//! unknown values are not judged. No I/O. Each diagnostic carries the attribute path and says what to write instead.

use kube::Resource as _;
use model_fleet_api::names;
use serde_json::Value as Json;

use super::attributes::{NAME, NAMESPACE, WAIT_FOR};
use super::fields::{self, Field, FieldKind};
use super::kind::Kind;
use super::timeouts;
use crate::diag::{AttrPath, Diagnostics};
use crate::value::Value;

/// Validates the configuration of a kind-`K` resource whose spec has `fields`.
pub fn config<K: Kind>(fields: &[Field], spec_schema: &Json, config: &Value) -> Diagnostics {
    let mut diags = identity::<K>(config);
    let kind = K::Object::kind(&());
    diags.extend(timeouts::validate(config));
    diags.extend(against_schema(&kind, fields, spec_schema, config));
    required_blocks(fields, config, (&AttrPath::root(), None), &mut diags);
    if let Some(Value::String(wait_for)) = config.get(WAIT_FOR)
        && !K::WAIT_VALUES.contains(&wait_for.as_str())
    {
        diags.push_error(
            Some(AttrPath::attrs(&[WAIT_FOR])),
            "Invalid wait_for",
            format!("{wait_for:?} is not one of {}.", K::WAIT_VALUES.join(", ")),
        );
    }
    diags
}

/// Checks the known `name` (a DNS subdomain, as metadata.name) and `namespace` (a DNS label) of a kind-`K`
/// resource or data source configuration.
pub fn identity<K: Kind>(config: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let kind = K::Object::kind(&());
    if let Some(Value::String(name)) = config.get(NAME)
        && !names::is_dns_subdomain(name)
    {
        diags.push_error(
            Some(AttrPath::attrs(&[NAME])),
            "Invalid name",
            format!(
                "{name:?} is not a valid {kind} name: lowercase letters, digits, '-' and '.', up to 253 \
                 characters, starting and ending with a letter or digit."
            ),
        );
    }
    if let Some(Value::String(ns)) = config.get(NAMESPACE)
        && !names::is_dns_label(ns)
    {
        diags.push_error(
            Some(AttrPath::attrs(&[NAMESPACE])),
            "Invalid namespace",
            format!("{ns:?} is not a valid namespace name (RFC 1123 label)."),
        );
    }
    diags
}

/// The CRD's own checks on the known part of the configuration, so a value the API server would refuse fails
/// `terraform validate` and `plan`, on its attribute, not the apply: the structural schema (types, ranges, enums,
/// lengths, patterns, quantities: DESIGN.md section 3), then, when that passes and every value is known, the CEL rules
/// (`x-kubernetes-validations`: cross-field rules such as `replicas.min <= replicas.max`), evaluated as the API server
/// would ([`model_fleet_api::validate::cel`]). Unknown values are not judged, nor required attributes (Terraform's
/// schema enforces those, and one may be unknown here); a CEL rule may read any field, so none runs while a value is
/// unknown.
pub fn against_schema(
    kind: &str,
    fields: &[Field],
    spec_schema: &Json,
    config: &Value,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    // What does not convert (a JSON attribute's invalid text, a number beyond float64) is the error, on its path;
    // the rest is judged once it converts (a new user's trial: one such number silenced every other check).
    let (spec, unknown) = match fields::to_known_json(fields, config) {
        Ok(converted) => converted,
        Err(conversion) => return conversion,
    };
    let related = |path: &AttrPath| {
        unknown
            .iter()
            .any(|u| u.0.starts_with(&path.0) || path.0.starts_with(&u.0))
    };
    let spec = Json::Object(spec);
    let mut errors: Vec<_> = model_fleet_api::validate::validate_value(spec_schema, &spec, "spec")
        .into_iter()
        .filter(|e| !e.message.starts_with("Required value"))
        .collect();
    if errors.is_empty() && unknown.is_empty() {
        let manifest = serde_json::json!({"kind": kind, "spec": spec});
        errors = model_fleet_api::validate::cel::validate_cel(&manifest, None);
    }
    for error in &errors {
        let path = fields::attr_path_for(fields, &error.path);
        if path.as_ref().is_some_and(related) {
            continue;
        }
        let attribute = path
            .as_ref()
            .map_or_else(|| error.path.clone(), ToString::to_string);
        diags.push_error(
            path,
            format!("Invalid {attribute}"),
            format!("{error} (the API server would refuse it: fix the value in the configuration)"),
        );
    }
    diags
}

/// The required list and map blocks of the known part of `config` (at `path`, inside the block `parent`) that are
/// absent or empty, such as `gpu.fit.modules` in a `fit {}`: Terraform's schema cannot require them (only a single block
/// takes `min_items`, see [`fields::add_to_block`]) and [`against_schema`] leaves required values to Terraform, so
/// without this the plan or the API server would refuse them, with a decoder's message. Unknown values are not judged.
fn required_blocks(
    fields: &[Field],
    config: &Value,
    (path, parent): (&AttrPath, Option<&str>),
    diags: &mut Diagnostics,
) {
    for field in fields {
        let value = config.get(&field.tf_name).unwrap_or(&Value::Null);
        let here = path.attr(&field.tf_name);
        let inside = (&here, Some(field.tf_name.as_str()));
        match (&field.kind, value) {
            (_, Value::Unknown) => {}
            (FieldKind::Single(children), Value::Object(_)) => {
                required_blocks(children, value, inside, diags);
            }
            (FieldKind::List(children), Value::List(items)) if !items.is_empty() => {
                for (i, item) in items.iter().enumerate() {
                    required_blocks(children, item, (&here.index(i), inside.1), diags);
                }
            }
            (FieldKind::Map(children), Value::Map(items)) if !items.is_empty() => {
                for (key, item) in items {
                    required_blocks(children, item, (&here.key(key), inside.1), diags);
                }
            }
            (FieldKind::List(children) | FieldKind::Map(children), _) if field.required => {
                diags.push_error(
                    Some(here),
                    format!("Missing {} block", field.tf_name),
                    missing_block(field, children, parent),
                );
            }
            _ => {}
        }
    }
}

/// What to write for the required block `field` (with its `children`) missing inside the block `parent`.
fn missing_block(field: &Field, children: &[Field], parent: Option<&str>) -> String {
    let name = &field.tf_name;
    let required: Vec<&str> = children
        .iter()
        .filter(|c| c.required)
        .map(|c| c.tf_name.as_str())
        .collect();
    let setting = match required.as_slice() {
        [] => String::new(),
        [only] => format!(", setting {only}"),
        [first @ .., last] => format!(", setting {} and {last}", first.join(", ")),
    };
    let (holder, or_remove) = parent.map_or_else(
        || ("The resource".to_string(), String::new()),
        |p| {
            (
                format!("A `{p}` block"),
                format!(", or remove the `{p}` block"),
            )
        },
    );
    let what = field.description.trim().trim_end_matches('.');
    let what = if what.is_empty() {
        String::new()
    } else {
        format!(" ({what})")
    };
    format!(
        "{holder} needs at least one `{name}` block{what}: add one{setting}{or_remove}. The API server refuses it \
         without."
    )
}
