//! One module per subcommand; each exposes its clap `Args` struct and a `main`.

pub mod crd;
pub mod render;
pub mod run;
