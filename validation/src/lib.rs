//! Validation checks for Model Fleet workloads, run as the `model-fleet-check` binary in a Job:
//!
//! - [`gpu`]: the GPUs a pod was given are visible (`nvidia-smi`), as many as requested, each with at least the
//!   usable memory of the capacity class it was placed for;
//! - [`openai`]: an inference endpoint speaks the OpenAI API: models list, chat and text completions with the
//!   schema's required fields, server-sent-event streaming, JSON errors for bad requests.
//!
//! Each check yields a [`report::Check`]; the binary prints one line per check and exits non-zero when any failed
//! (exit codes in [`report::ExitCode`]).

pub mod gpu;
pub mod openai;
pub mod report;
