//! Shared by the provider's CLI tests: the plugin binary under test, the Terraform (or OpenTofu) CLI that
//! `tf-bin.sh` picks, a workspace with a CLI configuration, and the configurations they start from.
#![allow(dead_code)] // each test crate uses a part

pub mod corpus;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub const BINARY: &str = env!("CARGO_BIN_EXE_terraform-provider-modelfleet");
pub const COOKIE: &str = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";

/// The CLI under test, as `tf-bin.sh` picks it (the one place that knows `MODEL_FLEET_TF_CLI`).
pub fn tf_bin() -> &'static str {
    static BIN: OnceLock<String> = OnceLock::new();
    BIN.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../acceptance-tests/cluster/scripts/tf-bin.sh");
        let out = Command::new("bash").arg(&script).output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout).trim().to_owned()
    })
}

/// The registry host that `modelfleet/modelfleet` gets from the CLI under test: Terraform's
/// `registry.terraform.io`, OpenTofu's `registry.opentofu.org` (from `version`'s first word).
pub fn registry_host() -> &'static str {
    static HOST: OnceLock<&str> = OnceLock::new();
    HOST.get_or_init(|| {
        let out = Command::new(tf_bin()).arg("version").output().unwrap();
        match text(&out.stdout).split_whitespace().next() {
            Some("Terraform") => "registry.terraform.io",
            Some("OpenTofu") => "registry.opentofu.org",
            other => panic!(
                "{} version: neither Terraform nor OpenTofu: {other:?}",
                tf_bin()
            ),
        }
    })
}

/// `HOST/modelfleet/modelfleet` for the CLI under test.
pub fn provider_address() -> String {
    format!("{}/modelfleet/modelfleet", registry_host())
}

/// A Terraform working directory with a CLI config.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub cli_config: PathBuf,
}

impl Workspace {
    /// dev_overrides pointing at the test build of the plugin.
    pub fn dev_overrides(main_tf: &str) -> Workspace {
        let bin_dir = Path::new(BINARY).parent().unwrap();
        Workspace::with_cli_config(
            main_tf,
            &format!(
                "provider_installation {{\n  dev_overrides {{\n    \"modelfleet/modelfleet\" = \"{}\"\n  }}\n  direct {{}}\n}}\n",
                bin_dir.display()
            ),
        )
    }

    pub fn with_cli_config(main_tf: &str, cli_config: &str) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.tf"), main_tf).unwrap();
        let cli_path = dir.path().join("cli.tfrc");
        std::fs::write(&cli_path, cli_config).unwrap();
        Workspace {
            dir,
            cli_config: cli_path,
        }
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(tf_bin())
            .args(args)
            .current_dir(self.dir.path())
            .env("TF_CLI_CONFIG_FILE", &self.cli_config)
            .env("TF_IN_AUTOMATION", "1")
            .env("CHECKPOINT_DISABLE", "1")
            .env("TF_LOG", "DEBUG")
            .env_remove("TF_LOG_PATH")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {} (set TF_BIN): {e}", tf_bin()))
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts success; also that Terraform never had to kill the plugin (GRPCController.Shutdown
/// works and the process exits promptly).
pub fn assert_ok(what: &str, out: &Output) -> String {
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed\nstdout:\n{stdout}\nstderr (tail):\n{}",
        tail(&stderr)
    );
    assert!(
        !stderr.contains("plugin failed to exit gracefully"),
        "{what}: the plugin did not exit on Shutdown"
    );
    stdout
}

pub fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(60)..].join("\n")
}

pub const PROVIDER_NO_CLUSTER: &str = r#"
terraform {
  required_providers {
    modelfleet = { source = "modelfleet/modelfleet" }
  }
}

# Nothing listens on port 1: plans of new resources must not need a cluster.
provider "modelfleet" {
  host      = "https://127.0.0.1:1"
  token     = "not-a-real-token"
  namespace = "ml"
}
"#;

pub const DATASET: &str = r#"
resource "modelfleet_dataset" "corpus" {
  name    = "corpus-v3"
  version = "3"
  format  = "parquet"
  source {
    uri    = "s3://bucket/corpus/v3/"
    digest = "sha256:abc"
  }
  splits "train" {
    uri     = "s3://bucket/corpus/v3/train/"
    records = 123456789012
  }
  splits "validation" {
    uri = "s3://bucket/corpus/v3/validation/"
  }
  pvc {
    claim_name = "corpus"
  }
  allowed_service_accounts = ["trainer"]
  timeouts {
    delete = "30s"
  }
}
"#;
