//! `terraform-provider-modelfleet`: the Terraform plugin binary.
//!
//! Terraform starts it with the go-plugin environment (magic cookie, protocol versions, client
//! certificate); `--debug` serves a plaintext instance for `TF_REATTACH_PROVIDERS`.

use clap::Parser;
use terraform_provider_modelfleet::plugin::{self, Mode, ServeError};
use terraform_provider_modelfleet::resources::Registry;
use terraform_provider_modelfleet::server::ProviderService;

/// Command line.
#[derive(Parser, Debug)]
#[command(
    version,
    about = "Terraform provider for Model Fleet (run by terraform, not by hand)"
)]
struct Args {
    /// Serve without TLS and print TF_REATTACH_PROVIDERS for attaching Terraform to this process.
    #[arg(long)]
    debug: bool,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    terraform_provider_modelfleet::logging::init(env);
    let mode = if args.debug {
        Mode::Debug
    } else {
        Mode::Managed
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let service = ProviderService::new(Registry::builtin());
    let result = runtime.block_on(plugin::serve(service, mode, env));
    // Do not wait for lingering tasks (open connections, polls): Terraform asked us to go.
    runtime.shutdown_background();
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(ServeError::Handshake(e)) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("terraform-provider-modelfleet: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
