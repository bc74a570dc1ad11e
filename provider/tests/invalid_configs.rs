//! Issue 18, bad input through the real CLI: invalid Terraform configurations fail `terraform validate` (Terraform or
//! OpenTofu, as `MODEL_FLEET_TF_CLI` says) on the resource at fault, with the message a user needs, and without a
//! cluster. The configurations are
//! - every single-object case of the invalid-manifest corpus (`operator/tests/invalid/`), written as the HCL a user
//!   would write for that manifest (one `resource` block each, all in one configuration, so one run of the CLI judges
//!   them all and each diagnostic must point into its own block);
//! - the mistakes only a Terraform configuration can make (names, timeouts, `wait_for`, JSON attributes, the
//!   schema's types, required attributes and block counts).

mod common;

use std::collections::BTreeMap;

use common::corpus::{configuration, corpus, type_name};
use common::{PROVIDER_NO_CLUSTER, Workspace, text};
use terraform_provider_modelfleet::resources::Registry;
use terraform_provider_modelfleet::schema::{Block, Nesting};
use terraform_provider_modelfleet::value::Value;

/// An HCL expression for `value`.
fn expression(value: &Value) -> String {
    match value {
        Value::String(s) => serde_json::to_string(s).unwrap().replace("${", "$${"),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::List(items) | Value::Set(items) | Value::Tuple(items) => {
            let items: Vec<String> = items.iter().map(expression).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Map(entries) | Value::Object(entries) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{} = {}", serde_json::to_string(k).unwrap(), expression(v)))
                .collect();
            format!("{{ {} }}", entries.join(", "))
        }
        Value::Null | Value::Unknown => "null".into(),
    }
}

/// Whether an attribute value is worth writing (absent attributes read as null or an empty collection).
fn written(value: &Value) -> bool {
    match value {
        Value::Null | Value::Unknown => false,
        Value::List(items) | Value::Set(items) => !items.is_empty(),
        Value::Map(entries) => !entries.is_empty(),
        _ => true,
    }
}

/// The body of a block with `attributes`, as HCL lines indented by `indent`.
fn body(attributes: &BTreeMap<String, Value>, block: &Block, indent: &str, out: &mut String) {
    for attribute in &block.attributes {
        if let Some(value) = attributes.get(&attribute.name).filter(|v| written(v)) {
            out.push_str(&format!(
                "{indent}{} = {}\n",
                attribute.name,
                expression(value)
            ));
        }
    }
    for nested in &block.blocks {
        let items: Vec<(Option<&String>, &Value)> =
            match (nested.nesting, attributes.get(&nested.type_name)) {
                (Nesting::Single, Some(v @ Value::Object(_))) => vec![(None, v)],
                (Nesting::List | Nesting::Set, Some(Value::List(items) | Value::Set(items))) => {
                    items.iter().map(|v| (None, v)).collect()
                }
                (Nesting::Map, Some(Value::Map(entries))) => {
                    entries.iter().map(|(k, v)| (Some(k), v)).collect()
                }
                _ => vec![],
            };
        for (label, item) in items {
            let Value::Object(inner) = item else { continue };
            let label = label
                .map(|l| format!(" {}", serde_json::to_string(l).unwrap()))
                .unwrap_or_default();
            out.push_str(&format!("{indent}{}{label} {{\n", nested.type_name));
            body(inner, &nested.block, &format!("{indent}  "), out);
            out.push_str(&format!("{indent}}}\n"));
        }
    }
}

/// One configuration case: the resource block, and a fragment the diagnostic on it must contain.
struct Case {
    label: String,
    resource: String,
    expect: String,
}

/// The corpus's single-object cases as resource blocks.
fn corpus_cases(registry: &Registry) -> Vec<Case> {
    corpus()
        .into_iter()
        .filter(|(_, headers, _)| !headers.get("update").is_some_and(|u| u.starts_with("true")))
        .map(|(file, headers, docs)| {
            let type_name = type_name(docs[0]["kind"].as_str().unwrap());
            let resource = registry.get(type_name).unwrap().as_ref();
            let Value::Object(attributes) = configuration(resource, &docs[0]) else {
                panic!("a configuration is an object")
            };
            let label = file.trim_end_matches(".yaml").replace('-', "_");
            let mut block = format!("resource \"{type_name}\" \"{label}\" {{\n");
            body(&attributes, &resource.schema().block, "  ", &mut block);
            block.push_str("}\n");
            Case {
                label,
                resource: block,
                expect: headers["expect-message"].clone(),
            }
        })
        .collect()
}

/// An InferenceService resource block: `name`, a model, a container with `container` lines added, then `inner`.
fn inference(label: &str, name: &str, container: &str, inner: &str, expect: &str) -> Case {
    Case {
        label: label.into(),
        resource: format!(
            "resource \"modelfleet_inference\" \"{label}\" {{\n  name = \"{name}\"\n  model {{\n    name = \"m\"\n  }}\n  \
             container {{\n    image = \"i\"\n{container}  }}\n{inner}}}\n"
        ),
        expect: expect.into(),
    }
}

/// A Dataset resource block: `name`, version 1, a source, then `inner`.
fn dataset(label: &str, name: &str, inner: &str, expect: &str) -> Case {
    Case {
        label: label.into(),
        resource: format!(
            "resource \"modelfleet_dataset\" \"{label}\" {{\n  name = \"{name}\"\n  version = \"1\"\n  source {{\n    \
             uri = \"s3://b/d\"\n  }}\n{inner}}}\n"
        ),
        expect: expect.into(),
    }
}

/// Mistakes only a Terraform configuration can make, each with the fragment its diagnostic must contain.
fn terraform_cases() -> Vec<Case> {
    vec![
        inference("tf_name_uppercase", "Not_A_Name", "", "", "is not a valid InferenceService name"),
        inference("tf_namespace_invalid", "m", "", "  namespace = \"-ml\"\n", "is not a valid namespace name"),
        inference("tf_wait_for_unknown_value", "m", "", "  wait_for = \"soon\"\n", "is not one of"),
        inference(
            "tf_timeouts_not_a_duration",
            "m",
            "",
            "  timeouts {\n    create = \"ten minutes\"\n  }\n",
            "Invalid duration",
        ),
        inference(
            "tf_unknown_attribute",
            "m",
            "",
            "  replica_count = 3\n",
            "An argument named \"replica_count\" is not expected here",
        ),
        inference("tf_wrong_type", "m", "", "  gpu {\n    count = \"two\"\n  }\n", "a number is required"),
        inference(
            "tf_two_model_blocks",
            "m",
            "",
            "  model {\n    name = \"n\"\n  }\n",
            "Duplicate model block",
        ),
        inference(
            "tf_quantity_not_a_quantity",
            "m",
            "    resources {\n      requests = { cpu = \"lots\" }\n    }\n",
            "",
            "must be a Kubernetes quantity",
        ),
        Case {
            label: "tf_model_missing".into(),
            resource: "resource \"modelfleet_inference\" \"tf_model_missing\" {\n  name = \"m\"\n  container {\n    \
                       image = \"i\"\n  }\n}\n"
                .into(),
            expect: "Missing model block".into(),
        },
        dataset("tf_dataset_name_too_long", &"d".repeat(254), "", "is not a valid Dataset name"),
        dataset(
            "tf_dataset_delete_timeout",
            "d",
            "  timeouts {\n    delete = \"soon\"\n  }\n",
            "Invalid duration",
        ),
    ]
}

#[test]
fn every_invalid_configuration_fails_validate_on_its_own_block() {
    let registry = Registry::builtin();
    let cases: Vec<Case> = corpus_cases(&registry)
        .into_iter()
        .chain(terraform_cases())
        .collect();
    let mut main_tf = PROVIDER_NO_CLUSTER.to_owned();
    let mut lines: Vec<(usize, usize)> = Vec::new();
    for case in &cases {
        let start = main_tf.lines().count() + 1;
        main_tf.push_str(&case.resource);
        lines.push((start, main_tf.lines().count()));
    }
    let ws = Workspace::dev_overrides(&main_tf);
    let out = ws.run(&["validate", "-json", "-no-color"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("validate -json: {e}\n{}", text(&out.stderr)));
    assert_eq!(report["valid"], false);
    let diagnostics = report["diagnostics"].as_array().unwrap();
    let mut failures = Vec::new();
    for (case, (start, end)) in cases.iter().zip(&lines) {
        let own = diagnostics.iter().filter(|d| {
            d["severity"] == "error"
                && d["range"]["start"]["line"]
                    .as_u64()
                    .is_some_and(|l| (*start as u64..=*end as u64).contains(&l))
        });
        let found = own.clone().any(|d| {
            let said = format!(
                "{} {}",
                d["summary"].as_str().unwrap_or_default(),
                d["detail"].as_str().unwrap_or_default()
            );
            said.contains(&case.expect)
        });
        if !found {
            let said: Vec<String> = own
                .map(|d| format!("{}: {}", d["summary"], d["detail"]))
                .collect();
            failures.push(format!(
                "{} (lines {start}-{end}): expected {:?}, got {said:?}\n{}",
                case.label, case.expect, case.resource
            ));
        }
    }
    println!(
        "terraform validate: {} invalid configurations, each refused on its own block",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert!(cases.len() >= 30);
}
