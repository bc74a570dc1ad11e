//! The KV cache of a fit module from the model's attention shape (`gpu.fit.modules[].kvCache.fromShape`), and how
//! tensor parallelism splits it over GPUs (DESIGN.md section 4).
//!
//! Bytes = `2 x layers x kvHeads x headDim x dtypeBytes x contextTokens x sequences`: one key and one value vector of
//! `headDim` elements per layer, KV head and cached token (the memory model of the PagedAttention paper, Kwon et al.
//! 2023, section 2, and of vLLM's cache sizing).
//!
//! Under tensor parallelism each GPU holds whole KV heads: with `shards <= kvHeads` every GPU holds
//! `kvHeads / shards` of them (per-GPU KV = total / shards); with more shards than KV heads each head is replicated
//! on `shards / kvHeads` GPUs (per-GPU KV = total / kvHeads, not total / shards), as vLLM and Megatron do for
//! grouped-query attention. Shard counts that neither divide nor are divided by `kvHeads`, or that do not divide
//! `attentionHeads` when it is given, are refused with the valid counts listed. Pure: no I/O.

use crate::ModelShape;
use crate::exact::Exact;

/// Bytes per GiB (2^30).
pub const BYTES_PER_GIB: i128 = 1 << 30;

/// Largest KV cache accepted, in bytes (2^50, 1 PiB: far beyond every class times every shard count; keeps the
/// exact budget arithmetic inside `i128`).
pub const MAX_BYTES: i128 = 1 << 50;

/// Most shards listed as valid (the API's bound on `gpu.fit.shards`).
pub const MAX_SHARDS: u32 = 64;

/// A KV cache from shape, resolved: its exact size and the heads that decide how it splits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapedKv {
    /// Total bytes for all sequences, on one copy of the model.
    pub bytes: i128,
    /// Key/value heads per layer.
    pub kv_heads: u32,
    /// Query heads per layer, when given (tensor parallelism must divide them as well).
    pub attention_heads: Option<u32>,
}

/// Why a shape gives no size (the CRD's CEL rules refuse these first; render and the provider report them again).
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShapeError {
    /// Neither `headDim` nor both `hiddenSize` and `attentionHeads`, or `hiddenSize` not a multiple of them.
    #[error(
        "set headDim, or hiddenSize and attentionHeads with hiddenSize a multiple of attentionHeads (headDim = hiddenSize / attentionHeads)"
    )]
    NoHeadDim,
    /// Both or neither of `dtype` and `dtypeBytes`.
    #[error("set exactly one of dtype, dtypeBytes")]
    Dtype,
    /// The product exceeds [`MAX_BYTES`].
    #[error(
        "the KV cache of this shape exceeds 1 PiB (2^50 bytes): check contextTokens and sequences"
    )]
    TooLarge,
    /// A count below 1.
    #[error("{0} must be at least 1")]
    NotPositive(&'static str),
}

/// Resolves `shape`: `headDim` (given, else `hiddenSize / attentionHeads`), bytes per element, exact bytes.
pub fn shaped_kv(shape: &ModelShape) -> Result<ShapedKv, ShapeError> {
    let positive = |value: i32, field: &'static str| {
        u32::try_from(value)
            .ok()
            .filter(|v| *v >= 1)
            .ok_or(ShapeError::NotPositive(field))
    };
    let layers = positive(shape.layers, "layers")?;
    let kv_heads = positive(shape.kv_heads, "kvHeads")?;
    let attention_heads = shape
        .attention_heads
        .map(|h| positive(h, "attentionHeads"))
        .transpose()?;
    let head_dim = match (shape.head_dim, shape.hidden_size, attention_heads) {
        (Some(dim), _, _) => positive(dim, "headDim")?,
        (None, Some(hidden), Some(heads)) => {
            let hidden = positive(hidden, "hiddenSize")?;
            if !hidden.is_multiple_of(heads) {
                return Err(ShapeError::NoHeadDim);
            }
            hidden / heads
        }
        _ => return Err(ShapeError::NoHeadDim),
    };
    let dtype_bytes = match (shape.dtype, shape.dtype_bytes) {
        (Some(dtype), None) => dtype.bytes(),
        (None, Some(bytes)) => positive(bytes, "dtypeBytes")?,
        _ => return Err(ShapeError::Dtype),
    };
    let context = positive(shape.context_tokens, "contextTokens")?;
    let sequences = shape
        .sequences
        .map_or(Ok(1), |s| positive(s, "sequences"))?;
    let bytes = [layers, kv_heads, head_dim, dtype_bytes, context, sequences]
        .into_iter()
        .try_fold(2i128, |acc, n| acc.checked_mul(i128::from(n)))
        .filter(|bytes| *bytes <= MAX_BYTES)
        .ok_or(ShapeError::TooLarge)?;
    Ok(ShapedKv {
        bytes,
        kv_heads,
        attention_heads,
    })
}

impl ShapedKv {
    /// The total in GiB, exact.
    pub fn gib(&self) -> Exact {
        Exact::new(self.bytes, BYTES_PER_GIB)
    }

    /// How many ways the cache is split over `shards` GPUs: `shards` when it divides `kvHeads`, `kvHeads` when it
    /// is a multiple of them (each head replicated); `None` for a count tensor parallelism cannot use.
    pub fn split(&self, shards: u32) -> Option<u32> {
        let heads_ok = self
            .attention_heads
            .is_none_or(|h| h.is_multiple_of(shards));
        if shards == 0 || !heads_ok {
            None
        } else if shards <= self.kv_heads {
            self.kv_heads.is_multiple_of(shards).then_some(shards)
        } else {
            shards
                .is_multiple_of(self.kv_heads)
                .then_some(self.kv_heads)
        }
    }

    /// Per-GPU bytes over `shards`, exact; `None` when [`ShapedKv::split`] refuses the count (the division itself
    /// cannot overflow: `bytes` is at most [`MAX_BYTES`]).
    pub fn per_gpu_bytes(&self, shards: u32) -> Option<Exact> {
        let ways = self.split(shards)?;
        Exact::int(self.bytes).checked_div(Exact::int(i128::from(ways)))
    }

    /// Every shard count from 1 to [`MAX_SHARDS`] that [`ShapedKv::split`] accepts, ascending.
    pub fn valid_shards(&self) -> Vec<u32> {
        (1..=MAX_SHARDS)
            .filter(|&s| self.split(s).is_some())
            .collect()
    }
}

#[cfg(test)]
mod tests;
