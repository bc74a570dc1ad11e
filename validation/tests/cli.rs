//! The binary's command line and exit codes (docs/MODEL_VALIDATION.md): 0 when every check passes, 1 when one fails,
//! 2 for a wrong command line. `nvidia-smi` is replaced by a script printing a sample in the documented CSV format
//! (this machine has no GPU): what is tested is the plumbing from flags and environment to lines and exit code; the
//! judgement itself is unit-tested in src/gpu/tests.rs.

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_model-fleet-check");

/// A stand-in nvidia-smi that checks it was asked the documented query and prints two L4s.
fn fake_smi(dir: &std::path::Path) -> String {
    let path = dir.join("nvidia-smi");
    std::fs::write(
        &path,
        "#!/bin/sh\n[ \"$1 $2\" = \"--query-gpu=index,name,memory.total --format=csv,noheader,nounits\" ] || \
         { echo \"unexpected arguments: $*\" >&2; exit 9; }\nprintf '0, NVIDIA L4, 23034\\n1, NVIDIA L4, 23034\\n'\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_string()
}

fn gpu(smi: &str, args: &[&str], env: &[(&str, &str)]) -> (Output, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(["gpu", "--nvidia-smi", smi]).args(args);
    for var in [
        "CUDA_VISIBLE_DEVICES",
        "NVIDIA_VISIBLE_DEVICES",
        "EXPECT_GPU_COUNT",
        "MIN_MEMORY_MIB",
        "GPU_CLASS",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    (out, stdout)
}

#[test]
fn gpu_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let smi = fake_smi(dir.path());

    let (out, stdout) = gpu(&smi, &["--expect-count", "2", "--class", "24gi"], &[]);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.ends_with("summary: 3 PASS, 0 FAIL\n"), "{stdout}");

    let (out, stdout) = gpu(
        &smi,
        &["--expect-count", "2", "--min-memory-mib", "39538"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL memory: GPU 0 (NVIDIA L4) has 23034 MiB < 39538 MiB"),
        "{stdout}"
    );

    let (out, stdout) = gpu(
        &smi,
        &["--expect-count", "2", "--class", "24gi"],
        &[("CUDA_VISIBLE_DEVICES", "1")],
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL device-count: 1 device(s) visible to CUDA"),
        "{stdout}"
    );

    let (out, stdout) = gpu(
        "/nonexistent/nvidia-smi",
        &["--expect-count", "1", "--class", "16gi"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.starts_with("FAIL nvidia-smi: /nonexistent/nvidia-smi not found"),
        "{stdout}"
    );
}

#[test]
fn usage_errors_exit_2_and_check_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let smi = fake_smi(dir.path());
    for args in [
        &["--expect-count", "2", "--class", "81gi"][..],
        &["--expect-count", "2"][..],
        &[
            "--expect-count",
            "2",
            "--class",
            "24gi",
            "--min-memory-mib",
            "1",
        ][..],
        &["--expect-count", "two", "--class", "24gi"][..],
    ] {
        let (out, stdout) = gpu(&smi, args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stdout}");
        assert_eq!(stdout, "", "{args:?}");
    }
    let out = Command::new(BIN)
        .args(["openai", "--model", "m"])
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn install_copies_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .arg("install")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let copy = dir.path().join("model-fleet-check");
    let version = Command::new(&copy).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8(version.stdout).unwrap(),
        format!("model-fleet-check {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn openai_against_nothing_fails_each_check() {
    // A loopback port nobody listens on: every check fails with the connection error, exit 1.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = Command::new(BIN)
        .args([
            "openai",
            "--base-url",
            &format!("http://127.0.0.1:{port}"),
            "--model",
            "m",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.starts_with("FAIL models: "), "{stdout}");
    assert!(stdout.ends_with("summary: 0 PASS, 6 FAIL\n"), "{stdout}");
}
