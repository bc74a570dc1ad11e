//! The GPU fit budget and capacity classes (DESIGN.md section 4), shared by the operator (render)
//! and the Terraform provider (plan-time `capacity_class` and `per_gpu_memory_gib`).
//!
//! Per-GPU memory = (sum of sharded modules / shards + sum of replicated modules + runtime)
//! x (1 + margin/100), computed exactly ([`Exact`]), compared in MiB with each class's usable
//! memory; the smallest class that fits is chosen. A KV cache given by the model's shape
//! ([`kv`]) is split by KV head rather than by shard. Pure: no I/O.
//!
//! Entry points: [`plan`] (from the API's `gpu` block), [`budget`] (from plain inputs) and
//! [`placement`] (scheduling terms for a pod).

mod classes;
pub mod kv;
mod placement;

pub use crate::exact::Exact;
pub use classes::{CLASS_LABEL, CLASSES, CapacityClass, PRODUCT_LABEL, class_named, largest};
pub use kv::{ShapeError, ShapedKv};
pub use placement::{DEFAULT_GPU_RESOURCE, GPU_TAINT_KEY, GpuPlacement, placement};

use crate::{Fit, Gpu, Placement};

/// Default per-device runtime overhead in GiB (DESIGN.md section 3 defaults).
pub const DEFAULT_RUNTIME_GIB: i128 = 2;
/// Default safety margin in percent.
pub const DEFAULT_MARGIN_PERCENT: u32 = 10;
/// MiB per GiB.
pub const MIB_PER_GIB: i128 = 1024;
/// Largest `weightsGiB` and `kvCacheGiB` of one fit module, in GiB (the CRD's bound on both fields).
pub const MAX_MODULE_GIB: i128 = 65536;
/// Largest `runtimeGiB`, in GiB (the CRD's bound on the field).
pub const MAX_RUNTIME_GIB: i128 = 1024;

/// One memory consumer, sizes in GiB (2^30 bytes), exact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleInput {
    /// Label for messages.
    pub name: String,
    /// Weights plus a KV cache given in GiB (`kvCacheGiB`), in GiB; split over shards by `placement`.
    pub gib: Exact,
    /// Sharded or replicated.
    pub placement: Placement,
    /// A KV cache given by the model's shape (`kvCache.fromShape`): sharded modules split it by KV head
    /// ([`ShapedKv::split`]), replicated ones hold all of it on every GPU.
    pub kv: Option<ShapedKv>,
}

impl ModuleInput {
    /// This module's exact share of one GPU in GiB over `shards`; `None` when it does not fit `i128` (inputs
    /// within [`MAX_MODULE_GIB`] and [`kv::MAX_SHARDS`] always do). A shard count the KV heads cannot use (refused
    /// by [`budget`] first) splits the cache over `min(shards, kvHeads)`.
    pub fn per_gpu_gib(&self, shards: u32) -> Option<Exact> {
        let shards = shards.max(1);
        let kv = self.kv.map_or(Exact::ZERO, |kv| kv.gib());
        match self.placement {
            Placement::Replicated => self.gib.checked_add(kv),
            Placement::Sharded => {
                let ways = self.kv.map_or(1, |kv| {
                    kv.split(shards).unwrap_or(shards.min(kv.kv_heads).max(1))
                });
                let weights = self.gib.checked_div(Exact::int(i128::from(shards)))?;
                weights.checked_add(kv.checked_div(Exact::int(i128::from(ways)))?)
            }
        }
    }
}

/// A KV cache from shape as the budget used it (status `kvCache`, the provider's `kv_cache`, `render -f`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KvCacheFact {
    /// The module's name.
    pub module: String,
    /// Exact total bytes (all sequences, one copy of the model).
    pub bytes: i128,
    /// Exact bytes on each GPU.
    pub per_gpu_bytes: Exact,
}

impl KvCacheFact {
    /// Total in MiB (2^20 bytes), rounded up.
    pub fn mib(&self) -> i64 {
        i64::try_from(Exact::new(self.bytes, 1 << 20).ceil()).unwrap_or(i64::MAX)
    }

    /// Per-GPU share in MiB (2^20 bytes), rounded up.
    pub fn per_gpu_mib(&self) -> i64 {
        let mib = self.per_gpu_bytes.checked_div(Exact::int(1 << 20));
        mib.and_then(|mib| i64::try_from(mib.ceil()).ok())
            .unwrap_or(i64::MAX)
    }
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
    /// Each KV cache given by shape, in module order.
    pub kv_cache: Vec<KvCacheFact>,
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

    /// The warning for a budget with no headroom at all (`runtimeGiB: 0` and `marginPercent: 0`, both written out:
    /// absent means 2 GiB and 10%): valid, but the CUDA context, activations and allocator fragmentation then have
    /// no room, which is almost never what was meant. `None` otherwise. The operator reports it as
    /// `Degraded=True, FitWithoutHeadroom`; the provider as a plan warning on `gpu.fit`.
    pub fn headroom_warning(&self) -> Option<String> {
        (self.input.runtime_gib == Exact::ZERO && self.input.margin_percent == 0).then(|| {
            format!(
                "gpu.fit: runtimeGiB 0 and marginPercent 0 leave no room for the CUDA context, activations or \
                 fragmentation, so the {per_gpu} GiB per GPU are all weights and KV cache and the server is likely to \
                 run out of GPU memory: set runtimeGiB (default {DEFAULT_RUNTIME_GIB}) or marginPercent (default \
                 {DEFAULT_MARGIN_PERCENT})",
                per_gpu = self.per_gpu_gib
            )
        })
    }
}

/// Why no budget could be computed.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum CapacityError {
    /// The budget exceeds every class. `min_shards` is the smallest shard count up to [`kv::MAX_SHARDS`] (the
    /// API's bound on `gpu.fit.shards`) that would fit the largest class, `None` when none does.
    #[error("{}", too_big_message(*per_gpu_gib_ceil, *shards, *min_shards))]
    TooBig {
        /// Budget rounded up, GiB.
        per_gpu_gib_ceil: i64,
        /// Shards used.
        shards: u32,
        /// Shards that would fit the largest class, at most [`kv::MAX_SHARDS`].
        min_shards: Option<u32>,
    },
    /// A size is not a non-negative decimal number of at most `max` GiB with at most 18 fraction digits (the CRD
    /// bounds these; `render -f` and the provider's plan check them here).
    #[error(
        "{}: must be a non-negative decimal number of GiB, at most {max}, with at most {} fraction digits",
        number_path(*index, field), crate::exact::MAX_FRACTION_DIGITS
    )]
    BadNumber {
        /// Module index, `None` for `gpu.fit.runtimeGiB`.
        index: Option<usize>,
        /// JSON field name (`weightsGiB`, `kvCacheGiB`, `runtimeGiB`).
        field: &'static str,
        /// The field's bound in GiB ([`MAX_MODULE_GIB`] or [`MAX_RUNTIME_GIB`]).
        max: i128,
    },
    /// `shards` (or `gpu.count` standing in for it) is outside 1 to [`kv::MAX_SHARDS`].
    #[error(
        "gpu.fit.shards: must be 1 to {max} (absent means gpu.count, which is {0})",
        max = kv::MAX_SHARDS
    )]
    NoShards(i32),
    /// The exact budget does not fit `i128` arithmetic. Inputs within the bounds [`input_from_fit`] checks never
    /// get here; [`budget`] called directly with larger ones does, instead of panicking.
    #[error(
        "gpu.fit: the per-GPU budget is too large to compute exactly: keep each module within {MAX_MODULE_GIB} GiB, \
         runtimeGiB within {MAX_RUNTIME_GIB} and gpu.fit.shards within {}",
        kv::MAX_SHARDS
    )]
    Overflow,
    /// A `kvCache.fromShape` that gives no size.
    #[error("gpu.fit.modules[{index}].kvCache.fromShape: {error}")]
    KvShape {
        /// Module index.
        index: usize,
        /// What is missing.
        error: ShapeError,
    },
    /// Tensor parallelism cannot split this module's heads over the shard count.
    #[error("{}", kv_shards_message(*index, module, *shards, kv, valid))]
    KvShards {
        /// Module index.
        index: usize,
        /// Module name.
        module: String,
        /// Shards asked for.
        shards: u32,
        /// The shape's heads.
        kv: ShapedKv,
        /// Every shard count from 1 to 64 that would work, ascending.
        valid: Vec<u32>,
    },
}

fn kv_shards_message(
    index: usize,
    module: &str,
    shards: u32,
    kv: &ShapedKv,
    valid: &[u32],
) -> String {
    let heads = match kv.attention_heads {
        Some(h) => format!("{} KV heads and {h} attention heads", kv.kv_heads),
        None => format!("{} KV heads", kv.kv_heads),
    };
    let valid: Vec<String> = valid.iter().map(u32::to_string).collect();
    format!(
        "gpu.fit.modules[{index}] ({module}): {shards} shard(s) cannot split {heads}: tensor parallelism needs a \
         shard count that divides the KV heads or is a multiple of them (and divides the attention heads); valid \
         counts: {}; set gpu.count (and gpu.fit.shards) to one of them",
        valid.join(", ")
    )
}

/// The API path of a size field: `gpu.fit.modules[i].weightsGiB` or `gpu.fit.runtimeGiB`.
fn number_path(index: Option<usize>, field: &str) -> String {
    match index {
        Some(i) => format!("gpu.fit.modules[{i}].{field}"),
        None => format!("gpu.fit.{field}"),
    }
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
            "{head}, and no shard count up to {max} (the most gpu.fit.shards allows) fits it: replicated modules, \
             the runtime and each GPU's share of the KV heads stay on every GPU; shrink the modules or the runtime",
            max = kv::MAX_SHARDS
        ),
    }
}

/// Exact per-GPU budget in GiB for `input` (no class lookup); `None` when it does not fit `i128`, which inputs
/// within the API's bounds never reach.
pub fn per_gpu_gib(input: &BudgetInput) -> Option<Exact> {
    let per_device = input.modules.iter().try_fold(input.runtime_gib, |sum, m| {
        sum.checked_add(m.per_gpu_gib(input.shards)?)
    })?;
    per_device.checked_mul(Exact::new(i128::from(100 + input.margin_percent), 100))
}

/// The first sharded module whose KV heads cannot be split over `shards`, as [`CapacityError::KvShards`].
fn unsplittable(input: &BudgetInput, shards: u32) -> Option<CapacityError> {
    input.modules.iter().enumerate().find_map(|(index, m)| {
        let kv = m.kv.filter(|_| m.placement == Placement::Sharded)?;
        kv.split(shards).is_none().then(|| CapacityError::KvShards {
            index,
            module: m.name.clone(),
            shards,
            kv,
            valid: kv.valid_shards(),
        })
    })
}

/// Whether `gib` (exact, GiB) fits `class`: budget <= usable MiB / 1024, exactly (a division of constants, so no
/// budget is too large to compare).
pub fn fits(gib: Exact, class: &CapacityClass) -> bool {
    gib <= Exact::new(i128::from(class.usable_mib), MIB_PER_GIB)
}

/// The budget and the classes it fits, or [`CapacityError::TooBig`] saying how many shards would
/// fit the largest class.
pub fn budget(input: BudgetInput) -> Result<FitBudget, CapacityError> {
    if let Some(refusal) = unsplittable(&input, input.shards) {
        return Err(refusal);
    }
    let gib = per_gpu_gib(&input).ok_or(CapacityError::Overflow)?;
    let fitting: Vec<_> = CLASSES.iter().filter(|c| fits(gib, c)).collect();
    if fitting.is_empty() {
        let min_shards = (input.shards.max(1)..=kv::MAX_SHARDS).find(|&s| {
            let trial = BudgetInput {
                shards: s,
                ..input.clone()
            };
            unsplittable(&trial, s).is_none()
                && per_gpu_gib(&trial).is_some_and(|gib| fits(gib, largest()))
        });
        return Err(CapacityError::TooBig {
            per_gpu_gib_ceil: i64::try_from(gib.ceil()).unwrap_or(i64::MAX),
            shards: input.shards,
            min_shards,
        });
    }
    let kv_cache = input
        .modules
        .iter()
        .filter_map(|m| {
            let kv = m.kv?;
            let per_gpu_bytes = match m.placement {
                Placement::Replicated => Exact::int(kv.bytes),
                Placement::Sharded => kv.per_gpu_bytes(input.shards)?,
            };
            Some(KvCacheFact {
                module: m.name.clone(),
                bytes: kv.bytes,
                per_gpu_bytes,
            })
        })
        .collect();
    Ok(FitBudget {
        per_gpu_gib: gib,
        fitting,
        input,
        kv_cache,
    })
}

/// Applies DESIGN.md defaults to an API `fit` (shards = `gpu_count`, runtime 2 GiB, margin 10%).
pub fn input_from_fit(fit: &Fit, gpu_count: i32) -> Result<BudgetInput, CapacityError> {
    let modules = fit
        .modules
        .iter()
        .enumerate()
        .map(|(index, m)| {
            let weights = size(&m.weights_gib, Some(index), "weightsGiB", MAX_MODULE_GIB)?;
            let kv = match &m.kv_cache_gib {
                Some(n) => size(n, Some(index), "kvCacheGiB", MAX_MODULE_GIB)?,
                None => Exact::ZERO,
            };
            let shaped = m
                .kv_cache
                .as_ref()
                .map(|c| kv::shaped_kv(&c.from_shape))
                .transpose()
                .map_err(|error| CapacityError::KvShape { index, error })?;
            Ok(ModuleInput {
                name: m.name.clone(),
                gib: weights.checked_add(kv).ok_or(CapacityError::Overflow)?,
                placement: m.placement,
                kv: shaped,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let shards = fit.shards.unwrap_or(gpu_count);
    let shards = u32::try_from(shards)
        .ok()
        .filter(|s| (1..=kv::MAX_SHARDS).contains(s))
        .ok_or(CapacityError::NoShards(gpu_count))?;
    let runtime_gib = match &fit.runtime_gib {
        Some(n) => size(n, None, "runtimeGiB", MAX_RUNTIME_GIB)?,
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

/// A size field read exactly and checked against its bound, else [`CapacityError::BadNumber`] naming it.
fn size(
    n: &serde_json::Number,
    index: Option<usize>,
    field: &'static str,
    max: i128,
) -> Result<Exact, CapacityError> {
    Exact::from_json(n)
        .filter(|gib| *gib <= Exact::int(max))
        .ok_or(CapacityError::BadNumber { index, field, max })
}

/// Plan-time entry point for the operator and the provider: the budget of a `gpu` block, `None`
/// when it has no `fit`.
pub fn plan(gpu: &Gpu) -> Result<Option<FitBudget>, CapacityError> {
    match &gpu.fit {
        None => Ok(None),
        Some(fit) => budget(input_from_fit(fit, gpu.count)?).map(Some),
    }
}
