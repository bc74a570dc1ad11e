//! The registry pages under `docs/resources/`, `docs/data-sources/` and `docs/reference/provider.md` equal what the provider's schema
//! renders (issue 20); `UPDATE_DOCS=1` (`make docs-generate`) rewrites them instead of failing.

use std::path::{Path, PathBuf};

use super::*;
use crate::resources::{dataset, inference, training};
use crate::schema::provider_schema;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Compares `page` with the committed file, or rewrites it under UPDATE_DOCS=1; returns the path when stale.
fn check(path: &Path, page: &str) -> Option<String> {
    if std::env::var_os("UPDATE_DOCS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, page).unwrap();
        return None;
    }
    (std::fs::read_to_string(path).ok().as_deref() != Some(page))
        .then(|| path.display().to_string())
}

/// (type name, schema, replacing attributes, example file) of every resource type.
fn resource_facts() -> Vec<(String, Schema, Vec<String>, &'static str)> {
    let i = inference::inference();
    let t = training::training();
    let d = dataset::dataset();
    use crate::resources::Resource;
    vec![
        (
            i.type_name().into(),
            i.schema().clone(),
            i.replacing_attributes().to_vec(),
            "examples/terraform/inference-gateway-scaling/main.tf",
        ),
        (
            t.type_name().into(),
            t.schema().clone(),
            t.replacing_attributes().to_vec(),
            "examples/terraform/training-with-dataset/main.tf",
        ),
        (
            d.type_name().into(),
            d.schema().clone(),
            d.replacing_attributes().to_vec(),
            "examples/terraform/training-with-dataset/main.tf",
        ),
    ]
}

#[test]
fn registry_docs_are_current() {
    let mut stale = Vec::new();
    let facts = resource_facts();
    let registered: Vec<String> = crate::resources::Registry::builtin()
        .iter()
        .map(|r| r.type_name().to_string())
        .collect();
    let documented: Vec<String> = {
        let mut v: Vec<String> = facts.iter().map(|f| f.0.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(
        registered, documented,
        "every registered resource type has a page"
    );
    for (type_name, schema, replacing, source) in &facts {
        let hcl = read(source);
        let example = example_block(&hcl, &format!("resource \"{type_name}\" \""))
            .unwrap_or_else(|| panic!("{source} has no {type_name} resource"));
        let page = resource_page(&ResourcePage {
            type_name,
            schema,
            replacing,
            example: &example,
            example_source: source,
        });
        let path = repo()
            .join("docs/resources")
            .join(registry_file_name(type_name));
        stale.extend(check(&path, &page));
    }
    let registry = crate::resources::Registry::builtin();
    let read_existing = "examples/terraform/read-existing/main.tf";
    let hcl = read(read_existing);
    for data_source in registry.data_sources() {
        let type_name = data_source.type_name();
        let example = example_block(&hcl, &format!("data \"{type_name}\" \""))
            .unwrap_or_else(|| panic!("{read_existing} has no {type_name} data source"));
        let page = data_source_page(type_name, data_source.schema(), &example, read_existing);
        let path = repo()
            .join("docs/data-sources")
            .join(registry_file_name(type_name));
        stale.extend(check(&path, &page));
    }
    let quickstart = read("examples/terraform/quickstart/main.tf");
    let example = example_block(&quickstart, "provider \"modelfleet\" {")
        .expect("the quickstart has a provider block");
    stale.extend(check(
        &repo().join("docs/reference/provider.md"),
        &provider_page(&provider_schema(), &example),
    ));
    assert!(
        stale.is_empty(),
        "stale generated pages (regenerate with `make docs-generate`): {stale:?}"
    );
}

#[test]
fn a_data_source_page_lists_its_two_arguments_and_what_it_reads() {
    let registry = crate::resources::Registry::builtin();
    let data_source = registry.data_source("modelfleet_inference").unwrap();
    let page = data_source_page(
        data_source.type_name(),
        data_source.schema(),
        "data \"modelfleet_inference\" \"x\" {}",
        "x",
    );
    assert!(
        page.contains("# modelfleet_inference (Data Source)"),
        "{page}"
    );
    let arguments = page
        .split("## Argument Reference")
        .nth(1)
        .and_then(|rest| rest.split("## Attribute Reference").next())
        .unwrap();
    assert_eq!(arguments.matches("\n* `").count(), 2, "{arguments}");
    assert!(
        arguments.contains("* `name` - (Required, string)"),
        "{arguments}"
    );
    assert!(page.contains("* `url` - (string)"), "{page}");
    assert!(page.contains("* `gateway` - (object)"), "{page}");
    assert!(page.contains("(../resources/inference.md)"), "{page}");
    assert!(
        !page.contains("wait_for") && !page.contains("timeouts"),
        "{page}"
    );
}

#[test]
fn registry_file_names_drop_the_provider_prefix() {
    assert_eq!(registry_file_name("modelfleet_inference"), "inference.md");
    assert_eq!(registry_file_name("modelfleet_dataset"), "dataset.md");
}

#[test]
fn example_blocks_end_at_their_closing_brace() {
    let hcl = "variable \"x\" {}\n\nresource \"modelfleet_dataset\" \"d\" {\n  name = \"d\"\n  source {\n    uri = \"s3://x/\"\n  }\n}\n\noutput \"o\" {}\n";
    assert_eq!(
        example_block(hcl, "resource \"modelfleet_dataset\" \"").unwrap(),
        "resource \"modelfleet_dataset\" \"d\" {\n  name = \"d\"\n  source {\n    uri = \"s3://x/\"\n  }\n}"
    );
}

#[test]
fn pages_mark_replacing_arguments_and_list_computed_attributes() {
    let facts = resource_facts();
    let (type_name, schema, replacing, _) = &facts[1];
    let page = resource_page(&ResourcePage {
        type_name,
        schema,
        replacing,
        example: "",
        example_source: "x",
    });
    assert!(page.contains("* `name` - (Required, string) Object name (metadata.name). Changing it replaces the object. Changing this forces a new resource to be created."), "{page}");
    assert!(page.contains("* `job_name` - "), "{page}");
    assert!(page.contains("terraform import modelfleet_training.example ml/example"));
}
