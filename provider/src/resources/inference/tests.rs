//! `modelfleet_inference`: its schema, plan-time values (DESIGN.md sections 4 and 6) and wait rule, no cluster.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::resources::Resource as _;
use crate::resources::fields::{self, Field};
use crate::resources::object::live_facts;
use crate::resources::plan::plan_time;
use crate::resources::wait::{RECONCILED, check};
use crate::schema::Nesting;

fn resource_value(fields: &[Field], name: &str, spec: Json) -> Value {
    let mut value = fields::from_json(fields, spec.as_object().unwrap());
    if let Value::Object(attrs) = &mut value {
        attrs.insert("name".into(), Value::string(name));
    }
    value
}

/// Each diagnostic's attribute path and detail, in order.
fn paths_and_details(diags: &crate::diag::Diagnostics) -> Vec<(String, String)> {
    diags
        .0
        .iter()
        .map(|d| (d.path.as_ref().unwrap().to_string(), d.detail.clone()))
        .collect()
}

fn set(value: &mut Value, path: &[&str], new: Value) {
    let mut here = value;
    for step in &path[..path.len() - 1] {
        let Value::Object(attrs) = here else {
            panic!("object expected at {step}")
        };
        here = attrs.get_mut(*step).unwrap();
        if let Value::List(items) = here {
            here = &mut items[0];
        }
    }
    let Value::Object(attrs) = here else {
        panic!("object expected")
    };
    attrs.insert(path[path.len() - 1].to_string(), new);
}

fn fit_spec(weights: f64, count: i64, runtime: Option<i64>) -> Json {
    let mut fit = json!({"modules": [{"name": "m", "weightsGiB": weights, "kvCacheGiB": 20,
        "placement": "sharded"}], "shards": count, "marginPercent": 10});
    if let Some(r) = runtime {
        fit["runtimeGiB"] = json!(r);
    }
    json!({"model": {"name": "m"}, "container": {"image": "i"}, "gpu": {"count": count, "fit": fit}})
}

#[test]
fn multi_gpu_fit_example_is_54_gib_class_80gi() {
    // DESIGN.md section 4: (70 + 20) / 2 + 4 = 49, x 1.1 = 53.9 -> 54 GiB -> 80gi.
    let resource = inference();
    let fields = resource.fields();
    let value = resource_value(fields, "llama", fit_spec(70.0, 2, Some(4)));
    let values = plan_time::<Inference>(fields, &value).unwrap();
    assert_eq!(values["capacity_class"], Value::string("80gi"));
    assert_eq!(
        values["per_gpu_memory_gib"],
        Value::Number(Number::from(54i64))
    );
    assert_eq!(values["url"], Value::Null);
}

#[test]
fn unknown_inputs_give_unknown_values_and_no_gpu_gives_null() {
    let resource = inference();
    let fields = resource.fields();
    let mut value = resource_value(fields, "llama", fit_spec(70.0, 2, None));
    set(
        &mut value,
        &["gpu", "fit", "modules", "weights_gib"],
        Value::Unknown,
    );
    let values = plan_time::<Inference>(fields, &value).unwrap();
    assert_eq!(values["capacity_class"], Value::Unknown);
    assert_eq!(values["per_gpu_memory_gib"], Value::Unknown);

    let plain = resource_value(
        fields,
        "echo",
        json!({"model": {"name": "m"}, "container": {"image": "i"}}),
    );
    let values = plan_time::<Inference>(fields, &plain).unwrap();
    assert_eq!(values["capacity_class"], Value::Null);
    assert_eq!(values["per_gpu_memory_gib"], Value::Null);
}

#[test]
fn decimal_sizes_are_exact() {
    // 13.5 + 20 = 33.5 on one GPU, + 2 runtime = 35.5, x 1.1 = 39.05 GiB = 39987.2 MiB:
    // above 40gi's usable 39538 MiB, so 48gi (a float-rounded 39.05 would not change that, but the
    // class edge is where drift would show).
    let resource = inference();
    let fields = resource.fields();
    let value = resource_value(fields, "m", fit_spec(13.5, 1, None));
    let values = plan_time::<Inference>(fields, &value).unwrap();
    assert_eq!(values["capacity_class"], Value::string("48gi"));
    assert_eq!(
        values["per_gpu_memory_gib"],
        Value::Number(Number::from(40i64))
    );
}

#[test]
fn a_fit_too_big_is_an_error_on_the_fit_block() {
    let resource = inference();
    let fields = resource.fields();
    let value = resource_value(fields, "huge", fit_spec(400.0, 1, None));
    let err = plan_time::<Inference>(fields, &value).unwrap_err();
    assert_eq!(err.0[0].path.as_ref().unwrap().to_string(), "gpu.fit");
    assert!(
        err.0[0].detail.contains("shard over at least"),
        "{:?}",
        err.0[0]
    );
}

// A size beyond the CRD's bound (here with the fuzz case's i64::MAX GiB, which once overflowed the budget's
// arithmetic) is a plan error on that size's attribute, never a panic of the plugin.
#[test]
fn a_size_beyond_its_bound_is_an_error_on_its_attribute() {
    let resource = inference();
    let fields = resource.fields();
    let value = resource_value(fields, "huge", fit_spec(9.223372036854776e18, 1, None));
    let err = plan_time::<Inference>(fields, &value).unwrap_err();
    assert_eq!(
        err.0[0].path.as_ref().unwrap().to_string(),
        "gpu.fit.modules[0].weights_gib"
    );
    assert!(err.0[0].detail.contains("at most 65536"), "{:?}", err.0[0]);
    let mut value = resource_value(fields, "huge", fit_spec(1.0, 1, Some(2000)));
    let err = plan_time::<Inference>(fields, &value).unwrap_err();
    assert_eq!(
        err.0[0].path.as_ref().unwrap().to_string(),
        "gpu.fit.runtime_gib"
    );
    set(
        &mut value,
        &["gpu", "fit", "modules", "kv_cache_gib"],
        number("70000"),
    );
    set(&mut value, &["gpu", "fit", "runtime_gib"], number("1"));
    let err = plan_time::<Inference>(fields, &value).unwrap_err();
    assert_eq!(
        err.0[0].path.as_ref().unwrap().to_string(),
        "gpu.fit.modules[0].kv_cache_gib"
    );
}

#[test]
fn url_from_the_first_hostname_and_path_prefix() {
    let resource = inference();
    let fields = resource.fields();
    let spec = |gateway: Json| json!({"model": {"name": "m"}, "container": {"image": "i"}, "gateway": gateway});
    let url = |value: &Value| plan_time::<Inference>(fields, value).unwrap()["url"].clone();
    let routed = resource_value(
        fields,
        "echo",
        spec(json!({"hostnames": ["a.example", "b.example"], "pathPrefix": "/v1"})),
    );
    assert_eq!(url(&routed), Value::string("http://a.example/v1"));
    let default_prefix = resource_value(fields, "echo", spec(json!({"hostnames": ["a.example"]})));
    assert_eq!(url(&default_prefix), Value::string("http://a.example/"));
    let no_hosts = resource_value(fields, "echo", spec(json!({"pathPrefix": "/"})));
    assert_eq!(url(&no_hosts), Value::Null);
    let mut unknown = routed.clone();
    set(&mut unknown, &["gateway", "path_prefix"], Value::Unknown);
    assert_eq!(url(&unknown), Value::Unknown);
}

#[test]
fn schema_follows_the_api() {
    let resource = inference();
    let block = &resource.schema().block;
    assert_eq!(block.invariant_violations(""), Vec::<String>::new());
    let container = block.nested("container").unwrap();
    assert_eq!(
        (container.nesting, container.min_items),
        (Nesting::Single, 1)
    );
    let resources = container.block.nested("resources").unwrap();
    assert_eq!(
        resources.block.attribute("requests").unwrap().ty,
        Type::map(Type::String),
        "quantities are a map of strings"
    );
    let fit = block.nested("gpu").unwrap().block.nested("fit").unwrap();
    assert_eq!(fit.block.attribute("runtime_gib").unwrap().ty, Type::Number);
    assert_eq!(fit.block.nested("modules").unwrap().nesting, Nesting::List);
    for computed in [
        "capacity_class",
        "per_gpu_memory_gib",
        "url",
        "ready",
        "ready_replicas",
    ] {
        let attr = block.attribute(computed).unwrap();
        assert!(attr.computed && !attr.optional, "{computed}");
    }
    assert!(block.attribute("wait_for").unwrap().optional);
    assert!(block.attribute("intent").unwrap().optional);
}

#[test]
fn only_name_and_namespace_replace() {
    assert_eq!(
        inference().replacing_attributes().to_vec(),
        vec!["name".to_string(), "namespace".to_string()]
    );
}

fn object(generation: i64, status: Json) -> Json {
    json!({"metadata": {"generation": generation}, "status": status})
}

/// A stalled rollout (`Ready`'s message starts `rollout stalled: `, docs/CONDITIONS.md) is `Stalled`, whose timeout
/// advises a fix; a rollout that only progresses, or pods waiting for a node, is `Waiting`, which may need more time.
#[test]
fn a_stalled_rollout_is_told_from_a_slow_one() {
    let progressing = |message: &str| {
        object(
            1,
            json!({"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "False",
                "reason": "Progressing", "message": message}]}),
        )
    };
    let stalled = "rollout stalled: pod chat-1 container main: cannot pull image \"x\": not found";
    assert_eq!(
        check::<Inference>(READY, &progressing(stalled), &Value::Null),
        WaitState::Stalled(format!("not Ready: Progressing: {stalled}"))
    );
    assert_eq!(
        check::<Inference>(READY, &progressing("0 of 1 replicas ready"), &Value::Null),
        WaitState::Waiting("not Ready: Progressing: 0 of 1 replicas ready".into())
    );
}

/// A user's finding: `wait_for = "ready"` ended on a service whose hostname another service holds, so the apply
/// succeeded while its URL served the other one. Ready pods without the route are `Stalled` on the conflict.
#[test]
fn a_hostname_held_by_another_service_is_not_ready() {
    let conflict = "hostname model.localhost path / is held by demo/echo (older)";
    let routed = |status: &str, reason: &str| {
        object(
            1,
            json!({"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"},
                {"type": "RouteReady", "status": status, "reason": reason, "message": conflict}]}),
        )
    };
    assert_eq!(
        check::<Inference>(READY, &routed("False", "HostnameConflict"), &Value::Null),
        WaitState::Stalled(format!("not routed: HostnameConflict: {conflict}"))
    );
    assert_eq!(
        check::<Inference>(READY, &routed("True", "Accepted"), &Value::Null),
        WaitState::Done
    );
}

/// A breaker's finding: `wait_for = "ready"` on a service born at 0 (`replicas.min = 0`, intent `automatic`, a
/// trigger) waited out its timeout, advising a longer one, and tainted the new object, replaced at every later apply.
/// At rest by design, it ends the wait at once, saying what to set; a scale-up in progress still waits.
#[test]
fn a_service_at_rest_at_zero_ends_a_wait_for_readiness() {
    let ready = |reason: &str, message: &str| {
        object(
            1,
            json!({"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "False",
                "reason": reason, "message": message, "observedGeneration": 1}]}),
        )
    };
    let at_rest =
        "the Deployment is at 0 replicas: replicas.min is 0 and the autoscaler holds it there";
    let WaitState::Failed(why) =
        check::<Inference>(READY, &ready("ScaledToZero", at_rest), &Value::Null)
    else {
        panic!("a service at rest never becomes ready by itself")
    };
    assert!(
        why.starts_with(&format!(
            "it rests at 0 replicas (Ready=False, ScaledToZero: {at_rest})"
        )) && why.contains("wait_for = \"reconciled\"")
            && why.contains("replicas.min >= 1"),
        "{why}"
    );
    assert_eq!(
        check::<Inference>(RECONCILED, &ready("ScaledToZero", at_rest), &Value::Null),
        WaitState::Done,
        "reconciled is what a service that may rest at 0 can wait for"
    );
    let raising = "the Deployment has 0 replicas: raising it to the autoscaler's minimum";
    assert_eq!(
        check::<Inference>(READY, &ready("Progressing", raising), &Value::Null),
        WaitState::Waiting(format!("not Ready: Progressing: {raising}"))
    );
}

/// A volume of a Dataset's claim the allowlist refuses: nothing is applied until the allowlist or the configuration
/// changes, so the wait's timeout advises a fix, not a longer wait.
#[test]
fn a_dataset_claim_the_allowlist_refuses_stalls_a_wait_for_readiness() {
    let denied = "spec.volumes[0].persistentVolumeClaim.claimName: claim \"data\" holds Dataset corpus and ...";
    let object = object(
        1,
        json!({"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "False",
            "reason": "AccessDenied", "message": denied, "observedGeneration": 1}]}),
    );
    assert_eq!(
        check::<Inference>(READY, &object, &Value::Null),
        WaitState::Stalled(format!("not Ready: AccessDenied: {denied}"))
    );
}

#[test]
fn ready_names_the_unschedulable_class() {
    let stuck = object(
        1,
        json!({"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "False",
            "reason": "Unschedulable", "message": "0/3 nodes are available"}]}),
    );
    let state = Value::Object(BTreeMap::from([(
        "capacity_class".to_string(),
        Value::string("141gi"),
    )]));
    assert_eq!(
        check::<Inference>(READY, &stuck, &state),
        WaitState::Waiting(
            "pods Unschedulable: no node of class 141gi (0/3 nodes are available)".into()
        )
    );
    let ready = object(
        1,
        json!({"observedGeneration": 1, "readyReplicas": 2,
            "conditions": [{"type": "Ready", "status": "True"}]}),
    );
    assert_eq!(
        check::<Inference>(READY, &ready, &Value::Null),
        WaitState::Done
    );
    assert_eq!(
        live_facts::<Inference>(&ready),
        BTreeMap::from([
            ("ready".to_string(), Value::Bool(true)),
            (
                "ready_replicas".to_string(),
                Value::Number(Number::from(2i64))
            ),
        ])
    );
    assert_eq!(
        live_facts::<Inference>(&json!({}))["ready_replicas"],
        Value::Number(Number::from(0i64))
    );
}

/// A Terraform number as the plugin receives it (cty's decimal text, 512-bit precision).
fn number(text: &str) -> Value {
    Value::Number(Number::parse(text).unwrap())
}

// Issue 24 case 4 (terraform#36367, plugin-framework#815): decimals that are not float64s plan at the nearest float64.
#[test]
fn decimal_numbers_that_are_not_float64_plan_at_the_nearest_float64() {
    let resource = inference();
    let fields = resource.fields();
    let spec = json!({"model": {"name": "m"}, "container": {"image": "i"}, "gpu": {"count": 1, "fit": {
        "modules": [{"name": "m", "weightsGiB": 14.3, "kvCacheGiB": 1, "placement": "sharded"}],
        "runtimeGiB": 1, "marginPercent": 7}}});
    let mut value = resource_value(fields, "m", spec);
    // 1 - 0.99 and 0.1 + 0.2 as Terraform computes them.
    set(
        &mut value,
        &["gpu", "fit", "modules", "kv_cache_gib"],
        number("0.0100000000000000000000000000000000000000000000000000000000000000003"),
    );
    set(
        &mut value,
        &["gpu", "fit", "runtime_gib"],
        number("0.3000000000000000000000000000000000000000000000000000000000000000001"),
    );
    let values = plan_time::<Inference>(fields, &value).unwrap();
    // (14.3 + 0.01 + 0.3) x 1.07 = 15.6327 GiB = 16008 MiB: over 16gi's 15360 MiB.
    assert_eq!(values["capacity_class"], Value::string("24gi"));
    assert_eq!(
        values["per_gpu_memory_gib"],
        Value::Number(Number::from(16i64))
    );
    // The object gets the nearest float64s, and validation has nothing to say.
    let spec = fields::to_json(fields, &value, &crate::diag::AttrPath::root()).unwrap();
    assert_eq!(spec["gpu"]["fit"]["runtimeGiB"], json!(0.3));
    assert_eq!(spec["gpu"]["fit"]["modules"][0]["kvCacheGiB"], json!(0.01));
    assert!(
        resource.validate(&value).0.is_empty(),
        "{:?}",
        resource.validate(&value)
    );
}

// Issue 24 case 4, the class: anything the API server would refuse is refused at validate time, on its attribute.
#[test]
fn values_the_api_server_would_refuse_fail_validation_on_their_path() {
    let resource = inference();
    let fields = resource.fields();
    let spec = json!({"model": {"name": "m"}, "container": {"image": "i",
        "resources": {"requests": {"cpu": "banana", "memory": "1Gi"}}},
        "gpu": {"count": 1, "fit": {"modules": [{"name": "m", "weightsGiB": 1, "placement": "sharded"}],
        "marginPercent": 150}}});
    let mut value = resource_value(fields, "m", spec);
    set(&mut value, &["gpu", "count"], number("1.5"));
    let diags = resource.validate(&value);
    let paths: Vec<String> = diags
        .0
        .iter()
        .map(|d| d.path.as_ref().unwrap().to_string())
        .collect();
    assert!(
        paths.contains(&"container.resources.requests[\"cpu\"]".to_string()),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"gpu.fit.margin_percent".to_string()),
        "{paths:?}"
    );
    assert!(paths.contains(&"gpu.count".to_string()), "{paths:?}");
    // Unknown values are not judged.
    set(
        &mut value,
        &["gpu", "fit", "margin_percent"],
        Value::Unknown,
    );
    set(&mut value, &["gpu", "count"], Value::Unknown);
    let paths: Vec<String> = resource
        .validate(&value)
        .0
        .iter()
        .map(|d| d.path.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(
        paths,
        vec!["container.resources.requests[\"cpu\"]".to_string()]
    );
}

fn shaped_spec(count: i64) -> Json {
    // Llama 3.1 70B (config.json: 80 layers, 64 attention heads, 8 KV heads, head_dim 128), bf16, 16 x 8192 tokens:
    // 40 GiB of KV cache.
    json!({"model": {"name": "m"}, "container": {"image": "i"}, "gpu": {"count": count, "fit": {
        "modules": [{"name": "llama", "weightsGiB": 131.5, "placement": "sharded", "kvCache": {"fromShape": {
            "layers": 80, "kvHeads": 8, "attentionHeads": 64, "headDim": 128, "dtype": "bf16",
            "contextTokens": 8192, "sequences": 16}}}]}}})
}

// Issue 22: the KV cache from the model's shape is in the plan, split by KV head.
#[test]
fn kv_cache_from_shape_is_planned_per_gpu() {
    let resource = inference();
    let fields = resource.fields();
    let values =
        plan_time::<Inference>(fields, &resource_value(fields, "m", shaped_spec(4))).unwrap();
    assert_eq!(
        values["kv_cache_per_gpu_mib"],
        Value::Number(Number::from(10 * 1024i64))
    );
    // (131.5 / 4 + 10 + 2) x 1.1 = 49.3625 -> 50 GiB, class 80gi.
    assert_eq!(
        values["per_gpu_memory_gib"],
        Value::Number(Number::from(50i64))
    );
    assert_eq!(values["capacity_class"], Value::string("80gi"));
    // 16 GPUs for 8 KV heads: 40 / 8 = 5 GiB each.
    let values =
        plan_time::<Inference>(fields, &resource_value(fields, "m", shaped_spec(16))).unwrap();
    assert_eq!(
        values["kv_cache_per_gpu_mib"],
        Value::Number(Number::from(5 * 1024i64))
    );
    // No module from shape: null.
    let values = plan_time::<Inference>(
        fields,
        &resource_value(fields, "m", fit_spec(70.0, 2, None)),
    )
    .unwrap();
    assert_eq!(values["kv_cache_per_gpu_mib"], Value::Null);
}

#[test]
fn a_shard_count_the_heads_cannot_use_fails_the_plan_on_gpu_count() {
    let resource = inference();
    let fields = resource.fields();
    let err =
        plan_time::<Inference>(fields, &resource_value(fields, "m", shaped_spec(6))).unwrap_err();
    assert_eq!(err.0[0].path.as_ref().unwrap().to_string(), "gpu.count");
    assert!(
        err.0[0]
            .detail
            .contains("valid counts: 1, 2, 4, 8, 16, 32, 64"),
        "{}",
        err.0[0].detail
    );
}

// Issue 18 ("a fit that leaves no room") and issue 22 (a scale-to-zero service no trigger can wake): the operator's
// warning conditions are plan warnings too, on their attributes; unknown values are not judged.
#[test]
fn warnings_match_the_operators_warning_conditions() {
    let resource = inference();
    let fields = resource.fields();
    let mut spec = fit_spec(10.0, 1, Some(0));
    spec["gpu"]["fit"]["marginPercent"] = json!(0);
    spec["replicas"] = json!({"min": 0, "max": 2});
    spec["container"]["resources"] = json!({"requests": {"cpu": "1"}});
    spec["scaling"] = json!({"triggers": [{"type": "prometheus", "metadata": {
        "serverAddress": "http://prometheus.monitoring:9090", "query": "sum(vllm:num_requests_waiting)", "threshold": "5"}}]});
    let value = resource_value(fields, "m", spec);
    let plan = |config: &Value| {
        crate::resources::plan::plan::<Inference>(
            &crate::resources::plan::Definition {
                fields,
                spec_schema: resource.spec_schema(),
                replacing: &[],
            },
            &crate::config::DefaultNamespace::Known("ns".into()),
            &Value::Null,
            config,
            config,
        )
        .unwrap()
        .warnings
    };
    assert!(
        resource.validate(&value).0.is_empty(),
        "validation stays quiet: the plan warns once"
    );
    let diags = plan(&value);
    let warnings: Vec<(String, &str)> = diags
        .0
        .iter()
        .map(|d| (d.path.as_ref().unwrap().to_string(), d.detail.as_str()))
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        diags
            .0
            .iter()
            .all(|d| d.severity == crate::diag::Severity::Warning)
    );
    assert_eq!(warnings[0].0, "gpu.fit");
    assert!(
        warnings[0]
            .1
            .starts_with("gpu.fit: runtimeGiB 0 and marginPercent 0 leave no room")
    );
    assert_eq!(warnings[1].0, "scaling.triggers");
    assert!(
        warnings[1]
            .1
            .contains("scaling.triggers[0] (prometheus on the model's own vllm: metrics)"),
        "{}",
        warnings[1].1
    );

    let mut unknown = value.clone();
    set(
        &mut unknown,
        &["gpu", "fit", "margin_percent"],
        Value::Unknown,
    );
    set(&mut unknown, &["replicas", "min"], Value::Unknown);
    assert!(plan(&unknown).0.is_empty(), "{:?}", plan(&unknown).0);
}

// A new-user trial: `1e3m` (an exponent and a suffix) passed validate, then every apply of the Deployment failed.
#[test]
fn a_quantity_with_an_exponent_and_a_suffix_fails_validation() {
    let resource = inference();
    let fields = resource.fields();
    let spec = json!({"model": {"name": "m"}, "container": {"image": "i",
        "resources": {"requests": {"cpu": "1e3m", "memory": "1e3"}}}});
    let diags = resource.validate(&resource_value(fields, "m", spec));
    let found = paths_and_details(&diags);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "container.resources.requests[\"cpu\"]");
    assert!(
        found[0]
            .1
            .contains("never an exponent and a suffix together"),
        "{found:?}"
    );
}

// The provider hunt's finding: one number beyond float64 (`max = 1e309`) failed the conversion, and validate then
// judged nothing at all, `port = 99999` beside it included; the number is now the error, on its path.
#[test]
fn a_number_beyond_float64_fails_validation_on_its_path() {
    let resource = inference();
    let fields = resource.fields();
    let spec = json!({"model": {"name": "m"}, "container": {"image": "i"}, "replicas": {"min": 1, "max": 2}});
    let mut value = resource_value(fields, "m", spec);
    let huge = crate::value::Number::parse("1e309").unwrap();
    set(&mut value, &["replicas", "max"], Value::Number(huge));
    let diags = resource.validate(&value);
    let found = paths_and_details(&diags);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "replicas.max");
    assert!(found[0].1.contains("beyond the range"), "{found:?}");
}

// A new-user trial: `expires_at = "tomorrow"` passed validate (the CRD's `format: date-time` was not checked), then
// the API server refused the apply.
#[test]
fn an_expiry_that_is_not_a_date_time_fails_validation_with_an_example() {
    let resource = inference();
    let fields = resource.fields();
    let spec = |at: &str| json!({"model": {"name": "m"}, "container": {"image": "i"}, "schedule": {"expiresAt": at}});
    let diags = resource.validate(&resource_value(fields, "m", spec("tomorrow")));
    let found = paths_and_details(&diags);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "schedule.expires_at");
    assert!(found[0].1.contains("RFC 3339"), "{found:?}");
    assert!(found[0].1.contains("2026-12-31T18:00:00Z"), "{found:?}");
    let valid = resource.validate(&resource_value(fields, "m", spec("2026-12-31T18:00:00Z")));
    assert!(valid.0.is_empty(), "{valid:?}");
}

// A new-user trial: a request above its limit passed validate, plan and apply, then the API server refused every
// Deployment the operator rendered.
#[test]
fn a_request_above_its_limit_fails_validation_on_the_request() {
    let resource = inference();
    let fields = resource.fields();
    let spec = json!({"model": {"name": "m"}, "container": {"image": "i",
        "resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "1024Mi", "cpu": "-1"}}}});
    let diags = resource.validate(&resource_value(fields, "m", spec));
    let found = paths_and_details(&diags);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, "container.resources.limits[\"cpu\"]");
    assert!(found[0].1.contains("must not be negative"), "{found:?}");
    assert_eq!(found[1].0, "container.resources.requests[\"memory\"]");
    assert!(
        found[1].1.contains("the memory limit of 1024Mi"),
        "{found:?}"
    );
}

// A user trial: `gpu { count = 1; fit {} }` passed validate and plan, then the plan's fit failed with a decoder's
// "missing field `modules`" on `gpu`. The CRD requires at least one module; Terraform cannot (a list block).
#[test]
fn a_fit_without_modules_fails_validation_on_modules() {
    let resource = inference();
    let fields = resource.fields();
    let spec = json!({"model": {"name": "m"}, "container": {"image": "i"},
        "gpu": {"count": 1, "fit": {"marginPercent": 10}}});
    let mut value = resource_value(fields, "m", spec);
    // Terraform sends an absent list block as an empty list; null is judged the same.
    for modules in [Value::List(vec![]), Value::Null] {
        set(&mut value, &["gpu", "fit", "modules"], modules);
        let diags = resource.validate(&value);
        assert_eq!(diags.0.len(), 1, "{diags:?}");
        let (path, detail) = &paths_and_details(&diags)[0];
        assert_eq!(path, "gpu.fit.modules");
        assert_eq!(diags.0[0].summary, "Missing modules block");
        assert_eq!(
            detail,
            "A `fit` block needs at least one `modules` block (Memory consumers): add one, setting name, \
             placement and weights_gib, or remove the `fit` block. The API server refuses it without."
        );
    }
    // Unknown (a `dynamic "modules"` over a value known only at apply) is not judged.
    set(&mut value, &["gpu", "fit", "modules"], Value::Unknown);
    assert!(resource.validate(&value).0.is_empty());
    // Modules given, or no fit at all: nothing to say.
    assert!(
        resource
            .validate(&resource_value(fields, "m", fit_spec(10.0, 1, None)))
            .0
            .is_empty()
    );
    set(&mut value, &["gpu", "fit"], Value::Null);
    assert!(resource.validate(&value).0.is_empty());
    // The documentation, which marks a list block Optional, says it is required.
    let fit = resource
        .schema()
        .block
        .nested("gpu")
        .unwrap()
        .block
        .nested("fit")
        .unwrap();
    assert_eq!(
        fit.block.nested("modules").unwrap().block.description,
        "Memory consumers. At least one `modules` block is required."
    );
}
