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

#[test]
fn a_training_run_renders_with_its_dataset_from_a_second_file() {
    let out = render(&[
        "examples/dataset-corpus.yaml",
        "examples/training-pytorch.yaml",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
