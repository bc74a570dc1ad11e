//! `model-fleet-check`: validation checks for Model Fleet workloads, one line per check (`PASS name: detail` or
//! `FAIL name: reason`). Exit codes: 0 every check passed, 1 a check failed, 2 the command line is wrong.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use model_fleet_check::gpu::{self, DeviceEnv, Expectation};
use model_fleet_check::openai::{self, Target};
use model_fleet_check::report::{self, Check};

/// Validation checks for Model Fleet workloads (docs/MODEL_VALIDATION.md). Prints one PASS or FAIL line per check;
/// exits 0 when every check passed, 1 when one failed, 2 on a command-line error.
#[derive(Parser, Debug)]
#[command(name = "model-fleet-check", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The GPUs of this pod: nvidia-smi sees them, as many as requested, each with the class's usable memory.
    Gpu(GpuArgs),
    /// An OpenAI-compatible endpoint: models list, chat and text completions, streaming, JSON errors.
    Openai(OpenaiArgs),
    /// Copies this (static) binary into DIR, e.g. an emptyDir shared with a container whose image has the libc that
    /// nvidia-smi needs (examples/validation/gpu-check.yaml). Prints the path; exit 1 when the copy fails.
    Install {
        /// Folder to copy model-fleet-check into.
        dir: std::path::PathBuf,
    },
}

#[derive(Args, Debug)]
struct GpuArgs {
    /// GPUs the pod requested (its nvidia.com/gpu limit).
    #[arg(long, env = "EXPECT_GPU_COUNT")]
    expect_count: u32,
    /// Minimum memory per GPU in MiB: the usable MiB of the capacity class (docs/GPU_CAPACITY.md).
    #[arg(
        long,
        env = "MIN_MEMORY_MIB",
        required_unless_present = "class",
        conflicts_with = "class"
    )]
    min_memory_mib: Option<u64>,
    /// A capacity class (16gi, 24gi, 40gi, 48gi, 80gi, 141gi, 180gi) instead of --min-memory-mib.
    #[arg(long, env = "GPU_CLASS", value_parser = class_mib)]
    class: Option<u64>,
    /// The nvidia-smi program to run.
    #[arg(long, default_value = "nvidia-smi")]
    nvidia_smi: String,
}

fn class_mib(name: &str) -> Result<u64, String> {
    gpu::usable_mib(name).ok_or_else(|| {
        let known: Vec<&str> = gpu::CLASS_USABLE_MIB.iter().map(|(n, _)| *n).collect();
        format!(
            "unknown capacity class {name:?} (known: {})",
            known.join(", ")
        )
    })
}

#[derive(Args, Debug)]
struct OpenaiArgs {
    /// Base URL of the server, with or without /v1 (e.g. http://qwen.models.svc.cluster.local).
    #[arg(long, env = "OPENAI_BASE_URL")]
    base_url: String,
    /// The served model name: /v1/models must list it, the requests use it.
    #[arg(long, env = "MODEL_NAME")]
    model: String,
    /// Sent as a Bearer token when set.
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Seconds to wait for GET /v1/models to answer 200 before checking (a server loading its model).
    #[arg(long, default_value_t = 0)]
    wait_seconds: u64,
    /// Seconds allowed for each request.
    #[arg(long, default_value_t = 120)]
    timeout_seconds: u64,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                report::ExitCode::Usage as u8
            } else {
                0
            });
        }
    };
    let checks: Vec<Check> = match cli.command {
        Command::Gpu(a) => {
            let min_memory_mib = a.min_memory_mib.or(a.class).unwrap_or_default();
            let expect = Expectation {
                count: a.expect_count,
                min_memory_mib,
            };
            gpu::evaluate(
                gpu::run_nvidia_smi(&a.nvidia_smi),
                &DeviceEnv::from_process(),
                expect,
            )
        }
        Command::Install { dir } => return install(&dir),
        Command::Openai(a) => {
            let target = Target {
                base_url: a.base_url,
                model: a.model,
                api_key: a.api_key.filter(|k| !k.is_empty()),
                request_timeout: Duration::from_secs(a.timeout_seconds),
            };
            openai::run(&target, Duration::from_secs(a.wait_seconds))
        }
    };
    for check in &checks {
        println!("{check}");
    }
    let code = report::exit_code(&checks);
    let failed = checks.iter().filter(|c| !c.passed()).count();
    println!("summary: {} PASS, {failed} FAIL", checks.len() - failed);
    ExitCode::from(code as u8)
}

fn install(dir: &std::path::Path) -> ExitCode {
    use std::os::unix::fs::PermissionsExt;
    let to = dir.join("model-fleet-check");
    let copied = std::env::current_exe()
        .and_then(|me| std::fs::copy(me, &to))
        .and_then(|_| std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)));
    match copied {
        Ok(()) => {
            println!("{}", to.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "error: cannot copy model-fleet-check to {}: {e}",
                to.display()
            );
            ExitCode::from(report::ExitCode::CheckFailed as u8)
        }
    }
}
