//! The `crd` subcommand: prints the three CustomResourceDefinitions generated from the Rust types
//! (multi-document YAML), or writes one file per CRD into `--out-dir` (how the chart's copy under
//! `charts/model-fleet-operator/crds/` is regenerated).

use std::path::PathBuf;

use anyhow::Context;
use model_fleet_api as api;

/// Arguments of `model-fleet-operator crd`.
#[derive(clap::Args, Debug)]
pub struct CrdArgs {
    /// Write `<plural>.modelfleet.io.yaml` files into this directory instead of printing.
    #[arg(long)]
    out_dir: Option<PathBuf>,
}

/// Entry point of `model-fleet-operator crd`.
pub fn main(args: CrdArgs) -> anyhow::Result<()> {
    let crds = api::crds();
    match args.out_dir {
        None => {
            let docs: Vec<String> = crds.iter().map(api::crd_yaml).collect();
            print!("---\n{}", docs.join("---\n"));
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            for crd in &crds {
                let path = dir.join(api::crd_file_name(crd));
                std::fs::write(&path, api::crd_yaml(crd))
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
        }
    }
    Ok(())
}
