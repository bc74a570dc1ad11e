//! End-to-end tests of the plugin binary with the real Terraform CLI, Terraform or OpenTofu as
//! `MODEL_FLEET_TF_CLI` (terraform|tofu, default terraform) says, found by
//! `acceptance-tests/cluster/scripts/tf-bin.sh` (`TF_BIN`, else `terraform` on PATH), with no
//! Kubernetes cluster at all: the handshake, dev_overrides
//! (`TF_CLI_CONFIG_FILE`), validate / providers schema / plan of a new `modelfleet_dataset`, clear
//! errors for bad input, and `terraform init` from the filesystem mirror built by
//! `provider/scripts/install.sh`, offline.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use base64::Engine as _;

mod common;

use common::*;

#[test]
fn refuses_to_run_by_hand() {
    let out = Command::new(BINARY)
        .env_remove("TF_PLUGIN_MAGIC_COOKIE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout: {}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("This binary is a plugin"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn refuses_protocol_6_only() {
    let out = Command::new(BINARY)
        .env("TF_PLUGIN_MAGIC_COOKIE", COOKIE)
        .env("PLUGIN_PROTOCOL_VERSIONS", "6")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr).contains("version 5"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn handshake_line_comes_first_and_fast() {
    // Any PEM certificate works to start the server (the real client cert is Terraform's P-521).
    let client = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(client.cert.der());
    let pem = format!("-----BEGIN CERTIFICATE-----\n{b64}\n-----END CERTIFICATE-----\n");
    let started = Instant::now();
    let mut child = Command::new(BINARY)
        .env("TF_PLUGIN_MAGIC_COOKIE", COOKIE)
        .env("PLUGIN_PROTOCOL_VERSIONS", "6,5")
        .env("PLUGIN_CLIENT_CERT", pem)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let elapsed = started.elapsed();
    child.kill().unwrap();
    child.wait().unwrap();
    let fields: Vec<&str> = line.trim_end().split('|').collect();
    assert_eq!(fields.len(), 6, "{line:?}");
    assert_eq!(&fields[..3], ["1", "5", "tcp"]);
    assert!(fields[3].starts_with("127.0.0.1:"), "{line:?}");
    assert_eq!(fields[4], "grpc");
    assert!(!fields[5].ends_with('='), "no base64 padding: {line:?}");
    let der = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(fields[5])
        .unwrap();
    assert_eq!(der[0], 0x30, "a DER certificate");
    // Measured, not asserted (no timing thresholds in tests): the figure is in the provider notes.
    eprintln!("start to handshake line: {elapsed:?}");
}

#[test]
fn validate_schema_and_plan_without_a_cluster() {
    let ws = Workspace::dev_overrides(&format!("{PROVIDER_NO_CLUSTER}{DATASET}"));
    let out = assert_ok("validate", &ws.run(&["validate", "-no-color"]));
    assert!(out.contains("configuration is valid"), "{out}");

    let schema: serde_json::Value = serde_json::from_str(&assert_ok(
        "providers schema",
        &ws.run(&["providers", "schema", "-json"]),
    ))
    .unwrap();
    let provider = &schema["provider_schemas"][provider_address()];
    assert_eq!(
        provider["provider"]["block"]["attributes"]["token"]["sensitive"],
        true
    );
    assert_eq!(
        provider["provider"]["block"]["attributes"]["client_key"]["sensitive"],
        true
    );
    let dataset = &provider["resource_schemas"]["modelfleet_dataset"]["block"];
    assert_eq!(dataset["attributes"]["version"]["required"], true);
    assert_eq!(dataset["attributes"]["id"]["computed"], true);
    assert_eq!(dataset["block_types"]["splits"]["nesting_mode"], "map");
    assert_eq!(dataset["block_types"]["source"]["nesting_mode"], "single");

    let out = ws.run(&["plan", "-no-color", "-detailed-exitcode", "-input=false"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "plan with changes\n{}\n{}",
        text(&out.stdout),
        tail(&text(&out.stderr))
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "{stdout}"
    );
    assert!(
        stdout.contains(r#"namespace                = "ml""#),
        "{stdout}"
    );
    assert!(stdout.contains("records = 123456789012"), "{stdout}");
    assert!(!text(&out.stderr).contains("plugin failed to exit gracefully"));

    // A saved plan renders as JSON with the configured values unchanged (invariant 2).
    assert_ok(
        "plan -out",
        &ws.run(&["plan", "-no-color", "-input=false", "-out=tfplan"]),
    );
    let plan: serde_json::Value =
        serde_json::from_str(&assert_ok("show", &ws.run(&["show", "-json", "tfplan"]))).unwrap();
    let after = &plan["resource_changes"][0]["change"]["after"];
    assert_eq!(after["version"], "3");
    assert_eq!(after["splits"]["train"]["records"], 123456789012u64);
    assert_eq!(after["allowed_service_accounts"][0], "trainer");
    assert_eq!(
        plan["resource_changes"][0]["change"]["after_unknown"]["id"],
        true
    );
}

#[test]
fn bad_configuration_gets_diagnostics_with_paths() {
    let ws = Workspace::dev_overrides(&format!(
        "{PROVIDER_NO_CLUSTER}{}",
        r#"
resource "modelfleet_dataset" "bad" {
  name    = "Not_A_Name"
  version = "1"
  source {
    uri = "s3://x"
  }
  timeouts {
    delete = "soon"
  }
}
"#
    ));
    let out = ws.run(&["validate", "-no-color"]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("Invalid name"), "{}", tail(&stderr));
    assert!(stderr.contains("Invalid duration"), "{}", tail(&stderr));
    // Terraform points at the attribute in the configuration.
    assert!(
        stderr.contains(r#"name    = "Not_A_Name""#),
        "{}",
        tail(&stderr)
    );
}

#[test]
fn import_id_without_namespace_is_a_clear_error() {
    let ws = Workspace::dev_overrides(&format!("{PROVIDER_NO_CLUSTER}{DATASET}"));
    let out = ws.run(&[
        "import",
        "-no-color",
        "-input=false",
        "modelfleet_dataset.corpus",
        "corpus-v3",
    ]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("Invalid import ID"), "{}", tail(&stderr));
    assert!(stderr.contains("namespace/name"), "{}", tail(&stderr));
    assert!(!stderr.contains("panic"), "{}", tail(&stderr));
}

#[test]
fn init_from_the_filesystem_mirror_offline() {
    let scratch = tempfile::tempdir().unwrap();
    let mirror = scratch.path().join("mirror");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install.sh");
    let out = Command::new("bash")
        .arg(&script)
        .env("PROVIDER_BINARY", BINARY)
        .env("MIRROR", &mirror)
        .env("DIST", scratch.path().join("dist"))
        .output()
        .unwrap();
    assert!(out.status.success(), "install.sh: {}", text(&out.stderr));
    let version = env!("CARGO_PKG_VERSION");
    // One copy per registry host: the mirror serves Terraform and OpenTofu alike.
    for host in ["registry.terraform.io", "registry.opentofu.org"] {
        let archive = mirror.join(format!(
            "{host}/modelfleet/modelfleet/terraform-provider-modelfleet_{version}_linux_amd64.zip"
        ));
        assert!(archive.is_file(), "{}", archive.display());
    }
    assert!(
        scratch
            .path()
            .join(format!(
                "dist/terraform-provider-modelfleet_{version}_SHA256SUMS"
            ))
            .is_file()
    );

    // 1. -plugin-dir, with an empty CLI config (no dev_overrides, no network: the registry is
    //    never consulted for a provider found in the plugin dir).
    let ws = Workspace::with_cli_config(&format!("{PROVIDER_NO_CLUSTER}{DATASET}"), "");
    let plugin_dir = format!("-plugin-dir={}", mirror.display());
    assert_ok(
        "init -plugin-dir",
        &ws.run(&["init", "-no-color", "-input=false", &plugin_dir]),
    );
    let out = ws.run(&["plan", "-no-color", "-input=false"]);
    assert!(
        text(&out.stdout).contains("Plan: 1 to add"),
        "{}",
        tail(&text(&out.stderr))
    );

    // 2. A CLI config with a filesystem_mirror and direct installation excluded for our address.
    let ws = Workspace::with_cli_config(
        &format!("{PROVIDER_NO_CLUSTER}{DATASET}"),
        &format!(
            "provider_installation {{\n  filesystem_mirror {{\n    path = \"{}\"\n    include = [\"{address}\"]\n  }}\n  direct {{\n    exclude = [\"{address}\"]\n  }}\n}}\n",
            mirror.display(),
            address = provider_address()
        ),
    );
    let out = assert_ok(
        "init with filesystem_mirror",
        &ws.run(&["init", "-no-color", "-input=false"]),
    );
    assert!(
        out.contains(&format!("Installed modelfleet/modelfleet v{version}")),
        "{out}"
    );
    assert_ok("validate", &ws.run(&["validate", "-no-color"]));
}

#[test]
fn debug_mode_serves_plaintext_for_reattach() {
    let mut child = Command::new(BINARY)
        .arg("--debug")
        .env_remove("TF_PLUGIN_MAGIC_COOKIE")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut reattach = None;
    for _ in 0..10 {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(rest) = line.trim().strip_prefix("export TF_REATTACH_PROVIDERS='") {
            reattach = Some(rest.trim_end_matches('\'').to_string());
            break;
        }
    }
    let reattach = reattach.expect("debug mode prints TF_REATTACH_PROVIDERS");
    let json: serde_json::Value = serde_json::from_str(&reattach).unwrap();
    // One entry per CLI's address of `modelfleet/modelfleet`: the same line works for both.
    for host in ["registry.terraform.io", "registry.opentofu.org"] {
        assert_eq!(
            json[format!("{host}/modelfleet/modelfleet")]["ProtocolVersion"],
            5
        );
    }

    // Terraform attaches to the running process instead of starting one.
    let ws = Workspace::with_cli_config(&format!("{PROVIDER_NO_CLUSTER}{DATASET}"), "");
    let out = Command::new(tf_bin())
        .args(["plan", "-no-color", "-input=false"])
        .current_dir(ws.dir.path())
        .env("TF_CLI_CONFIG_FILE", &ws.cli_config)
        .env("TF_REATTACH_PROVIDERS", &reattach)
        .env("CHECKPOINT_DISABLE", "1")
        .output()
        .unwrap();
    let alive = child.try_wait().unwrap().is_none();
    child.kill().ok();
    child.wait().ok();
    assert!(
        text(&out.stdout).contains("Plan: 1 to add"),
        "{}\n{}",
        text(&out.stdout),
        tail(&text(&out.stderr))
    );
    assert!(alive, "a reattached provider outlives the Terraform run");
}
