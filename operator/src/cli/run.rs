//! The `run` subcommand.

/// Arguments of `model-fleet-operator run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {}

/// Entry point of `model-fleet-operator run`.
pub fn main(_args: RunArgs) -> anyhow::Result<()> {
    anyhow::bail!("`run` is not implemented yet")
}
