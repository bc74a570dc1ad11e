//! `model-fleet-operator` command line: `run` (the controllers), `crd` (print the CRDs) and
//! `render -f FILE` (print the children a manifest would produce, no cluster needed).

use clap::{Parser, Subcommand};

mod cli;

/// Model Fleet operator: reconciles InferenceService, TrainingRun and Dataset resources.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the controllers against a cluster (in cluster, or out of cluster with --kubeconfig).
    Run(cli::run::RunArgs),
    /// Print the three CustomResourceDefinitions as multi-document YAML.
    Crd(cli::crd::CrdArgs),
    /// Print the Kubernetes children every manifest in a file would produce, with no cluster.
    Render(cli::render::RenderArgs),
    /// Run the Slack bot (`/fleet`, mentions, DMs) over Socket Mode; credentials from SLACK_* variables.
    Slack(cli::slack::SlackArgs),
}

/// Runs the subcommand. A failure prints one line, `error: ` and the cause chain (`{:#}`), and exits 1: never a
/// backtrace, even with `RUST_BACKTRACE` set, so the cause (say, the API server refusing the Lease) is the last line
/// a crash-looping pod's log shows.
fn main() -> std::process::ExitCode {
    let result = match Cli::parse().command {
        Command::Run(args) => cli::run::main(args),
        Command::Crd(args) => cli::crd::main(args),
        Command::Render(args) => cli::render::main(args),
        Command::Slack(args) => cli::slack::main(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
