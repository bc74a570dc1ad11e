//! Issue 18, fuzzing the fit budget (proptest at scale): arbitrary `gpu` blocks, numbers from 0 to the extremes a
//! YAML file can hold, go through [`capacity::plan`] as the operator and the provider call it: never a panic, and a
//! budget that is returned is consistent (its class fits it, every smaller class does not). Case count: proptest's
//! default (256) in `cargo test`, more with `PROPTEST_CASES=100000`.

use model_fleet_api::Gpu;
use model_fleet_api::capacity::{self, CLASSES};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A number a user could write: small, fractional, zero, negative, or at the edges of i32/i64/f64.
fn arb_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i64..2048).prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        prop_oneof![
            Just(json!(0)),
            Just(json!(-1)),
            Just(json!(i32::MAX)),
            Just(json!(i64::MAX)),
            Just(json!(i64::MIN)),
            Just(json!(u64::MAX)),
            Just(json!(f64::MAX)),
            Just(json!(f64::MIN_POSITIVE)),
            Just(json!(1e300)),
        ],
    ]
}

fn arb_module() -> impl Strategy<Value = Value> {
    (
        arb_number(),
        prop::sample::select(vec!["sharded", "replicated"]),
        prop::option::of((
            arb_number(),
            arb_number(),
            arb_number(),
            arb_number(),
            arb_number(),
            arb_number(),
        )),
    )
        .prop_map(|(weights, placement, kv)| {
            let mut module = json!({"name": "m", "weightsGiB": weights, "placement": placement});
            if placement == "replicated" {
                module["kvCacheGiB"] = weights.clone();
            }
            if let Some((layers, kv_heads, heads, dim, context, sequences)) = kv {
                module["kvCache"] = json!({"fromShape": {
                    "layers": layers, "kvHeads": kv_heads, "attentionHeads": heads, "headDim": dim,
                    "dtype": "bf16", "contextTokens": context, "sequences": sequences,
                }});
            }
            module
        })
}

fn arb_gpu() -> impl Strategy<Value = Value> {
    (
        arb_number(),
        prop::collection::vec(arb_module(), 0..4),
        prop::option::of(arb_number()),
        prop::option::of(arb_number()),
        prop::option::of(arb_number()),
    )
        .prop_map(|(count, modules, runtime, margin, shards)| {
            let mut fit = json!({"modules": modules});
            if let Some(shards) = shards {
                fit["shards"] = shards;
            }
            if let Some(runtime) = runtime {
                fit["runtimeGiB"] = runtime;
            }
            if let Some(margin) = margin {
                fit["marginPercent"] = margin;
            }
            json!({"count": count, "fit": fit})
        })
}

proptest! {
    #[test]
    fn any_gpu_block_plans_without_panic(block in arb_gpu()) {
        // Blocks the CRD types cannot hold (a negative count, a float where an integer goes) never reach the budget.
        let Ok(gpu) = serde_json::from_value::<Gpu>(block) else {
            return Ok(());
        };
        if let Ok(Some(budget)) = capacity::plan(&gpu) {
            prop_assert!(capacity::fits(budget.per_gpu_gib, budget.class()));
            for smaller in CLASSES.iter().take_while(|c| c.name != budget.class().name) {
                prop_assert!(!capacity::fits(budget.per_gpu_gib, smaller));
            }
        }
    }
}
