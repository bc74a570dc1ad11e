//! Issue 18, fuzzing `render -f` manifest parsing (proptest at scale): arbitrary text, arbitrary JSON values and
//! byte-level mutations of the shipped examples go through the `render` entry ([`render_manifests`]): it answers a
//! rendering or an error message, never a panic. Case count: proptest's default (256) in `cargo test`, more with
//! `PROPTEST_CASES`.

use model_fleet_api::render::RenderConfig;
use model_fleet_operator::manifests::render_manifests;
use proptest::prelude::*;

fn examples() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut texts: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    texts.sort();
    texts
}

fn render(text: &str) {
    let config = RenderConfig {
        default_gateway: Some("model-fleet-system/model-fleet".parse().unwrap()),
        ..RenderConfig::default()
    };
    let _ = render_manifests(text, "default", &config);
}

/// A JSON value of bounded depth (YAML is a superset of JSON, so it is a manifest text too).
fn arb_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(|f| serde_json::json!(f)),
        "[a-zA-Z0-9./:-]{0,12}".prop_map(serde_json::Value::from),
        prop::sample::select(vec![
            "InferenceService",
            "TrainingRun",
            "Dataset",
            "modelfleet.io/v1alpha1"
        ])
        .prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "apiVersion",
                    "kind",
                    "metadata",
                    "name",
                    "namespace",
                    "spec",
                    "model",
                    "container",
                    "image",
                    "replicas",
                    "min",
                    "max",
                    "gpu",
                    "count",
                    "fit",
                    "modules",
                    "weightsGiB",
                    "env",
                    "volumes",
                    "datasets",
                    "gateway",
                    "hostnames",
                    "x",
                ])
                .prop_map(str::to_owned),
                inner,
                0..6,
            )
            .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "(?s).{0,400}") {
        render(&text);
    }

    #[test]
    fn arbitrary_manifest_shapes_never_panic(doc in arb_json()) {
        render(&serde_json::to_string(&doc).unwrap());
        let mut manifest = doc;
        if let Some(object) = manifest.as_object_mut() {
            object.insert("apiVersion".into(), "modelfleet.io/v1alpha1".into());
            object.insert("kind".into(), "InferenceService".into());
        }
        render(&serde_json::to_string(&manifest).unwrap());
    }

    #[test]
    fn mutated_examples_never_panic(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let texts = examples();
        let mut bytes = which.get(&texts).clone().into_bytes();
        for (at, byte) in edits {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        render(&String::from_utf8_lossy(&bytes));
    }
}
