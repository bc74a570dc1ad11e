//! `model-fleet-operator render -f` as a user runs it: the binary, the examples, the exit status.

use std::process::{Command, Output};

fn render(files: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_model-fleet-operator"));
    cmd.arg("render")
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    for file in files {
        cmd.args(["-f", file]);
    }
    cmd.output().expect("running model-fleet-operator render")
}

/// The standard output of a `render` that must succeed (its stderr in the failure).
fn rendered(files: &[&str]) -> String {
    let out = render(files);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_training_run_renders_with_its_dataset_from_a_second_file() {
    let stdout = rendered(&[
        "examples/dataset-corpus.yaml",
        "examples/training-pytorch.yaml",
    ]);
    assert!(
        stdout.contains("kind: Job") && stdout.contains("name: ft-1"),
        "{stdout}"
    );
}

#[test]
fn a_training_run_without_its_dataset_says_how_to_add_it() {
    let out = render(&["examples/training-pytorch.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("DatasetNotFound") && stderr.contains("a second -f"),
        "{stderr}"
    );
}

#[test]
fn a_missing_file_is_named() {
    let out = render(&["examples/no-such-file.yaml"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("reading examples/no-such-file.yaml"),
        "{stderr}"
    );
}

// Issue 22: `render -f` shows the budget and each KV cache sized from the model's shape, as YAML comments.
#[test]
fn the_fit_and_the_kv_cache_from_shape_are_shown() {
    let stdout = rendered(&["examples/inference-kv-from-shape.yaml"]);
    assert!(
        stdout.starts_with(
            "# InferenceService models/qwen: gpu.fit needs 17.71 GiB per GPU over 2 shard(s): class 24gi\n\
             #   KV cache of qwen2.5-7b-instruct from its shape: 15032385536 bytes (14336 MiB), 7168 MiB per GPU\n---\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("kind: Deployment"), "{stdout}");
}

// Without --default-gateway a route attaches to the chart's shared Gateway (values.yaml `gateway.name`, installed in
// model-fleet-system by the documented install), so what `render` prints is what the operator would apply there.
#[test]
fn a_route_without_a_parent_ref_attaches_to_the_charts_shared_gateway() {
    let stdout = rendered(&["examples/inference-kind.yaml"]);
    let route = stdout
        .split("\n---\n")
        .map(|doc| serde_yaml::from_str::<serde_yaml::Value>(doc).expect("rendered YAML"))
        .find(|doc| doc["kind"] == "HTTPRoute")
        .unwrap_or_else(|| panic!("no HTTPRoute in {stdout}"));
    let parent = &route["spec"]["parentRefs"][0];
    assert_eq!(parent["name"], "shared", "{stdout}");
    assert_eq!(parent["namespace"], "model-fleet-system", "{stdout}");
}
