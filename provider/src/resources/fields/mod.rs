//! Terraform schema derived from a custom resource's OpenAPI v3 schema (the CRD generated from the
//! shared API types), and the conversions between Terraform values and the object's `spec` JSON.
//!
//! Mapping (DESIGN.md section 6: one-to-one, snake_case, nested blocks):
//! * `string` / `integer` / `number` / `boolean` properties become attributes;
//!   `x-kubernetes-int-or-string` becomes a string attribute;
//! * arrays of scalars become `list(T)` attributes, arrays of objects become list blocks;
//! * objects with properties become single blocks (required ones with `min_items = 1`);
//! * maps (`additionalProperties`) of scalars become `map(T)` attributes, maps of objects become
//!   map blocks (`splits "train" { ... }`);
//! * anything else (free-form JSON) becomes a string attribute holding JSON text.
//!
//! Null and empty stay absent in the object (the CRDs carry no defaults, the spec stays exactly
//! as written), and reading maps only the properties the schema knows.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use crate::schema::{Attribute, Block, NestedBlock, Nesting};
use crate::value::Type;

/// One property of the custom resource, as Terraform sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Terraform (snake_case) name.
    pub tf_name: String,
    /// Kubernetes (camelCase) JSON name.
    pub json_name: String,
    /// Shape.
    pub kind: FieldKind,
    /// Whether the API requires it.
    pub required: bool,
    /// From the OpenAPI description.
    pub description: String,
}

/// The Terraform shape of a property.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldKind {
    /// A scalar attribute (`string`, `number` or `bool`).
    Scalar(Type),
    /// `int-or-string`: a string attribute that also accepts JSON numbers on read.
    IntOrString,
    /// `list(T)` attribute of scalars.
    ScalarList(Type),
    /// `map(T)` attribute of scalars.
    ScalarMap(Type),
    /// Free-form JSON, held as a JSON string attribute.
    Json,
    /// Single nested block.
    Single(Vec<Field>),
    /// List nested block.
    List(Vec<Field>),
    /// Map nested block.
    Map(Vec<Field>),
}

/// camelCase to snake_case; runs of capitals stay one word (`perGpuMemoryGiB` ->
/// `per_gpu_memory_gib`, `claimName` -> `claim_name`, `URI` -> `uri`).
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            // A capital that starts a word after an acronym (`HTTPRoute` -> `http_route`).
            let acronym_end = i > 0
                && chars[i - 1].is_ascii_uppercase()
                && chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())
                && chars.get(i + 2).is_some_and(|n| n.is_ascii_lowercase());
            if (prev_lower && !is_unit_suffix(&chars, i)) || acronym_end {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(*c);
        }
    }
    out
}

/// `GiB`/`MiB` style units stay one word with the capital before them (`memoryGiB` -> `memory_gib`:
/// the `B` after `Gi` does not start a word).
fn is_unit_suffix(chars: &[char], i: usize) -> bool {
    chars[i] == 'B' && i >= 2 && chars[i - 1] == 'i' && chars[i - 2].is_ascii_uppercase()
}

fn scalar_type(schema: &Json) -> Option<Type> {
    if schema.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) {
        return None;
    }
    match schema.get("type")?.as_str()? {
        "string" => Some(Type::String),
        "integer" | "number" => Some(Type::Number),
        "boolean" => Some(Type::Bool),
        _ => None,
    }
}

fn has_properties(schema: &Json) -> bool {
    schema
        .get("properties")
        .and_then(Json::as_object)
        .is_some_and(|p| !p.is_empty())
}

/// Derives the fields of an object schema (`properties` + `required`).
pub fn fields_from_openapi(schema: &Json) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Json::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(json_name, prop)| Field {
            tf_name: snake_case(json_name),
            json_name: json_name.clone(),
            kind: kind_of(prop),
            required: required.contains(&json_name.as_str()),
            description: describe(prop),
        })
        .collect()
}

/// A property's description, followed by its allowed values when the schema has an `enum` (`One of `a`, `b`.`), so
/// the Terraform documentation names them too.
fn describe(prop: &Json) -> String {
    let text = prop
        .get("description")
        .and_then(Json::as_str)
        .unwrap_or_default();
    let Some(values) = prop.get("enum").and_then(Json::as_array) else {
        return text.to_string();
    };
    let values: Vec<String> = values
        .iter()
        .filter_map(Json::as_str)
        .map(|v| format!("`{v}`"))
        .collect();
    let list = format!("One of {}.", values.join(", "));
    if text.is_empty() {
        list
    } else {
        format!("{} {list}", text.trim_end())
    }
}

/// `fields` with their descriptions in Terraform's vocabulary: a property path of this schema inside a code span
/// (`kvCache.fromShape`, `runtimeGiB: 0`) is written with the Terraform names (`kv_cache.from_shape`,
/// `runtime_gib: 0`), since the descriptions come from the CRD, which speaks the custom resource's camelCase. A path
/// with any segment the schema does not name (`metadata.generation`, `status.lastActiveTime`, a Kubernetes field) is
/// left as written.
pub fn with_terraform_names(mut fields: Vec<Field>) -> Vec<Field> {
    let mut names = BTreeSet::new();
    collect_names(&fields, &mut names);
    rename_in(&mut fields, &names);
    fields
}

fn collect_names(fields: &[Field], names: &mut BTreeSet<String>) {
    for field in fields {
        names.insert(field.json_name.clone());
        if let FieldKind::Single(c) | FieldKind::List(c) | FieldKind::Map(c) = &field.kind {
            collect_names(c, names);
        }
    }
}

fn rename_in(fields: &mut [Field], names: &BTreeSet<String>) {
    for field in fields {
        field.description = terraform_spans(&field.description, names);
        if let FieldKind::Single(c) | FieldKind::List(c) | FieldKind::Map(c) = &mut field.kind {
            rename_in(c, names);
        }
    }
}

/// `text` with every property path inside its code spans rewritten in snake_case ([`terraform_path`]).
fn terraform_spans(text: &str, names: &BTreeSet<String>) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        // Odd parts are inside a code span (an unmatched trailing backtick leaves the text as it was).
        if i % 2 == 1 {
            out.push_str(&terraform_paths(part, names));
        } else {
            out.push_str(part);
        }
    }
    out
}

/// Every path in `span` (a run of letters, digits, `.`, `[` and `]`) renamed by [`terraform_path`]; the characters
/// between them kept.
fn terraform_paths(span: &str, names: &BTreeSet<String>) -> String {
    let is_path = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '[' | ']');
    let mut out = String::with_capacity(span.len());
    let mut rest = span;
    while let Some(first) = rest.chars().next() {
        let in_path = is_path(first);
        let end = rest
            .find(|c: char| is_path(c) != in_path)
            .unwrap_or(rest.len());
        let (run, tail) = rest.split_at(end);
        if in_path {
            out.push_str(&terraform_path(run, names));
        } else {
            out.push_str(run);
        }
        rest = tail;
    }
    out
}

/// `path` (`a.b[0].c`) in snake_case when every segment is a property name, else as written.
fn terraform_path(path: &str, names: &BTreeSet<String>) -> String {
    let segments: Vec<&str> = path.split('.').collect();
    let known = segments
        .iter()
        .all(|segment| names.contains(segment.split('[').next().unwrap_or_default()));
    if !known {
        return path.to_string();
    }
    let renamed: Vec<String> = segments
        .iter()
        .map(|segment| match segment.split_once('[') {
            Some((name, index)) => format!("{}[{index}", snake_case(name)),
            None => snake_case(segment),
        })
        .collect();
    renamed.join(".")
}

fn kind_of(prop: &Json) -> FieldKind {
    if prop.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) {
        return FieldKind::IntOrString;
    }
    if let Some(t) = scalar_type(prop) {
        return FieldKind::Scalar(t);
    }
    match prop.get("type").and_then(Json::as_str) {
        Some("array") => {
            let items = prop.get("items").unwrap_or(&Json::Null);
            if let Some(t) = scalar_type(items) {
                FieldKind::ScalarList(t)
            } else if items.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) {
                FieldKind::ScalarList(Type::String)
            } else if has_properties(items) {
                FieldKind::List(fields_from_openapi(items))
            } else {
                FieldKind::Json
            }
        }
        Some("object") if has_properties(prop) => FieldKind::Single(fields_from_openapi(prop)),
        Some("object") => match prop.get("additionalProperties") {
            // Maps of `int-or-string` (resource quantities): `map(string)`.
            Some(values) if values.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) => {
                FieldKind::ScalarMap(Type::String)
            }
            Some(values) if scalar_type(values).is_some() => {
                FieldKind::ScalarMap(scalar_type(values).unwrap_or(Type::String))
            }
            Some(values) if has_properties(values) => FieldKind::Map(fields_from_openapi(values)),
            _ => FieldKind::Json,
        },
        _ => FieldKind::Json,
    }
}

/// The Terraform schema of `fields`: attributes and nested blocks, appended to `block`.
pub fn add_to_block(block: &mut Block, fields: &[Field]) {
    for field in fields {
        let attr = |ty: Type| {
            if field.required {
                Attribute::required(&field.tf_name, ty, &field.description)
            } else {
                Attribute::optional(&field.tf_name, ty, &field.description)
            }
        };
        let nested = |nesting: Nesting, children: &[Field]| {
            // Terraform cannot require a list or map block (`min_items` below), so the documentation marks it
            // Optional: its description says it is not (`validate::config` checks it).
            let description = if field.required && nesting != Nesting::Single {
                format!(
                    "{} At least one `{}` block is required.",
                    field.description.trim_end(),
                    field.tf_name
                )
            } else {
                field.description.clone()
            };
            let mut body = Block {
                description: description.trim_start().to_string(),
                ..Block::default()
            };
            add_to_block(&mut body, children);
            NestedBlock {
                type_name: field.tf_name.clone(),
                block: body,
                nesting,
                // Terraform requires min == max (0 or 1) for single blocks, and 0/0 for maps.
                min_items: i64::from(field.required && nesting == Nesting::Single),
                max_items: i64::from(field.required && nesting == Nesting::Single),
            }
        };
        match &field.kind {
            FieldKind::Scalar(t) => block.attributes.push(attr(t.clone())),
            FieldKind::IntOrString | FieldKind::Json => block.attributes.push(attr(Type::String)),
            FieldKind::ScalarList(t) => block.attributes.push(attr(Type::list(t.clone()))),
            FieldKind::ScalarMap(t) => block.attributes.push(attr(Type::map(t.clone()))),
            FieldKind::Single(children) => block.blocks.push(nested(Nesting::Single, children)),
            FieldKind::List(children) => block.blocks.push(nested(Nesting::List, children)),
            FieldKind::Map(children) => block.blocks.push(nested(Nesting::Map, children)),
        }
    }
}

mod convert;
mod path;

pub use convert::{from_json, to_json, to_known_json};
pub use path::attr_path_for;

#[cfg(test)]
mod tests;
