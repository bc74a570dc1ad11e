//! Worked numbers from published model configs (each `config.json` on the Hugging Face Hub, field names in the
//! comments), checked by hand: bytes per token = 2 x layers x kvHeads x headDim x dtypeBytes.

use super::*;
use crate::KvDtype;

fn shape(
    layers: i32,
    kv_heads: i32,
    attention_heads: Option<i32>,
    head_dim: Option<i32>,
) -> ModelShape {
    ModelShape {
        layers,
        kv_heads,
        attention_heads,
        hidden_size: None,
        head_dim,
        dtype: Some(KvDtype::Bf16),
        dtype_bytes: None,
        context_tokens: 8192,
        sequences: None,
    }
}

const GIB: i128 = 1 << 30;

/// meta-llama/Llama-3.1-8B: num_hidden_layers 32, num_attention_heads 32, num_key_value_heads 8, hidden_size 4096
/// (head_dim 128), bfloat16. 2 x 32 x 8 x 128 x 2 = 128 KiB per token, so 8192 tokens are exactly 1 GiB.
#[test]
fn llama_3_1_8b_is_128_kib_per_token() {
    let mut s = shape(32, 8, Some(32), None);
    s.hidden_size = Some(4096);
    let kv = shaped_kv(&s).unwrap();
    assert_eq!(kv.bytes, GIB);
    s.sequences = Some(16);
    assert_eq!(shaped_kv(&s).unwrap().gib(), Exact::int(16));
}

/// meta-llama/Llama-3.1-70B: num_hidden_layers 80, num_attention_heads 64, num_key_value_heads 8, hidden_size 8192
/// (head_dim 128). 320 KiB per token; 16 sequences of 8192 tokens = 40 GiB.
#[test]
fn llama_3_1_70b_splits_by_kv_head() {
    let mut s = shape(80, 8, Some(64), Some(128));
    s.sequences = Some(16);
    let kv = shaped_kv(&s).unwrap();
    assert_eq!(kv.bytes, 40 * GIB);
    // 4 shards hold 2 KV heads each: 10 GiB per GPU.
    assert_eq!(kv.per_gpu_bytes(4), Some(Exact::int(10 * GIB)));
    // 16 shards but 8 KV heads: each head is on 2 GPUs, so 40 / 8 = 5 GiB per GPU, not 40 / 16.
    assert_eq!(kv.split(16), Some(8));
    assert_eq!(kv.per_gpu_bytes(16), Some(Exact::int(5 * GIB)));
    // 3 shards divide neither the 8 KV heads nor the 64 attention heads.
    assert_eq!(kv.split(3), None);
    assert_eq!(kv.valid_shards(), vec![1, 2, 4, 8, 16, 32, 64]);
}

/// Qwen/Qwen2.5-7B-Instruct: num_hidden_layers 28, num_attention_heads 28, num_key_value_heads 4, hidden_size 3584
/// (head_dim 128). 56 KiB per token; 32768 tokens = 1.75 GiB. 28 attention heads rule out 8 shards.
#[test]
fn qwen2_5_7b_needs_shards_that_divide_28_heads() {
    let mut s = shape(28, 4, Some(28), None);
    s.hidden_size = Some(3584);
    s.context_tokens = 32768;
    let kv = shaped_kv(&s).unwrap();
    assert_eq!(kv.bytes, 57344 * 32768);
    assert_eq!(kv.gib(), Exact::new(7, 4));
    assert_eq!(kv.per_gpu_bytes(2), Some(Exact::new(7 * GIB, 8)));
    assert_eq!(kv.split(8), None);
    assert_eq!(kv.valid_shards(), vec![1, 2, 4, 28]);
}

/// google/gemma-2-9b: num_hidden_layers 42, num_attention_heads 16, num_key_value_heads 8, hidden_size 3584,
/// head_dim 256 (not 3584 / 16 = 224): the explicit head_dim wins. 2 x 42 x 8 x 256 x 2 = 336 KiB per token.
#[test]
fn gemma_2_9b_explicit_head_dim_wins() {
    let mut s = shape(42, 8, Some(16), Some(256));
    s.hidden_size = Some(3584);
    let kv = shaped_kv(&s).unwrap();
    assert_eq!(kv.bytes, 344_064 * 8192);
    assert_eq!(kv.gib(), Exact::new(21, 8));
    s.head_dim = None;
    assert_eq!(shaped_kv(&s).unwrap().bytes, 2 * 42 * 8 * 224 * 2 * 8192);
}

#[test]
fn dtypes_and_explicit_bytes() {
    let mut s = shape(1, 1, None, Some(1));
    s.context_tokens = 1;
    for (dtype, bytes) in [
        (KvDtype::Fp32, 8),
        (KvDtype::Fp16, 4),
        (KvDtype::Bf16, 4),
        (KvDtype::Fp8, 2),
        (KvDtype::Int8, 2),
    ] {
        s.dtype = Some(dtype);
        assert_eq!(shaped_kv(&s).unwrap().bytes, bytes, "{dtype:?}");
    }
    s.dtype = None;
    s.dtype_bytes = Some(3);
    assert_eq!(shaped_kv(&s).unwrap().bytes, 6);
}

#[test]
fn shapes_that_give_no_size_are_refused() {
    let mut s = shape(1, 1, Some(3), None);
    assert_eq!(shaped_kv(&s), Err(ShapeError::NoHeadDim));
    s.hidden_size = Some(10);
    assert_eq!(shaped_kv(&s), Err(ShapeError::NoHeadDim));
    s.head_dim = Some(4);
    s.dtype_bytes = Some(2);
    assert_eq!(shaped_kv(&s), Err(ShapeError::Dtype));
    s.dtype_bytes = None;
    s.layers = 0;
    assert_eq!(shaped_kv(&s), Err(ShapeError::NotPositive("layers")));
    let mut huge = shape(1024, 1024, None, Some(4096));
    huge.context_tokens = 16_777_216;
    huge.sequences = Some(65536);
    assert_eq!(shaped_kv(&huge), Err(ShapeError::TooLarge));
    // Beyond the CRD's bounds (`shaped_kv` is public; render and the provider validate first): six factors of
    // i32::MAX exceed i128, and the product is refused, not overflowed.
    let mut beyond = shape(i32::MAX, i32::MAX, None, Some(i32::MAX));
    beyond.dtype = None;
    beyond.dtype_bytes = Some(i32::MAX);
    beyond.context_tokens = i32::MAX;
    beyond.sequences = Some(i32::MAX);
    assert_eq!(shaped_kv(&beyond), Err(ShapeError::TooLarge));
}
