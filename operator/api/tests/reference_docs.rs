//! The generated API reference pages (issue 20) are current: `docs/reference/api/<kind>.md` equals what
//! `model_fleet_api::reference` renders from the CRDs, and every operator default it lists names a field that exists.
//! `UPDATE_DOCS=1` (what `make docs-generate` sets) rewrites the pages instead of failing.

use std::path::PathBuf;

use model_fleet_api::{self as api, reference};

fn docs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference/api")
}

#[test]
fn api_reference_pages_match_the_crds() {
    let update = std::env::var_os("UPDATE_DOCS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for crd in api::crds() {
        let path = docs_dir().join(reference::reference_file_name(&crd));
        let page = reference::crd_reference(&crd);
        if update {
            std::fs::create_dir_all(docs_dir()).unwrap();
            std::fs::write(&path, &page).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(page.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated pages (regenerate with `make docs-generate`): {stale:?}"
    );
}

#[test]
fn every_listed_default_names_a_field_of_its_kind() {
    for d in reference::operator_defaults() {
        let schema = api::validate::schema_of(d.kind).unwrap();
        let pointer: String = d
            .path
            .split('.')
            .map(|p| format!("/properties/{p}"))
            .collect();
        assert!(
            schema.pointer(&pointer).is_some(),
            "{} has no field {} (default {})",
            d.kind,
            d.path,
            d.value
        );
    }
}

#[test]
fn pages_name_every_cel_message() {
    for crd in api::crds() {
        let page = reference::crd_reference(&crd);
        let yaml = api::crd_yaml(&crd);
        for line in yaml.lines().filter_map(|l| {
            l.trim()
                .strip_prefix("- message: ")
                .or_else(|| l.trim().strip_prefix("message: "))
        }) {
            let message = line.trim_matches('\'').replace("''", "'");
            let first_words: String = message
                .split_whitespace()
                .take(4)
                .collect::<Vec<_>>()
                .join(" ");
            assert!(
                page.contains(&first_words),
                "{}: {first_words:?} missing",
                crd.spec.names.kind
            );
        }
    }
}
