//! One module per subcommand; each exposes its clap `Args` struct and a `main`.

pub mod crd;
pub mod http_add_on;
// The CLI reference page's generator; its only caller is its staleness test (`make docs-generate`).
#[cfg(test)]
pub mod reference;
pub mod render;
pub mod run;
pub mod slack;
