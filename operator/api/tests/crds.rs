//! The generated CRDs: the chart's checked-in copy matches the Rust types, no `default:` anywhere,
//! every string/list/map is bounded (CEL cost), and the immutability rules cover every field
//! (cases O-05(a), O-09).

use std::path::PathBuf;

use model_fleet_api::{
    self as api, DATASET_IMMUTABLE_FIELDS, DATASET_MUTABLE_FIELDS, TRAINING_IMMUTABLE_FIELDS,
    TRAINING_MUTABLE_FIELDS,
};
use serde_json::Value;

fn chart_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../charts/model-fleet-operator/crds")
}

#[test]
fn checked_in_crds_match_the_rust_types() {
    for crd in api::crds() {
        let path = chart_dir().join(api::crd_file_name(&crd));
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == api::crd_yaml(&crd),
            "{} is out of date with the Rust types; regenerate with:\n  cargo run -p model-fleet-operator -- crd --out-dir charts/model-fleet-operator/crds",
            path.display()
        );
    }
}

/// `validate::schema_of` reads the schemas embedded from the checked-in CRDs at build time: they must be the ones the
/// types generate.
#[test]
fn embedded_schemas_are_the_types_own() {
    for crd in api::crds() {
        let generated = serde_json::to_value(
            crd.spec.versions[0]
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref()),
        )
        .unwrap();
        assert_eq!(
            api::validate::schema_of(&crd.spec.names.kind),
            Some(&generated),
            "the embedded schema of {} differs from the types': regenerate the chart's CRDs (see above)",
            crd.spec.names.kind
        );
    }
}

fn walk(v: &Value, path: &str, f: &mut dyn FnMut(&str, &serde_json::Map<String, Value>)) {
    if let Some(o) = v.as_object() {
        f(path, o);
        for (k, child) in o {
            let p = match k.as_str() {
                "properties" | "additionalProperties" | "items" => path.to_string(),
                _ => format!("{path}/{k}"),
            };
            walk(child, &p, f);
        }
    } else if let Some(a) = v.as_array() {
        for child in a {
            walk(child, path, f);
        }
    }
}

fn spec_schema(kind: &str) -> Value {
    api::validate::schema_of(kind)
        .unwrap()
        .pointer("/properties/spec")
        .unwrap()
        .clone()
}

#[test]
fn no_defaults_anywhere() {
    for crd in api::crds() {
        let v = serde_json::to_value(&crd).unwrap();
        walk(&v, "", &mut |p, o| {
            assert!(
                !o.contains_key("default"),
                "{} has a default at {p}",
                crd.spec.names.kind
            )
        });
    }
}

#[test]
fn every_string_list_and_map_in_specs_is_bounded() {
    for kind in ["InferenceService", "TrainingRun", "Dataset"] {
        walk(&spec_schema(kind), "spec", &mut |p, o| {
            let t = o.get("type").and_then(Value::as_str);
            let has = |k: &str| o.contains_key(k);
            match t {
                Some("string") if !has("enum") => {
                    assert!(has("maxLength"), "{kind} {p}: string without maxLength")
                }
                Some("array") => assert!(has("maxItems"), "{kind} {p}: array without maxItems"),
                Some("object") if has("additionalProperties") => {
                    assert!(
                        has("maxProperties"),
                        "{kind} {p}: map without maxProperties"
                    )
                }
                _ => {}
            }
        });
    }
}

fn property_names(kind: &str) -> Vec<String> {
    spec_schema(kind)["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

fn rules(kind: &str) -> Vec<String> {
    spec_schema(kind)["x-kubernetes-validations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap().to_string())
        .collect()
}

// Case O-09 / O-05(a): adding a spec field without an immutability rule fails this test.
#[test]
fn immutability_rules_cover_every_spec_field() {
    for (kind, immutable, mutable) in [
        (
            "TrainingRun",
            TRAINING_IMMUTABLE_FIELDS,
            TRAINING_MUTABLE_FIELDS,
        ),
        ("Dataset", DATASET_IMMUTABLE_FIELDS, DATASET_MUTABLE_FIELDS),
    ] {
        let mut expected: Vec<String> = property_names(kind)
            .into_iter()
            .filter(|p| !mutable.contains(&p.as_str()))
            .collect();
        expected.sort();
        let mut listed: Vec<String> = immutable.iter().map(|s| s.to_string()).collect();
        listed.sort();
        assert_eq!(
            expected, listed,
            "{kind}: immutable field list differs from the spec's properties"
        );
        let rules = rules(kind);
        for f in immutable {
            let needle = format!("has(self.{f}) == has(oldSelf.{f})");
            assert!(
                rules.iter().any(|r| r.starts_with(&needle)),
                "{kind}: no immutability rule for spec.{f}"
            );
        }
    }
}

#[test]
fn kinds_have_short_names_status_and_columns() {
    for (crd, short) in api::crds().iter().zip(["isvc", "trun", "mfds"]) {
        assert_eq!(
            crd.spec.names.short_names.as_deref(),
            Some(&[short.to_string()][..])
        );
        assert_eq!(crd.spec.scope, "Namespaced");
        let v = &crd.spec.versions[0];
        assert!(
            v.subresources
                .as_ref()
                .and_then(|s| s.status.as_ref())
                .is_some()
        );
        assert!(
            v.additional_printer_columns
                .as_ref()
                .is_some_and(|c| c.len() >= 3)
        );
    }
}

/// Descriptions reach users (`kubectl explain`, the provider's schema, the generated reference pages): they cite no
/// design file outside the repository and carry no unresolved rustdoc link such as ``[`SOME_CONSTANT`]``.
#[test]
fn descriptions_cite_no_design_file_and_no_rustdoc_link() {
    fn walk(v: &Value, path: &str, bad: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    if let (true, Value::String(text)) = (k == "description", child) {
                        let rustdoc_link = text.match_indices("[`").any(|(i, _)| {
                            let rest = &text[i..];
                            rest.find("`]")
                                .is_some_and(|end| !rest[end + 2..].starts_with('('))
                        });
                        if text.contains("DESIGN.md") || rustdoc_link {
                            bad.push(format!("{path}: {text}"));
                        }
                    }
                    walk(child, &format!("{path}.{k}"), bad);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| walk(item, path, bad)),
            _ => {}
        }
    }
    let mut bad = Vec::new();
    for crd in api::crds() {
        walk(
            &serde_json::to_value(&crd).unwrap(),
            &crd.spec.names.kind,
            &mut bad,
        );
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
