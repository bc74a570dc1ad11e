//! Plan-time computed values from configurations (DESIGN.md sections 4 and 6), no cluster.

use serde_json::json;

use super::*;
use crate::resources::inference::inference;
use crate::resources::training::training;

fn resource_value(fields: &[Field], name: &str, spec: Json) -> Value {
    let mut value = fields::from_json(fields, spec.as_object().unwrap());
    if let Value::Object(attrs) = &mut value {
        attrs.insert("name".into(), Value::string(name));
    }
    value
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
    let fields = resource.inner().fields();
    let value = resource_value(fields, "llama", fit_spec(70.0, 2, Some(4)));
    let values = plan_time_values(WorkloadKind::Inference, fields, &value).unwrap();
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
    let fields = resource.inner().fields();
    let mut value = resource_value(fields, "llama", fit_spec(70.0, 2, None));
    set(
        &mut value,
        &["gpu", "fit", "modules", "weights_gib"],
        Value::Unknown,
    );
    let values = plan_time_values(WorkloadKind::Inference, fields, &value).unwrap();
    assert_eq!(values["capacity_class"], Value::Unknown);
    assert_eq!(values["per_gpu_memory_gib"], Value::Unknown);

    let plain = resource_value(
        fields,
        "echo",
        json!({"model": {"name": "m"}, "container": {"image": "i"}}),
    );
    let values = plan_time_values(WorkloadKind::Inference, fields, &plain).unwrap();
    assert_eq!(values["capacity_class"], Value::Null);
    assert_eq!(values["per_gpu_memory_gib"], Value::Null);
}

#[test]
fn decimal_sizes_are_exact() {
    // 13.5 + 20 = 33.5 on one GPU, + 2 runtime = 35.5, x 1.1 = 39.05 GiB = 39987.2 MiB:
    // above 40gi's usable 39538 MiB, so 48gi (a float-rounded 39.05 would not change that, but the
    // class edge is where drift would show).
    let resource = inference();
    let fields = resource.inner().fields();
    let value = resource_value(fields, "m", fit_spec(13.5, 1, None));
    let values = plan_time_values(WorkloadKind::Inference, fields, &value).unwrap();
    assert_eq!(values["capacity_class"], Value::string("48gi"));
    assert_eq!(
        values["per_gpu_memory_gib"],
        Value::Number(Number::from(40i64))
    );
}

#[test]
fn a_fit_too_big_is_an_error_on_the_fit_block() {
    let resource = inference();
    let fields = resource.inner().fields();
    let value = resource_value(fields, "huge", fit_spec(400.0, 1, None));
    let err = plan_time_values(WorkloadKind::Inference, fields, &value).unwrap_err();
    assert_eq!(err.0[0].path.as_ref().unwrap().to_string(), "gpu.fit");
    assert!(
        err.0[0].detail.contains("shard over at least"),
        "{:?}",
        err.0[0]
    );
}

#[test]
fn url_from_the_first_hostname_and_path_prefix() {
    let resource = inference();
    let fields = resource.inner().fields();
    let spec = |gateway: Json| json!({"model": {"name": "m"}, "container": {"image": "i"}, "gateway": gateway});
    let url = |value: &Value| {
        plan_time_values(WorkloadKind::Inference, fields, value).unwrap()["url"].clone()
    };
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
fn job_name_follows_the_operator() {
    let resource = training();
    let fields = resource.inner().fields();
    let spec = json!({"container": {"image": "i"}, "completionMode": "Indexed", "completions": 12});
    let value = resource_value(fields, "finetune", spec.clone());
    let values = plan_time_values(WorkloadKind::Training, fields, &value).unwrap();
    let expected = job_name("finetune", &serde_json::from_value(spec).unwrap());
    assert_eq!(values["job_name"], Value::string(expected));
    let long = "x".repeat(70);
    let value = resource_value(fields, &long, json!({"container": {"image": "i"}}));
    let Value::String(name) =
        &plan_time_values(WorkloadKind::Training, fields, &value).unwrap()["job_name"]
    else {
        panic!("known job name expected")
    };
    assert!(name.len() <= 63, "{name}");
    let mut unknown = value.clone();
    set(&mut unknown, &["name"], Value::Unknown);
    assert_eq!(
        plan_time_values(WorkloadKind::Training, fields, &unknown).unwrap()["job_name"],
        Value::Unknown
    );
}
