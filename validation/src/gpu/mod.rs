//! The GPU check: the devices a pod was given are visible to it, as many as it requested, each with at least the
//! usable memory of its capacity class (docs/GPU_CAPACITY.md).
//!
//! The facts come from `nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits` (the GPUs the
//! container runtime put in the container) and the environment variables `CUDA_VISIBLE_DEVICES` (the subset a CUDA
//! program may use) and `NVIDIA_VISIBLE_DEVICES` (what the NVIDIA container runtime was asked to inject). Parsing
//! and judging are pure functions ([`parse_query_gpu`], [`evaluate`]); only [`run_nvidia_smi`] does I/O.

mod classes;
mod smi;

pub use classes::{CLASS_USABLE_MIB, usable_mib};
pub use smi::{Gpu, ParseError, QUERY_ARGS, parse_query_gpu, run_nvidia_smi};

use crate::report::Check;

/// The device environment of the process, as read from its environment variables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceEnv {
    /// `CUDA_VISIBLE_DEVICES`, when set (an empty value hides every device from CUDA).
    pub cuda_visible_devices: Option<String>,
    /// `NVIDIA_VISIBLE_DEVICES`, when set (`all`, `none`, `void`, or a comma list of indices or UUIDs).
    pub nvidia_visible_devices: Option<String>,
}

impl DeviceEnv {
    /// Reads both variables from the process environment.
    pub fn from_process() -> Self {
        Self {
            cuda_visible_devices: std::env::var("CUDA_VISIBLE_DEVICES").ok(),
            nvidia_visible_devices: std::env::var("NVIDIA_VISIBLE_DEVICES").ok(),
        }
    }
}

/// What the check expects: the requested device count and the minimum memory per device in MiB (2^20 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expectation {
    /// Devices requested (the pod's `nvidia.com/gpu` limit).
    pub count: u32,
    /// Usable MiB of the capacity class the pod was placed for.
    pub min_memory_mib: u64,
}

/// The GPUs a CUDA program in this process would use: the `nvidia-smi` list filtered by `CUDA_VISIBLE_DEVICES`
/// with CUDA's rules (a comma list of indices or `GPU-`/`MIG-` UUIDs; the list ends at the first entry that names
/// no device; an empty value hides all). UUID entries cannot be matched against an index-only query, so they are
/// counted as given, without a memory figure.
pub fn cuda_visible(gpus: &[Gpu], cuda_visible_devices: Option<&str>) -> Vec<Option<Gpu>> {
    let Some(list) = cuda_visible_devices else {
        return gpus.iter().cloned().map(Some).collect();
    };
    let mut visible = Vec::new();
    for entry in list.split(',').map(str::trim) {
        if let Ok(index) = entry.parse::<u32>() {
            match gpus.iter().find(|g| g.index == index) {
                Some(gpu) if !visible.contains(&Some(gpu.clone())) => {
                    visible.push(Some(gpu.clone()))
                }
                _ => break,
            }
        } else if entry.starts_with("GPU-") || entry.starts_with("MIG-") {
            visible.push(None);
        } else {
            break;
        }
    }
    visible
}

/// Judges the facts: one check for `nvidia-smi` itself, one for the device count, one for the memory of every
/// device, and one for `NVIDIA_VISIBLE_DEVICES` when it is set. `smi` is the output of [`run_nvidia_smi`].
pub fn evaluate(smi: Result<String, String>, env: &DeviceEnv, expect: Expectation) -> Vec<Check> {
    let gpus = match smi
        .and_then(|out| parse_query_gpu(&out).map_err(|e| format!("cannot read its output: {e}")))
    {
        Ok(gpus) => gpus,
        Err(reason) => {
            return vec![Check::fail("nvidia-smi", reason)];
        }
    };
    let listed = gpus
        .iter()
        .map(Gpu::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    let mut checks = vec![Check::pass(
        "nvidia-smi",
        format!("{} GPU(s) visible: {listed}", gpus.len()),
    )];
    if let Some(check) = nvidia_visible_devices(env.nvidia_visible_devices.as_deref(), expect.count)
    {
        checks.push(check);
    }
    let visible = cuda_visible(&gpus, env.cuda_visible_devices.as_deref());
    let scope = match &env.cuda_visible_devices {
        Some(v) => format!(" (CUDA_VISIBLE_DEVICES={v:?})"),
        None => String::new(),
    };
    checks.push(if visible.len() == expect.count as usize {
        Check::pass(
            "device-count",
            format!(
                "{} device(s) visible to CUDA{scope}, {} requested",
                visible.len(),
                expect.count
            ),
        )
    } else {
        Check::fail(
            "device-count",
            format!(
                "{} device(s) visible to CUDA{scope}, {} requested",
                visible.len(),
                expect.count
            ),
        )
    });
    checks.push(memory(&visible, expect.min_memory_mib));
    checks
}

fn memory(visible: &[Option<Gpu>], min_mib: u64) -> Check {
    let known: Vec<&Gpu> = visible.iter().flatten().collect();
    if known.is_empty() {
        return Check::fail("memory", "no device with a memory figure to check");
    }
    let short: Vec<String> = known
        .iter()
        .filter(|g| g.memory_total_mib < min_mib)
        .map(|g| {
            format!(
                "GPU {} ({}) has {} MiB < {min_mib} MiB",
                g.index, g.name, g.memory_total_mib
            )
        })
        .collect();
    if short.is_empty() {
        let least = known
            .iter()
            .map(|g| g.memory_total_mib)
            .min()
            .unwrap_or_default();
        Check::pass(
            "memory",
            format!("every device has >= {min_mib} MiB (least: {least} MiB)"),
        )
    } else {
        Check::fail("memory", short.join("; "))
    }
}

fn nvidia_visible_devices(value: Option<&str>, expect: u32) -> Option<Check> {
    let value = value?.trim();
    let name = "nvidia-visible-devices";
    Some(match value {
        "all" => Check::pass(name, "NVIDIA_VISIBLE_DEVICES=all"),
        "" | "none" | "void" if expect > 0 => Check::fail(
            name,
            format!(
                "NVIDIA_VISIBLE_DEVICES={value:?}: the container runtime injects no GPU, {expect} requested"
            ),
        ),
        "" | "none" | "void" => Check::pass(
            name,
            format!("NVIDIA_VISIBLE_DEVICES={value:?}, none requested"),
        ),
        list => {
            let n = list.split(',').filter(|e| !e.trim().is_empty()).count();
            if n == expect as usize {
                Check::pass(name, format!("NVIDIA_VISIBLE_DEVICES lists {n} device(s)"))
            } else {
                Check::fail(
                    name,
                    format!("NVIDIA_VISIBLE_DEVICES lists {n} device(s), {expect} requested"),
                )
            }
        }
    })
}

#[cfg(test)]
mod tests;
