//! The GPU fit budget (DESIGN.md section 4; case O-10): exact figures, class boundaries and
//! monotonicity.

use model_fleet_api::capacity::{self, BudgetInput, CLASSES, CapacityError, Exact, ModuleInput};
use model_fleet_api::{Fit, FitModule, Gpu, Placement};
use proptest::prelude::*;

fn module(gib: Exact, placement: Placement) -> ModuleInput {
    ModuleInput {
        name: "m".into(),
        gib,
        placement,
        kv: None,
    }
}

fn input(modules: Vec<ModuleInput>, shards: u32, runtime: i128, margin: u32) -> BudgetInput {
    BudgetInput {
        modules,
        shards,
        runtime_gib: Exact::int(runtime),
        margin_percent: margin,
    }
}

fn gpu(yaml: &str) -> Gpu {
    serde_yaml::from_str(yaml).unwrap()
}

// Case O-10: runtime memory is per device, never divided by shards.
#[test]
fn o10_runtime_is_per_device() {
    let g = gpu(
        "count: 4\nfit:\n  modules:\n  - {name: llama, weightsGiB: 130, kvCacheGiB: 38, placement: sharded}\n  runtimeGiB: 4\n  marginPercent: 10\n",
    );
    let b = capacity::plan(&g).unwrap().unwrap();
    assert_eq!(
        b.per_gpu_gib,
        Exact::new(506, 10),
        "(32.5 + 9.5 + 4) x 1.1 = 50.6 GiB exactly"
    );
    assert_ne!(
        b.per_gpu_gib,
        Exact::new(473, 10),
        "the wrong formula (runtime / shards) gives 47.3"
    );
    assert_eq!(b.per_gpu_gib.to_string(), "50.6");
    assert_eq!(b.per_gpu_memory_gib(), 51);
    assert_eq!(b.class().name, "80gi");
    assert_eq!(
        b.fitting.iter().map(|c| c.name).collect::<Vec<_>>(),
        ["80gi", "141gi", "180gi"]
    );
}

#[test]
fn runtime_is_added_with_one_shard() {
    let b = capacity::budget(input(
        vec![module(Exact::int(10), Placement::Sharded)],
        1,
        4,
        0,
    ))
    .unwrap();
    assert_eq!(b.per_gpu_gib, Exact::int(14));
}

// DESIGN.md section 4 worked example (examples/inference-multi-gpu-fit.yaml).
#[test]
fn worked_example_is_54_gib_class_80gi() {
    let g = gpu(
        "count: 2\nfit:\n  modules:\n  - {name: m, weightsGiB: 70, kvCacheGiB: 20, placement: sharded}\n  shards: 2\n  runtimeGiB: 4\n  marginPercent: 10\n",
    );
    let b = capacity::plan(&g).unwrap().unwrap();
    assert_eq!(b.per_gpu_gib, Exact::new(539, 10));
    assert_eq!(b.per_gpu_memory_gib(), 54);
    assert_eq!(b.class().name, "80gi");
}

#[test]
fn defaults_are_shards_gpu_count_runtime_2_margin_10() {
    let fit = Fit {
        modules: vec![FitModule {
            name: "m".into(),
            weights_gib: 20.into(),
            kv_cache_gib: None,
            kv_cache: None,
            placement: Placement::Sharded,
        }],
        shards: None,
        runtime_gib: None,
        margin_percent: None,
    };
    let i = capacity::input_from_fit(&fit, 2).unwrap();
    assert_eq!(
        (i.shards, i.runtime_gib, i.margin_percent),
        (2, Exact::int(2), 10)
    );
    // (20 / 2 + 2) x 1.1 = 13.2
    assert_eq!(capacity::per_gpu_gib(&i), Some(Exact::new(132, 10)));
}

#[test]
fn replicated_modules_are_not_divided() {
    let b = capacity::budget(input(
        vec![
            module(Exact::int(40), Placement::Sharded),
            module(Exact::int(3), Placement::Replicated),
        ],
        4,
        2,
        0,
    ))
    .unwrap();
    assert_eq!(b.per_gpu_gib, Exact::int(15));
}

#[test]
fn too_big_says_how_many_shards_fit() {
    let err = capacity::budget(input(
        vec![module(Exact::int(400), Placement::Sharded)],
        2,
        2,
        10,
    ))
    .unwrap_err();
    // 400/2 + 2 = 202 x 1.1 = 222.2 > 179.06 GiB usable; with 3 shards (133.3 + 2) x 1.1 = 148.9 fits.
    assert_eq!(
        err,
        CapacityError::TooBig {
            per_gpu_gib_ceil: 223,
            shards: 2,
            min_shards: Some(3)
        }
    );
    let text = err.to_string();
    assert!(
        text.contains("at least 3 GPUs") && text.contains("223 GiB") && text.contains("180gi"),
        "{text}"
    );

    let hopeless = capacity::budget(input(
        vec![module(Exact::int(200), Placement::Replicated)],
        2,
        2,
        10,
    ))
    .unwrap_err();
    assert!(matches!(
        hopeless,
        CapacityError::TooBig {
            min_shards: None,
            ..
        }
    ));
    assert!(
        hopeless
            .to_string()
            .contains("no shard count up to 64 (the most gpu.fit.shards allows) fits it"),
        "{hopeless}"
    );

    // 20000 GiB of sharded weights need more than 120 shards of the largest class, beyond the API's 64: the message
    // suggests none rather than a count gpu.fit.shards would refuse.
    let beyond = capacity::budget(input(
        vec![module(Exact::int(20_000), Placement::Sharded)],
        1,
        2,
        10,
    ))
    .unwrap_err();
    assert!(
        matches!(
            beyond,
            CapacityError::TooBig {
                min_shards: None,
                ..
            }
        ),
        "{beyond:?}"
    );
}

// Exact class boundaries: a budget equal to a class's usable memory fits it, one MiB more does not.
#[test]
fn class_boundaries_are_exact() {
    for (i, class) in CLASSES.iter().enumerate() {
        let at = Exact::new(i128::from(class.usable_mib), 1024);
        let b = capacity::budget(input(vec![module(at, Placement::Sharded)], 1, 0, 0)).unwrap();
        assert_eq!(
            b.class().name,
            class.name,
            "budget == usable fits {}",
            class.name
        );
        let over = Exact::new(i128::from(class.usable_mib) + 1, 1024);
        match capacity::budget(input(vec![module(over, Placement::Sharded)], 1, 0, 0)) {
            Ok(b) => assert_eq!(
                b.class().name,
                CLASSES[i + 1].name,
                "+1 MiB moves past {}",
                class.name
            ),
            Err(_) => assert_eq!(i, CLASSES.len() - 1),
        }
    }
}

// A decimal that floats cannot hold exactly (0.1) still lands exactly on the boundary:
// 16gi = 15360 MiB = 15 GiB; 13.5 + 0.1 + 0.036... is avoided by construction here.
#[test]
fn decimal_inputs_are_exact() {
    let g = gpu(
        "count: 1\nfit:\n  modules:\n  - {name: m, weightsGiB: 13.9, kvCacheGiB: 0.1, placement: sharded}\n  runtimeGiB: 1\n  marginPercent: 0\n",
    );
    let b = capacity::plan(&g).unwrap().unwrap();
    assert_eq!(b.per_gpu_gib, Exact::int(15));
    assert_eq!(
        b.class().name,
        "16gi",
        "15 GiB == 15360 MiB fits 16gi exactly"
    );
}

// The fuzz case that panicked in CI of 940e779 (i128 overflow adding i64::MAX GiB to a nine-digit decimal): sizes the
// CRD would refuse are refused by the budget too, naming the field and its bound, whoever calls it (`render -f`, the
// provider's plan).
#[test]
fn sizes_beyond_the_api_bounds_are_refused_on_their_field() {
    let g = gpu(
        "count: 1\nfit:\n  modules:\n  - {name: a, weightsGiB: 9223372036854775807, placement: sharded}\n  - {name: b, weightsGiB: 780998.389051993, placement: sharded}\n  runtimeGiB: 161902.24380110504\n",
    );
    let err = capacity::plan(&g).unwrap_err();
    assert_eq!(
        err.to_string(),
        "gpu.fit.modules[0].weightsGiB: must be a non-negative decimal number of GiB, at most 65536, with at most 18 \
         fraction digits"
    );
    let err = capacity::plan(&gpu(
        "count: 1\nfit:\n  modules:\n  - {name: a, weightsGiB: 1, kvCacheGiB: 65536.5, placement: sharded}\n",
    ))
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("gpu.fit.modules[0].kvCacheGiB: must be"),
        "{err}"
    );
    let err = capacity::plan(&gpu(
        "count: 1\nfit:\n  modules:\n  - {name: a, weightsGiB: 1, placement: sharded}\n  runtimeGiB: 1025\n",
    ))
    .unwrap_err();
    assert!(
        err.to_string().starts_with(
            "gpu.fit.runtimeGiB: must be a non-negative decimal number of GiB, at most 1024"
        ),
        "{err}"
    );
    let err = capacity::plan(&gpu(
        "count: 1\nfit:\n  modules:\n  - {name: a, weightsGiB: 1, placement: sharded}\n  shards: 65\n",
    ))
    .unwrap_err();
    assert_eq!(err, CapacityError::NoShards(1));
    // The bounds themselves are accepted (and too big for any class).
    let at_bounds = capacity::plan(&gpu(
        "count: 1\nfit:\n  modules:\n  - {name: a, weightsGiB: 65536, kvCacheGiB: 65536, placement: replicated}\n  runtimeGiB: 1024\n  shards: 64\n",
    ));
    assert!(
        matches!(at_bounds, Err(CapacityError::TooBig { .. })),
        "{at_bounds:?}"
    );
}

// The budget's own bounds are the CRD's, for both kinds that carry a `gpu` block: they cannot drift apart.
#[test]
fn the_budget_bounds_are_the_crd_bounds() {
    for kind in ["InferenceService", "TrainingRun"] {
        let schema = model_fleet_api::validate::schema_of(kind).unwrap();
        let fit =
            &schema["properties"]["spec"]["properties"]["gpu"]["properties"]["fit"]["properties"];
        let module = &fit["modules"]["items"]["properties"];
        let bounds = [
            (&module["weightsGiB"], capacity::MAX_MODULE_GIB),
            (&module["kvCacheGiB"], capacity::MAX_MODULE_GIB),
            (&fit["runtimeGiB"], capacity::MAX_RUNTIME_GIB),
            (&fit["shards"], i128::from(capacity::kv::MAX_SHARDS)),
        ];
        for (field, bound) in bounds {
            assert_eq!(field["maximum"].as_f64(), Some(bound as f64), "{kind}");
        }
    }
}

// `budget` takes inputs no bound has checked: a sum beyond i128 is an error, not a panic.
#[test]
fn a_budget_beyond_exact_arithmetic_is_an_error() {
    let huge = module(Exact::int(i128::MAX / 2), Placement::Replicated);
    let err = capacity::budget(input(vec![huge.clone(), huge], 1, 2, 10)).unwrap_err();
    assert_eq!(err, CapacityError::Overflow);
    assert!(
        err.to_string()
            .starts_with("gpu.fit: the per-GPU budget is too large to compute exactly")
    );
}

#[test]
fn placement_terms() {
    let g = gpu(
        "count: 2\nproducts: [NVIDIA-H100-80GB-HBM3]\nfit:\n  modules:\n  - {name: m, weightsGiB: 70, kvCacheGiB: 20, placement: sharded}\n  runtimeGiB: 4\n",
    );
    let b = capacity::plan(&g).unwrap();
    let p = capacity::placement(&g, b.as_ref());
    let na = p.affinity.unwrap().node_affinity.unwrap();
    let req = &na
        .required_during_scheduling_ignored_during_execution
        .unwrap()
        .node_selector_terms[0];
    let exprs = req.match_expressions.as_ref().unwrap();
    assert_eq!(exprs[0].key, "modelfleet.io/gpu-class");
    assert_eq!(
        exprs[0].values.as_deref().unwrap(),
        ["80gi", "141gi", "180gi"]
    );
    assert_eq!(exprs[1].key, "nvidia.com/gpu.product");
    assert_eq!(
        exprs[1].values.as_deref().unwrap(),
        ["NVIDIA-H100-80GB-HBM3"]
    );
    let pref = &na
        .preferred_during_scheduling_ignored_during_execution
        .unwrap()[0];
    assert_eq!(
        pref.preference.match_expressions.as_ref().unwrap()[0]
            .values
            .as_deref()
            .unwrap(),
        ["80gi"]
    );
    assert_eq!(p.limits["nvidia.com/gpu"].0, "2");
    assert_eq!(p.tolerations[0].key.as_deref(), Some("nvidia.com/gpu"));
    assert_eq!(p.tolerations[0].operator.as_deref(), Some("Exists"));
    assert_eq!(p.tolerations[0].effect.as_deref(), Some("NoSchedule"));
}

fn arb_modules() -> impl Strategy<Value = Vec<ModuleInput>> {
    prop::collection::vec(
        (0i128..200_000, prop::bool::ANY).prop_map(|(tenths, sharded)| {
            module(
                Exact::new(tenths, 10),
                if sharded {
                    Placement::Sharded
                } else {
                    Placement::Replicated
                },
            )
        }),
        1..5,
    )
}

proptest! {
    // Case O-10: the budget never falls when runtime or margin rises.
    #[test]
    fn budget_is_monotone_in_runtime_and_margin(
        modules in arb_modules(), shards in 1u32..16, runtime in 0i128..64, extra in 0i128..64,
        margin in 0u32..100, extra_margin in 0u32..=100,
    ) {
        let base = input(modules.clone(), shards, runtime, margin);
        let more_runtime = input(modules.clone(), shards, runtime + extra, margin);
        let more_margin = input(modules, shards, runtime, (margin + extra_margin).min(100));
        let b = capacity::per_gpu_gib(&base).unwrap();
        prop_assert!(capacity::per_gpu_gib(&more_runtime).unwrap() >= b);
        prop_assert!(capacity::per_gpu_gib(&more_margin).unwrap() >= b);
    }

    // The chosen class is the smallest that fits, and it really fits.
    #[test]
    fn chosen_class_is_smallest_fitting(modules in arb_modules(), shards in 1u32..16, runtime in 0i128..16, margin in 0u32..=100) {
        let i = input(modules, shards, runtime, margin);
        let gib = capacity::per_gpu_gib(&i).unwrap();
        match capacity::budget(i) {
            Ok(b) => {
                prop_assert!(capacity::fits(gib, b.class()));
                for c in CLASSES.iter().take_while(|c| c.name != b.class().name) {
                    prop_assert!(!capacity::fits(gib, c));
                }
            }
            Err(_) => prop_assert!(!capacity::fits(gib, capacity::largest())),
        }
    }
}

const LLAMA_70B_TP: &str = "
count: 4
fit:
  modules:
  - name: llama-3.1-70b
    weightsGiB: 131.5
    placement: sharded
    kvCache:
      fromShape: {layers: 80, kvHeads: 8, attentionHeads: 64, headDim: 128, dtype: bf16, contextTokens: 8192, sequences: 16}
  runtimeGiB: 2
  marginPercent: 10
";

// Llama 3.1 70B (config.json: 80 layers, 64 heads, 8 KV heads, head_dim 128) over 4 GPUs: 131.5 GiB of bf16
// weights / 4 + 40 GiB of KV / 4 + 2 GiB runtime = 44.875 GiB, x 1.1 = 49.3625 GiB per GPU: class 80gi.
#[test]
fn kv_cache_from_shape_enters_the_budget() {
    let budget = capacity::plan(&gpu(LLAMA_70B_TP)).unwrap().unwrap();
    assert_eq!(budget.per_gpu_gib, Exact::new(493_625, 10_000));
    assert_eq!(budget.class().name, "80gi");
    assert_eq!(budget.kv_cache.len(), 1);
    let kv = &budget.kv_cache[0];
    assert_eq!(
        (kv.module.as_str(), kv.mib(), kv.per_gpu_mib()),
        ("llama-3.1-70b", 40 * 1024, 10 * 1024)
    );
}

// 16 GPUs for 8 KV heads: the KV share is 40 / 8 = 5 GiB per GPU, not 40 / 16 = 2.5.
#[test]
fn more_shards_than_kv_heads_replicate_the_heads() {
    let budget = capacity::plan(&gpu(&LLAMA_70B_TP.replace("count: 4", "count: 16")))
        .unwrap()
        .unwrap();
    assert_eq!(budget.kv_cache[0].per_gpu_mib(), 5 * 1024);
    // (131.5 / 16 + 5 + 2) x 1.1
    assert_eq!(
        budget.per_gpu_gib,
        Exact::new(1315, 160)
            .checked_add(Exact::int(7))
            .and_then(|e| e.checked_mul(Exact::new(11, 10)))
            .unwrap()
    );
}

#[test]
fn shard_counts_the_heads_cannot_use_are_refused_with_the_valid_ones() {
    let err = capacity::plan(&gpu(&LLAMA_70B_TP.replace("count: 4", "count: 6"))).unwrap_err();
    let CapacityError::KvShards {
        index,
        shards,
        ref valid,
        ..
    } = err
    else {
        panic!("{err:?}");
    };
    assert_eq!(
        (index, shards, valid.as_slice()),
        (0, 6, &[1, 2, 4, 8, 16, 32, 64][..])
    );
    let message = err.to_string();
    assert!(message.contains("gpu.fit.modules[0] (llama-3.1-70b): 6 shard(s) cannot split 8 KV heads and 64 attention heads"), "{message}");
    assert!(
        message.contains("valid counts: 1, 2, 4, 8, 16, 32, 64"),
        "{message}"
    );
}

// A fit too big for every class suggests only shard counts the heads allow.
#[test]
fn too_big_suggests_a_valid_shard_count() {
    let yaml = LLAMA_70B_TP
        .replace("count: 4", "count: 1")
        .replace("sequences: 16", "sequences: 24");
    let err = capacity::plan(&gpu(&yaml)).unwrap_err();
    // 131.5 + 60 GiB KV: 2 shards give (65.75 + 30 + 2) x 1.1 = 107.5 GiB, which fits 141gi (the largest class).
    assert!(
        matches!(
            err,
            CapacityError::TooBig {
                min_shards: Some(2),
                ..
            }
        ),
        "{err:?}"
    );
}

// A replicated module (a draft model on every GPU) holds its whole KV cache on each.
#[test]
fn replicated_modules_hold_the_whole_cache() {
    let yaml = LLAMA_70B_TP
        .replace("placement: sharded", "placement: replicated")
        .replace("weightsGiB: 131.5", "weightsGiB: 1");
    let budget = capacity::plan(&gpu(&yaml)).unwrap().unwrap();
    assert_eq!(budget.kv_cache[0].per_gpu_mib(), 40 * 1024);
    assert_eq!(budget.per_gpu_gib, Exact::new(43 * 11, 10));
}

#[test]
fn a_shape_without_head_dim_is_an_error_on_its_module() {
    let yaml = LLAMA_70B_TP.replace("headDim: 128, ", "");
    let err = capacity::plan(&gpu(&yaml)).unwrap_err();
    assert_eq!(
        err,
        CapacityError::KvShape {
            index: 0,
            error: capacity::ShapeError::NoHeadDim
        }
    );
    assert!(
        err.to_string()
            .starts_with("gpu.fit.modules[0].kvCache.fromShape: set headDim"),
        "{err}"
    );
}
