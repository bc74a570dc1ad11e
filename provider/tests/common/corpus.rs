//! The invalid-manifest corpus (`operator/tests/invalid/`, one file per CEL rule, enum, minimum and maximum of the
//! CRDs) as the provider's tests read it: each file's headers and documents, and the Terraform configuration a user
//! would write for a manifest.

use std::collections::BTreeMap;
use std::path::PathBuf;

use model_fleet_api::validate::schema_of;
use serde_json::Value as Json;
use terraform_provider_modelfleet::resources::Resource;
use terraform_provider_modelfleet::resources::fields::{fields_from_openapi, from_json};
use terraform_provider_modelfleet::value::Value;

/// `(file name, headers, documents)` of every corpus file; `expect-message` is the `expect-message-provider` header
/// where a file has one.
pub fn corpus() -> Vec<(String, BTreeMap<String, String>, Vec<Json>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../operator/tests/invalid");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("operator/tests/invalid")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let mut headers: BTreeMap<String, String> = text
                .lines()
                .filter_map(|l| l.strip_prefix("# "))
                .filter_map(|l| l.split_once(": "))
                .map(|(k, v)| (k.to_owned(), v.trim().to_owned()))
                .collect();
            // The provider's own words where its configuration cannot write the manifest's value (a quantity is a
            // string in Terraform, so a number below `minimum` is a string the `pattern` refuses).
            if let Some(provider) = headers.remove("expect-message-provider") {
                headers.insert("expect-message".into(), provider);
            }
            let docs = text
                .split("\n---")
                .map(|doc| serde_yaml::from_str::<Json>(doc).unwrap())
                .filter(|doc| !doc.is_null())
                .collect();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, headers, docs)
        })
        .collect()
}

pub fn type_name(kind: &str) -> &'static str {
    match kind {
        "InferenceService" => "modelfleet_inference",
        "TrainingRun" => "modelfleet_training",
        "Dataset" => "modelfleet_dataset",
        other => panic!("unexpected kind {other}"),
    }
}

/// The resource configuration a user would write for `manifest` as Terraform sends it: every attribute of `resource`
/// present (null unless set), the spec's fields, its name and namespace.
pub fn configuration(resource: &dyn Resource, manifest: &Json) -> Value {
    let kind = manifest["kind"].as_str().unwrap();
    let spec_schema = schema_of(kind)
        .unwrap()
        .pointer("/properties/spec")
        .unwrap();
    let fields = fields_from_openapi(spec_schema);
    let Value::Object(mut attributes) = Value::null_object(&resource.schema().value_type()) else {
        panic!("a resource is an object");
    };
    let Value::Object(spec) = from_json(&fields, manifest["spec"].as_object().unwrap()) else {
        panic!("a spec reads as an object");
    };
    attributes.extend(spec);
    attributes.insert("name".into(), Value::string("invalid"));
    attributes.insert("namespace".into(), Value::string("default"));
    Value::Object(attributes)
}
