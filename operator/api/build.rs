//! Embeds the openAPIV3Schema of each checked-in CRD (`charts/model-fleet-operator/crds/*.yaml`) as one JSON document
//! `$OUT_DIR/schemas.json` (`{"InferenceService": {...}, ...}`), which `validate::schema_of` parses at first use.
//!
//! Why: generating the CRDs from the Rust types (schemars and kube's structural rewrite) takes 14-25 ms, the largest
//! part of the provider's start-up, and Terraform starts the provider three times per plan. Parsing this JSON takes
//! about 0.5 ms. The checked-in CRDs are the types' own output: `tests/crds.rs` fails when they drift, and
//! `schema_of` is compared with the types there too.

use std::path::Path;

fn main() {
    // Read at run time, not with env!(): Cargo reuses a compiled build script across checkouts at other paths (a
    // shared target dir), and a path baked in at compile time would point into another clone.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest_dir).join("../../charts/model-fleet-operator/crds");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut schemas = serde_json::Map::new();
    for path in files {
        println!("cargo::rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let crd: serde_json::Value = serde_yaml::from_str(&text)
            .unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
        let kind = crd.pointer("/spec/names/kind").and_then(|k| k.as_str());
        let schema = crd.pointer("/spec/versions/0/schema/openAPIV3Schema");
        let (Some(kind), Some(schema)) = (kind, schema) else {
            panic!(
                "{} has no spec.names.kind or openAPIV3Schema",
                path.display()
            );
        };
        schemas.insert(kind.to_owned(), schema.clone());
    }
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("schemas.json");
    std::fs::write(&out, serde_json::Value::Object(schemas).to_string())
        .unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}
