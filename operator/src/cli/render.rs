//! The `render` subcommand: reads a multi-document YAML file of Model Fleet manifests and prints
//! the Kubernetes children each would produce, with no cluster. Datasets in the same file are
//! used to resolve TrainingRun references. Invalid manifests are reported with field paths the
//! way the API server reports them (schema checks; CEL rules are checked by the API server).

use std::path::PathBuf;

use anyhow::Context;
use model_fleet_api::render::RenderConfig;
use model_fleet_operator::manifests::render_manifests;

use super::http_add_on::HttpAddOnArgs;

/// Arguments of `model-fleet-operator render`.
#[derive(clap::Args, Debug)]
pub struct RenderArgs {
    /// Multi-document YAML file with InferenceService, TrainingRun and Dataset manifests (`-` for
    /// stdin); repeat it to render several files together (a TrainingRun's Datasets may come from
    /// another file). Document numbers in errors count through the files in order.
    #[arg(short = 'f', long = "filename", required = true)]
    files: Vec<PathBuf>,
    /// Gateway (`NAMESPACE/NAME`) for routes without `gateway.parentRef`, like the operator's flag; the default is
    /// the chart's shared Gateway in the namespace the installation guide uses.
    #[arg(
        long,
        env = "MODEL_FLEET_DEFAULT_GATEWAY",
        default_value = "model-fleet-system/shared"
    )]
    default_gateway: String,
    /// Namespace for manifests without `metadata.namespace`.
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    #[command(flatten)]
    http_add_on: HttpAddOnArgs,
}

/// Entry point of `model-fleet-operator render`.
pub fn main(args: RenderArgs) -> anyhow::Result<()> {
    let mut texts = Vec::new();
    for file in &args.files {
        texts.push(if file.as_os_str() == "-" {
            std::io::read_to_string(std::io::stdin()).context("reading stdin")?
        } else {
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?
        });
    }
    let text = texts.join("\n---\n");
    let config = RenderConfig {
        default_gateway: Some(
            args.default_gateway
                .parse()
                .map_err(|e: String| anyhow::anyhow!("--default-gateway: {e}"))?,
        ),
        training_default_env: Vec::new(),
        http_add_on: args.http_add_on.add_on(),
    };
    let out = match render_manifests(&text, &args.namespace, &config) {
        Ok(out) => out,
        Err(message) => {
            // A user error, not a program failure: no backtrace, exit status 1.
            eprintln!("{message}");
            std::process::exit(1);
        }
    };
    print!("{out}");
    Ok(())
}
