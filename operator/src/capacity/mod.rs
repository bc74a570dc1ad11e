//! The GPU fit budget and capacity classes (DESIGN.md section 4), shared by the operator (render)
//! and the Terraform provider (plan-time `capacity_class` and `per_gpu_memory_gib`).
//!
//! Per-GPU memory = (sum of sharded modules / shards + sum of replicated modules + runtime)
//! x (1 + margin/100), computed exactly ([`Exact`]), compared in MiB with each class's usable
//! memory; the smallest class that fits is chosen. Pure: no I/O.
//!
//! Entry points: [`plan`] (from the API's `gpu` block), [`budget`] (from plain inputs) and
//! [`placement`] (scheduling terms for a pod).

mod classes;
mod exact;
mod placement;

pub use classes::{CLASS_LABEL, CLASSES, CapacityClass, PRODUCT_LABEL, class_named, largest};
pub use exact::Exact;
pub use placement::{DEFAULT_GPU_RESOURCE, GPU_TAINT_KEY, GpuPlacement, placement};

use crate::api::{Fit, Gpu, Placement};

/// Default per-device runtime overhead in GiB (DESIGN.md section 3 defaults).
pub const DEFAULT_RUNTIME_GIB: i128 = 2;
/// Default safety margin in percent.
pub const DEFAULT_MARGIN_PERCENT: u32 = 10;
/// MiB per GiB.
pub const MIB_PER_GIB: i128 = 1024;

/// One memory consumer, sizes in GiB (2^30 bytes), exact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleInput {
    /// Label for messages.
    pub name: String,
    /// Weights plus KV cache, in GiB.
    pub gib: Exact,
    /// Sharded or replicated.
    pub placement: Placement,
}

/// Inputs of the budget with every default applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetInput {
    /// Memory consumers.
    pub modules: Vec<ModuleInput>,
    /// GPUs the sharded modules are split over (>= 1).
    pub shards: u32,
    /// Per-device runtime overhead in GiB (added on every GPU, never divided by shards).
    pub runtime_gib: Exact,
    /// Margin in whole percent, 0-100.
    pub margin_percent: u32,
}

/// The result: the exact per-GPU budget and the classes it fits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FitBudget {
    /// Exact per-GPU memory in GiB, e.g. 50.6 for case O-10.
    pub per_gpu_gib: Exact,
    /// Every class whose usable memory is at least the budget, smallest first (never empty).
    pub fitting: Vec<&'static CapacityClass>,
    /// The inputs after defaults (shards, runtime, margin), for status `effective` values.
    pub input: BudgetInput,
}

impl FitBudget {
    /// Smallest class that fits, e.g. `80gi`.
    pub fn class(&self) -> &'static CapacityClass {
        self.fitting[0]
    }

    /// The budget rounded up to a whole GiB, as shown to users (`status.perGpuMemoryGiB`).
    pub fn per_gpu_memory_gib(&self) -> i64 {
        i64::try_from(self.per_gpu_gib.ceil()).unwrap_or(i64::MAX)
    }

    /// The budget in MiB, exact.
    pub fn per_gpu_mib(&self) -> Exact {
        self.per_gpu_gib.times(Exact::int(MIB_PER_GIB))
    }
}

/// Why no budget could be computed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CapacityError {
    /// The budget exceeds every class. `min_shards` is the smallest shard count that would fit
    /// the largest class, `None` when replicated modules and runtime alone are too big.
    #[error("{}", too_big_message(*per_gpu_gib_ceil, *shards, *min_shards))]
    TooBig {
        /// Budget rounded up, GiB.
        per_gpu_gib_ceil: i64,
        /// Shards used.
        shards: u32,
        /// Shards that would fit the largest class.
        min_shards: Option<u32>,
    },
    /// A size is not a non-negative decimal number.
    #[error("gpu.fit.modules[{index}]: {field} must be a non-negative decimal number of GiB")]
    BadNumber {
        /// Module index (or `usize::MAX` for `runtimeGiB`).
        index: usize,
        /// JSON field name.
        field: &'static str,
    },
    /// `shards` (or `gpu.count` standing in for it) is below 1.
    #[error("gpu.fit.shards: must be at least 1 (absent means gpu.count, which is {0})")]
    NoShards(i32),
}

fn too_big_message(gib: i64, shards: u32, min_shards: Option<u32>) -> String {
    let top = largest();
    let head = format!(
        "gpu.fit: the per-GPU budget of {gib} GiB over {shards} shard(s) exceeds the largest class {} ({} MiB usable)",
        top.name, top.usable_mib
    );
    match min_shards {
        Some(n) => {
            format!("{head}: shard over at least {n} GPUs (gpu.count and gpu.fit.shards) to fit")
        }
        None => format!(
            "{head}: replicated modules plus runtime alone exceed it, so no number of shards fits; shrink them"
        ),
    }
}

/// Exact per-GPU budget in GiB for `input` (no class lookup).
pub fn per_gpu_gib(input: &BudgetInput) -> Exact {
    let shards = Exact::int(i128::from(input.shards.max(1)));
    let (sharded, replicated) =
        input
            .modules
            .iter()
            .fold((Exact::ZERO, Exact::ZERO), |(s, r), m| match m.placement {
                Placement::Sharded => (s.plus(m.gib), r),
                Placement::Replicated => (s, r.plus(m.gib)),
            });
    let per_device = sharded
        .over(shards)
        .expect("shards >= 1")
        .plus(replicated)
        .plus(input.runtime_gib);
    per_device.times(Exact::new(i128::from(100 + input.margin_percent), 100))
}

/// Whether `gib` (exact, GiB) fits `class`: budget in MiB <= usable MiB, exactly.
pub fn fits(gib: Exact, class: &CapacityClass) -> bool {
    gib.times(Exact::int(MIB_PER_GIB)) <= Exact::int(i128::from(class.usable_mib))
}

/// The budget and the classes it fits, or [`CapacityError::TooBig`] saying how many shards would
/// fit the largest class.
pub fn budget(input: BudgetInput) -> Result<FitBudget, CapacityError> {
    let gib = per_gpu_gib(&input);
    let fitting: Vec<_> = CLASSES.iter().filter(|c| fits(gib, c)).collect();
    if fitting.is_empty() {
        let min_shards = (input.shards.max(1)..=1024).find(|&s| {
            let trial = BudgetInput {
                shards: s,
                ..input.clone()
            };
            fits(per_gpu_gib(&trial), largest())
        });
        return Err(CapacityError::TooBig {
            per_gpu_gib_ceil: i64::try_from(gib.ceil()).unwrap_or(i64::MAX),
            shards: input.shards,
            min_shards,
        });
    }
    Ok(FitBudget {
        per_gpu_gib: gib,
        fitting,
        input,
    })
}

/// Applies DESIGN.md defaults to an API `fit` (shards = `gpu_count`, runtime 2 GiB, margin 10%).
pub fn input_from_fit(fit: &Fit, gpu_count: i32) -> Result<BudgetInput, CapacityError> {
    let modules = fit
        .modules
        .iter()
        .enumerate()
        .map(|(index, m)| {
            let weights = Exact::from_json(&m.weights_gib).ok_or(CapacityError::BadNumber {
                index,
                field: "weightsGiB",
            })?;
            let kv = match &m.kv_cache_gib {
                Some(n) => Exact::from_json(n).ok_or(CapacityError::BadNumber {
                    index,
                    field: "kvCacheGiB",
                })?,
                None => Exact::ZERO,
            };
            Ok(ModuleInput {
                name: m.name.clone(),
                gib: weights.plus(kv),
                placement: m.placement,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let shards = fit.shards.unwrap_or(gpu_count);
    let shards = u32::try_from(shards)
        .ok()
        .filter(|s| *s >= 1)
        .ok_or(CapacityError::NoShards(gpu_count))?;
    let runtime_gib = match &fit.runtime_gib {
        Some(n) => Exact::from_json(n).ok_or(CapacityError::BadNumber {
            index: usize::MAX,
            field: "runtimeGiB",
        })?,
        None => Exact::int(DEFAULT_RUNTIME_GIB),
    };
    let margin_percent = fit
        .margin_percent
        .map_or(DEFAULT_MARGIN_PERCENT, |m| m.clamp(0, 100) as u32);
    Ok(BudgetInput {
        modules,
        shards,
        runtime_gib,
        margin_percent,
    })
}

/// Plan-time entry point for the operator and the provider: the budget of a `gpu` block, `None`
/// when it has no `fit`.
pub fn plan(gpu: &Gpu) -> Result<Option<FitBudget>, CapacityError> {
    match &gpu.fit {
        None => Ok(None),
        Some(fit) => budget(input_from_fit(fit, gpu.count)?).map(Some),
    }
}
