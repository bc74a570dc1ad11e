//! Benchmarks of the pure core (issue 17): rendering an InferenceService and a TrainingRun, the GPU fit budget, route
//! claims and validation, on the repository's own example manifests. `make bench-pure` runs them.
//!
//! Besides criterion's timings, each bench prints once the heap allocations and bytes of ONE call (after one warm-up
//! call, so a lazily built static is not counted), e.g. `alloc render_inference/vllm: N allocations, B bytes per
//! call`. The counting allocator is `stats_alloc`: small, dependency-free and finished (no release since 0.1.10);
//! a counting `GlobalAlloc` of our own would need `unsafe impl`, which the workspace forbids (`unsafe_code`). It adds
//! two atomic increments to every allocation of the timed loop too, the same for every bench.

use std::alloc::System;
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use model_fleet_api::render::{RenderConfig, render_inference, render_training};
use model_fleet_api::{Dataset, Gpu, InferenceService, TrainingRun, capacity, routing, validate};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Prints the heap allocations of one call of `call`, made after a warm-up call.
fn print_allocations<T>(name: &str, mut call: impl FnMut() -> T) {
    drop(black_box(call()));
    let region = Region::new(GLOBAL);
    let out = black_box(call());
    let change = region.change();
    drop(out);
    println!(
        "alloc {name}: {} allocations, {} bytes per call ({} reallocations)",
        change.allocations, change.bytes_allocated, change.reallocations
    );
}

/// An example manifest (`examples/NAME`), parsed; setup, never timed.
fn example<T: serde::de::DeserializeOwned>(name: &str) -> T {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The examples' routes have no `parentRef`: they render against the operator's `--default-gateway`, as in
/// `operator/tests/render.rs`.
fn config() -> RenderConfig {
    RenderConfig {
        default_gateway: Some(
            "model-fleet-system/model-fleet"
                .parse()
                .expect("a valid NAMESPACE/NAME"),
        ),
        ..RenderConfig::default()
    }
}

/// `render_inference` on a small CPU echo service and on vLLM with a `gpu.fit`, KEDA triggers and a gateway.
fn inference(c: &mut Criterion) {
    let config = config();
    let mut group = c.benchmark_group("render_inference");
    for (name, file) in [
        ("echo", "inference-kind.yaml"),
        ("vllm", "inference-vllm.yaml"),
    ] {
        let isvc: InferenceService = example(file);
        let rendered = render_inference(&isvc, &config);
        assert!(rendered.children.is_ok(), "{file}: {:?}", rendered.children);
        print_allocations(&format!("render_inference/{name}"), || {
            render_inference(black_box(&isvc), &config)
        });
        group.bench_function(name, |b| {
            b.iter(|| render_inference(black_box(&isvc), &config))
        });
    }
    group.finish();
}

/// `render_training` on the two-node PyTorch run with its Dataset `corpus`.
fn training(c: &mut Criterion) {
    let config = config();
    let run: TrainingRun = example("training-pytorch.yaml");
    let datasets: Vec<Dataset> = vec![example("dataset-corpus.yaml")];
    let rendered = render_training(&run, &datasets, &config);
    assert!(rendered.children.is_ok(), "{:?}", rendered.children);
    print_allocations("render_training/pytorch", || {
        render_training(black_box(&run), &datasets, &config)
    });
    c.benchmark_group("render_training")
        .bench_function("pytorch", |b| {
            b.iter(|| render_training(black_box(&run), &datasets, &config))
        });
}

/// `capacity::plan` (the fit budget) on the multi-GPU example and on a KV cache given by the model's shape.
fn capacity_plan(c: &mut Criterion) {
    let mut group = c.benchmark_group("capacity_plan");
    for (name, file) in [
        ("multi_gpu", "inference-multi-gpu-fit.yaml"),
        ("kv_from_shape", "inference-kv-from-shape.yaml"),
    ] {
        let isvc: InferenceService = example(file);
        let gpu: Gpu = isvc.spec.gpu.unwrap_or_else(|| panic!("{file}: no gpu"));
        assert!(
            matches!(capacity::plan(&gpu), Ok(Some(_))),
            "{file}: the fit must plan"
        );
        print_allocations(&format!("capacity_plan/{name}"), || {
            capacity::plan(black_box(&gpu))
        });
        group.bench_function(name, |b| b.iter(|| capacity::plan(black_box(&gpu))));
    }
    group.finish();
}

/// `routing::conflict` and `routing::contenders` of one service against 1000 cached services on the same Gateway
/// (distinct hostnames): the operator runs the first on every reconcile of a routed service and the second on every
/// watch event of one, so their cost per call, times N, is what a fleet of N pays per resync (issue 17: cost linear
/// in N). `indexed_conflict_1000` is the same decision through `routing::ClaimIndex`, as the operator makes it.
fn route_claims(c: &mut Criterion) {
    let config = config();
    let template: InferenceService = example("inference-kind.yaml");
    let fleet: Vec<InferenceService> = (0..1000)
        .map(|i| {
            let mut isvc = template.clone();
            isvc.metadata.name = Some(format!("svc-{i}"));
            isvc.metadata.uid = Some(format!("uid-{i}"));
            isvc.metadata.creation_timestamp = template.metadata.creation_timestamp.clone();
            if let Some(gateway) = isvc.spec.gateway.as_mut() {
                gateway.hostnames = Some(vec![format!("svc-{i}.example.test")]);
            }
            isvc
        })
        .collect();
    let own = &fleet[500];
    assert!(routing::conflict(own, &fleet, &config).is_none());
    print_allocations("route_claims/conflict_1000", || {
        routing::conflict(black_box(own), &fleet, &config)
    });
    print_allocations("route_claims/contenders_1000", || {
        routing::contenders(black_box(own), &fleet, &config)
    });
    // What the operator runs since the claim index: the services sharing a bucket, then the same decision over them.
    let mut index = routing::ClaimIndex::default();
    for (i, isvc) in fleet.iter().enumerate() {
        index.upsert(i, isvc, &config);
    }
    let indexed = || {
        let shared = index.sharing(black_box(own), &config);
        routing::conflict(own, shared.iter().map(|&i| &fleet[i]), &config)
    };
    print_allocations("route_claims/indexed_conflict_1000", indexed);
    let mut group = c.benchmark_group("route_claims");
    group.bench_function("conflict_1000", |b| {
        b.iter(|| routing::conflict(black_box(own), &fleet, &config))
    });
    group.bench_function("contenders_1000", |b| {
        b.iter(|| routing::contenders(black_box(own), &fleet, &config))
    });
    group.bench_function("indexed_conflict_1000", |b| b.iter(indexed));
    group.finish();
}

/// `validate::validate_value` (the OpenAPI schema's checks, patterns included) and `validate::cel::validate_cel` (the
/// CRD's CEL rules) on the vLLM example: what the provider runs for each resource at `ValidateResourceTypeConfig` and
/// `render -f` runs for each manifest.
fn validation(c: &mut Criterion) {
    let manifest: serde_json::Value = example("inference-vllm.yaml");
    let schema = validate::schema_of("InferenceService")
        .and_then(|s| s.pointer("/properties/spec"))
        .expect("the InferenceService spec schema");
    let spec = &manifest["spec"];
    let errors = validate::validate_value(schema, spec, "spec");
    assert!(errors.is_empty(), "{errors:?}");
    assert!(validate::cel::validate_cel(&manifest, None).is_empty());
    print_allocations("validate/schema_vllm", || {
        validate::validate_value(schema, black_box(spec), "spec")
    });
    print_allocations("validate/cel_vllm", || {
        validate::cel::validate_cel(black_box(&manifest), None)
    });
    let mut group = c.benchmark_group("validate");
    group.bench_function("schema_vllm", |b| {
        b.iter(|| validate::validate_value(schema, black_box(spec), "spec"))
    });
    group.bench_function("cel_vllm", |b| {
        b.iter(|| validate::cel::validate_cel(black_box(&manifest), None))
    });
    group.finish();
}

criterion_group!(
    benches,
    inference,
    training,
    capacity_plan,
    route_claims,
    validation
);
criterion_main!(benches);
