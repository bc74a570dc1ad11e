//! The real Terraform CLI driving the workspace's provider, in a throw-away working folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{Context, bail};

use crate::cluster::repo_root;
use crate::process::workspace_binary;

/// A Terraform working folder whose CLI configuration (`TF_CLI_CONFIG_FILE`) points
/// `modelfleet/modelfleet` at the freshly built provider with `dev_overrides` (no `init` needed).
/// The CLI is Terraform or OpenTofu, as `MODEL_FLEET_TF_CLI` says (see [`terraform_binary`]).
#[derive(Debug)]
pub struct Terraform {
    /// The working folder (`main.tf` and state live here); removed on drop.
    pub dir: tempfile::TempDir,
    cli_config: PathBuf,
    binary: PathBuf,
    /// Which CLI `binary` is.
    pub cli: Cli,
}

/// The Terraform-compatible CLI under test. Both speak tfplugin5 to the provider and honour
/// `TF_CLI_CONFIG_FILE`; they differ in the default registry host and in their messages' wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cli {
    /// HashiCorp Terraform (`terraform`).
    Terraform,
    /// OpenTofu (`tofu`).
    OpenTofu,
}

impl Cli {
    /// The CLI `binary` is, from the first line of `binary version` (`Terraform v1.11.4`,
    /// `OpenTofu v1.10.10`).
    pub fn of(binary: &Path) -> anyhow::Result<Cli> {
        let out = Command::new(binary)
            .arg("version")
            .env("CHECKPOINT_DISABLE", "1")
            .output()
            .with_context(|| format!("running {} version", binary.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        match text.split_whitespace().next() {
            Some("Terraform") => Ok(Cli::Terraform),
            Some("OpenTofu") => Ok(Cli::OpenTofu),
            _ => bail!(
                "{} version printed neither Terraform nor OpenTofu: {text}",
                binary.display()
            ),
        }
    }

    /// The registry host a source address without one (`modelfleet/modelfleet`) belongs to.
    pub fn registry_host(self) -> &'static str {
        match self {
            Cli::Terraform => "registry.terraform.io",
            Cli::OpenTofu => "registry.opentofu.org",
        }
    }

    /// The product name the CLI uses for itself in its messages ("Terraform will perform the
    /// following actions", "OpenTofu will perform the following actions").
    pub fn product(self) -> &'static str {
        match self {
            Cli::Terraform => "Terraform",
            Cli::OpenTofu => "OpenTofu",
        }
    }
}

/// The Terraform CLI all tests use (`cluster/scripts/tf-bin.sh` decides): with
/// `MODEL_FLEET_TF_CLI` unset or `terraform`, `$TF_BIN`, else `terraform` on PATH, else the OpenTofu
/// that `make bootstrap` built; with `MODEL_FLEET_TF_CLI=tofu`, that OpenTofu (or `tofu` on PATH),
/// and an error naming `make bootstrap` when there is none.
pub fn terraform_binary() -> anyhow::Result<PathBuf> {
    let out = Command::new("bash")
        .arg(repo_root().join("acceptance-tests/cluster/scripts/tf-bin.sh"))
        .output()?;
    if !out.status.success() {
        bail!("{}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(PathBuf::from(String::from_utf8(out.stdout)?.trim()))
}

/// Terraform output with the diagnostic frame (`│`) removed and line wraps joined, so messages can be matched
/// whatever the wrap width.
pub fn flat(text: &str) -> String {
    text.replace('│', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

impl Terraform {
    /// A new working folder with `main_tf` written to `main.tf`.
    pub fn new(main_tf: &str) -> anyhow::Result<Self> {
        let provider = workspace_binary("terraform-provider-modelfleet")?;
        let dir = tempfile::tempdir()?;
        let cli_config = dir.path().join("dev.tfrc");
        std::fs::write(
            &cli_config,
            format!(
                "provider_installation {{\n  dev_overrides {{\n    \"modelfleet/modelfleet\" = \"{}\"\n  }}\n  direct {{}}\n}}\n",
                provider.parent().context("provider path")?.display()
            ),
        )?;
        let binary = terraform_binary()?;
        let cli = Cli::of(&binary)?;
        // The OpenTofu run of `make test` must never pass on Terraform by mistake.
        if std::env::var("MODEL_FLEET_TF_CLI").as_deref() == Ok("tofu") && cli != Cli::OpenTofu {
            bail!(
                "MODEL_FLEET_TF_CLI=tofu but {} is {cli:?}",
                binary.display()
            );
        }
        let tf = Self {
            dir,
            cli_config,
            cli,
            binary,
        };
        tf.write("main.tf", main_tf)?;
        Ok(tf)
    }

    /// Writes (or replaces) a file in the working folder.
    pub fn write(&self, name: &str, text: &str) -> anyhow::Result<()> {
        Ok(std::fs::write(self.dir.path().join(name), text)?)
    }

    /// The working folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The command `terraform ARGS` in the working folder, not started: for tests that run it in the background
    /// (to cut the API server or send Ctrl-C while it applies).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .current_dir(self.dir.path())
            .args(args)
            .env("TF_CLI_CONFIG_FILE", &self.cli_config)
            .env("TF_IN_AUTOMATION", "1")
            .env("CHECKPOINT_DISABLE", "1");
        command
    }

    /// Runs `terraform ARGS` (with `-no-color` added by the caller where wanted) and returns the
    /// raw output, whatever the exit code.
    pub fn run(&self, args: &[&str]) -> anyhow::Result<Output> {
        self.command(args).output().context("running terraform")
    }

    /// Runs `terraform ARGS` whatever the exit code; returns whether it succeeded and its stdout then stderr as
    /// [`flat`] text, for matching messages.
    pub fn run_flat(&self, args: &[&str]) -> anyhow::Result<(bool, String)> {
        let out = self.run(args)?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok((out.status.success(), flat(&text)))
    }

    /// Runs `terraform ARGS` and fails with its output when it exits non-zero; returns stdout.
    pub fn ok(&self, args: &[&str]) -> anyhow::Result<String> {
        let out = self.run(args)?;
        if !out.status.success() {
            bail!(
                "terraform {} failed ({}):\n{}\n{}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(String::from_utf8(out.stdout)?)
    }

    /// `terraform apply -auto-approve -no-color`.
    pub fn apply(&self) -> anyhow::Result<String> {
        self.ok(&["apply", "-auto-approve", "-no-color", "-input=false"])
    }

    /// Exit code of `terraform plan -detailed-exitcode`: 0 no changes, 2 changes (1 is an error,
    /// returned as `Err` with the output).
    pub fn plan_exit_code(&self) -> anyhow::Result<(i32, String)> {
        let out = self.run(&["plan", "-detailed-exitcode", "-no-color", "-input=false"])?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        match out.status.code() {
            Some(code @ (0 | 2)) => Ok((code, text)),
            _ => bail!("terraform plan failed:\n{text}"),
        }
    }
}

/// The `terraform { required_providers }` block and a `provider "modelfleet"` block pointed at
/// `kubeconfig` with default `namespace`; `extra` is added inside the provider block (e.g.
/// `force_conflicts = true`).
pub fn provider_block(kubeconfig: &Path, namespace: &str, extra: &str) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    modelfleet = {{ source = "modelfleet/modelfleet" }}
  }}
}}

provider "modelfleet" {{
  kubeconfig_path = "{}"
  namespace       = "{namespace}"
{extra}}}
"#,
        kubeconfig.display()
    )
}

/// The smallest `modelfleet_inference` resource, named `name` (model `name`, image `hashicorp/http-echo:1.0`, every
/// other argument at its default): for tests about the provider rather than the spec.
pub fn echo_inference(name: &str) -> String {
    format!(
        r#"
resource "modelfleet_inference" "{name}" {{
  name = "{name}"
  model {{
    name = "{name}"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
  }}
}}
"#
    )
}

/// The `terraform { required_providers }` block, a `terraform_data.cluster` whose output is `kubeconfig` (standing
/// in for a cluster the configuration creates; a new `generation` replaces it, so its output is unknown until
/// apply) and a `provider "modelfleet"` configured from that output with default `namespace`.
pub fn provider_from_late_cluster(kubeconfig: &Path, namespace: &str, generation: u32) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    modelfleet = {{ source = "modelfleet/modelfleet" }}
  }}
}}

resource "terraform_data" "cluster" {{
  input            = "{}"
  triggers_replace = "{generation}"
}}

provider "modelfleet" {{
  kubeconfig_path = terraform_data.cluster.output
  namespace       = "{namespace}"
}}
"#,
        kubeconfig.display()
    )
}
