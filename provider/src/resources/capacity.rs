//! The plan-time attributes inference and training share (DESIGN.md sections 4 and 6): `capacity_class`,
//! `per_gpu_memory_gib` and `kv_cache_per_gpu_mib`, from [`model_fleet_api::capacity::plan`] on the `gpu` block (the
//! operator's own implementation); null without `gpu.fit`; a fit no class can hold fails the plan on its attribute
//! path, and a fit with no headroom is a plan warning ([`fit_warnings`]).

use model_fleet_api::Gpu;
use model_fleet_api::capacity::{self, CapacityError, FitBudget};

use super::kind::{Computed, PlanInputs, Source};
use crate::diag::{AttrPath, Diagnostics};
use crate::value::{Number, Type, Value};

/// Smallest GPU capacity class that holds the fit.
pub const CAPACITY_CLASS: Computed = Computed {
    name: "capacity_class",
    ty: Type::String,
    description: "Smallest GPU capacity class that holds `gpu.fit` (e.g. `80gi`), computed at plan time; null \
                  without a fit.",
    source: Source::Plan {
        inputs: &["gpu"],
        value: capacity_class,
    },
};

/// Per-GPU memory budget in GiB, rounded up.
pub const PER_GPU_MEMORY_GIB: Computed = Computed {
    name: "per_gpu_memory_gib",
    ty: Type::Number,
    description: "Per-GPU memory budget of `gpu.fit` in GiB (2^30 bytes), rounded up, computed at plan time; \
                  null without a fit.",
    source: Source::Plan {
        inputs: &["gpu"],
        value: per_gpu_memory_gib,
    },
};

/// Per-GPU share of the KV caches sized from the model's shape, in MiB, rounded up.
pub const KV_CACHE_PER_GPU_MIB: Computed = Computed {
    name: "kv_cache_per_gpu_mib",
    ty: Type::Number,
    description: "Per-GPU share, in MiB (2^20 bytes, rounded up), of the KV caches that `gpu.fit.modules` size with \
                  `kv_cache.from_shape` (2 x layers x kv_heads x head_dim x dtype bytes x context_tokens x \
                  sequences, split over shards by KV head), computed at plan time; null when no module does.",
    source: Source::Plan {
        inputs: &["gpu"],
        value: kv_cache_per_gpu_mib,
    },
};

fn kv_cache_per_gpu_mib(inputs: &PlanInputs<'_>) -> Result<Value, Diagnostics> {
    Ok(budget(inputs)?
        .filter(|b| !b.kv_cache.is_empty())
        .map_or(Value::Null, |b| {
            let mib: i64 = b.kv_cache.iter().map(|kv| kv.per_gpu_mib()).sum();
            Value::Number(Number::from(mib))
        }))
}

/// The plan warnings of a known `gpu` block (JSON, spec layout): a fit with no headroom
/// ([`FitBudget::headroom_warning`], the operator's `FitWithoutHeadroom`), on `gpu.fit`. A block that does not
/// parse or plan gets none here: validation and the plan report it as an error.
pub fn fit_warnings(gpu: Option<&serde_json::Value>) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let warning = gpu
        .and_then(|g| serde_json::from_value::<Gpu>(g.clone()).ok())
        .and_then(|g| capacity::plan(&g).ok().flatten())
        .and_then(|b| b.headroom_warning());
    if let Some(warning) = warning {
        diags.push_warning(
            Some(AttrPath::attrs(&["gpu", "fit"])),
            "GPU fit without headroom",
            warning,
        );
    }
    diags
}

fn capacity_class(inputs: &PlanInputs<'_>) -> Result<Value, Diagnostics> {
    Ok(budget(inputs)?.map_or(Value::Null, |b| Value::string(b.class().name)))
}

fn per_gpu_memory_gib(inputs: &PlanInputs<'_>) -> Result<Value, Diagnostics> {
    Ok(budget(inputs)?.map_or(Value::Null, |b| {
        Value::Number(Number::from(b.per_gpu_memory_gib()))
    }))
}

/// The budget of the configured `gpu` block (`None` without one or without a fit).
fn budget(inputs: &PlanInputs<'_>) -> Result<Option<FitBudget>, Diagnostics> {
    let Some(gpu) = inputs.spec.get("gpu") else {
        return Ok(None);
    };
    let gpu: Gpu = serde_json::from_value(gpu.clone()).map_err(|e| {
        Diagnostics::error_at(
            AttrPath::attrs(&["gpu"]),
            "Invalid gpu block",
            e.to_string(),
        )
    })?;
    capacity::plan(&gpu).map_err(|e| fit_error(&e))
}

/// The plan-time diagnostic of a fit that cannot be placed, on the attribute it is about.
pub fn fit_error(err: &CapacityError) -> Diagnostics {
    let path = match err {
        CapacityError::BadNumber {
            index: Some(index),
            field,
            ..
        } => AttrPath::attrs(&["gpu", "fit", "modules"])
            .index(*index)
            .attr(if *field == "kvCacheGiB" {
                "kv_cache_gib"
            } else {
                "weights_gib"
            }),
        CapacityError::BadNumber { index: None, .. } => {
            AttrPath::attrs(&["gpu", "fit", "runtime_gib"])
        }
        CapacityError::NoShards(_) => AttrPath::attrs(&["gpu", "fit", "shards"]),
        CapacityError::KvShape { index, .. } => AttrPath::attrs(&["gpu", "fit", "modules"])
            .index(*index)
            .attr("kv_cache")
            .attr("from_shape"),
        CapacityError::KvShards { .. } => AttrPath::attrs(&["gpu", "count"]),
        CapacityError::TooBig { .. } | CapacityError::Overflow => AttrPath::attrs(&["gpu", "fit"]),
    };
    Diagnostics::error_at(path, "GPU fit cannot be placed", err.to_string())
}
