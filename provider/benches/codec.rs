//! Benchmarks of the provider's value codecs (issue 17): `value::msgpack::decode` / `encode` (every plan, apply and
//! read request) and `value::json::decode` (stored state on upgrade), on the full `modelfleet_inference` schema type
//! with a realistic state: `examples/inference-vllm.yaml`'s spec, the meta attributes, the plan-time values and the
//! refreshed facts. `make bench-pure` runs them.
//!
//! Besides criterion's timings, each bench prints once the heap allocations and bytes of ONE call (after one warm-up
//! call), e.g. `alloc msgpack_decode/inference_state: N allocations, B bytes per call`. The counting allocator is
//! `stats_alloc`: small, dependency-free and finished (no release since 0.1.10); a counting `GlobalAlloc` of our own
//! would need `unsafe impl`, which the workspace forbids (`unsafe_code`). It adds two atomic increments to every
//! allocation of the timed loop too, the same for every bench.

use std::alloc::System;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value as Json;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use terraform_provider_modelfleet::resources::Resource as _;
use terraform_provider_modelfleet::resources::attributes::{
    ID, NAME, NAMESPACE, TIMEOUTS, WAIT_FOR,
};
use terraform_provider_modelfleet::resources::inference::{Inference, READY, inference};
use terraform_provider_modelfleet::resources::{fields, plan};
use terraform_provider_modelfleet::value::{Number, Type, Value, json, msgpack};

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

/// The state Terraform would hold for `examples/inference-vllm.yaml` after an apply and a refresh (setup, never
/// timed), and the resource's schema type.
fn inference_state() -> (Value, Type) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/inference-vllm.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let manifest: Json =
        serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let spec = manifest["spec"]
        .as_object()
        .expect("the example has a spec");
    let resource = inference();
    let Value::Object(mut attrs) = fields::from_json(resource.fields(), spec) else {
        panic!("a spec converts to an object")
    };
    let timeouts = BTreeMap::from([
        ("create".to_string(), Value::string("30m")),
        ("update".to_string(), Value::string("30m")),
        ("delete".to_string(), Value::Null),
    ]);
    attrs.extend([
        (ID.to_string(), Value::string("models/llama-8b")),
        (NAME.to_string(), Value::string("llama-8b")),
        (NAMESPACE.to_string(), Value::string("models")),
        (WAIT_FOR.to_string(), Value::string(READY)),
        (TIMEOUTS.to_string(), Value::Object(timeouts)),
        ("ready".to_string(), Value::Bool(true)),
        (
            "ready_replicas".to_string(),
            Value::Number(Number::from(2i64)),
        ),
    ]);
    let state = plan::with_plan_time_values::<Inference>(resource.fields(), Value::Object(attrs));
    (state, resource.schema().value_type())
}

/// msgpack decode and encode, and JSON decode, of the state.
fn codecs(c: &mut Criterion) {
    let (state, ty) = inference_state();
    let packed = msgpack::encode(&state, &ty).expect("the state conforms to the schema");
    let decoded = msgpack::decode(&packed, &ty).expect("its own encoding decodes");
    let again = msgpack::encode(&decoded, &ty).expect("a decoded state encodes");
    assert_eq!(again, packed, "msgpack round trip");
    let stored = json::encode(&state, &ty).expect("the state conforms to the schema");
    assert!(json::decode(stored.as_bytes(), &ty).is_ok());
    println!(
        "state: {} bytes of msgpack, {} bytes of JSON",
        packed.len(),
        stored.len()
    );

    print_allocations("msgpack_decode/inference_state", || {
        msgpack::decode(black_box(&packed), &ty)
    });
    c.bench_function("msgpack_decode/inference_state", |b| {
        b.iter(|| msgpack::decode(black_box(&packed), &ty))
    });
    print_allocations("msgpack_encode/inference_state", || {
        msgpack::encode(black_box(&state), &ty)
    });
    c.bench_function("msgpack_encode/inference_state", |b| {
        b.iter(|| msgpack::encode(black_box(&state), &ty))
    });
    print_allocations("json_decode/inference_state", || {
        json::decode(black_box(stored.as_bytes()), &ty)
    });
    c.bench_function("json_decode/inference_state", |b| {
        b.iter(|| json::decode(black_box(stored.as_bytes()), &ty))
    });
}

criterion_group!(benches, codecs);
criterion_main!(benches);
