//! The `crd` subcommand.

/// Arguments of `model-fleet-operator crd`.
#[derive(clap::Args, Debug)]
pub struct CrdArgs {}

/// Entry point of `model-fleet-operator crd`.
pub fn main(_args: CrdArgs) -> anyhow::Result<()> {
    anyhow::bail!("`crd` is not implemented yet")
}
