//! The `render` subcommand.

/// Arguments of `model-fleet-operator render`.
#[derive(clap::Args, Debug)]
pub struct RenderArgs {}

/// Entry point of `model-fleet-operator render`.
pub fn main(_args: RenderArgs) -> anyhow::Result<()> {
    anyhow::bail!("`render` is not implemented yet")
}
