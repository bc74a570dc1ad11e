//! Plan rules of workload resources, with no cluster: P-04 (only Computed attributes are filled),
//! run-time facts stable across refreshes, quantities by amount (P-01), fit errors at plan time.

use serde_json::json;

use serde_json::Value as Json;

use super::*;
use crate::config::{DefaultNamespace, ProviderConfig};
use crate::resources::fields;
use crate::resources::inference::inference;
use crate::resources::training::training;
use crate::value::Number;

fn ctx() -> ProviderContext {
    ProviderContext::new(ProviderConfig {
        namespace: DefaultNamespace::Known("ml".into()),
        ..ProviderConfig::default()
    })
}

/// A configuration as Terraform sends it: every attribute present, null unless `spec` sets it.
fn config<K: Kind>(resource: &CustomResource<K>, name: &str, spec: Json) -> Value {
    let Value::Object(mut attrs) = Value::null_object(&resource.schema().value_type()) else {
        unreachable!()
    };
    let Value::Object(spec) = fields::from_json(resource.fields(), spec.as_object().unwrap())
    else {
        unreachable!()
    };
    attrs.extend(spec);
    attrs.insert("name".into(), Value::string(name));
    Value::Object(attrs)
}

fn with(value: &Value, attr: &str, v: Value) -> Value {
    let Value::Object(mut attrs) = value.clone() else {
        unreachable!()
    };
    attrs.insert(attr.into(), v);
    Value::Object(attrs)
}

/// What apply would store for `planned`: unknowns filled as after a create.
fn applied(planned: &Value, facts: &[(&str, Value)]) -> Value {
    let Value::Object(mut attrs) = planned.clone() else {
        unreachable!()
    };
    attrs.insert("id".into(), Value::string("ml/x"));
    for (k, v) in facts {
        attrs.insert((*k).into(), v.clone());
    }
    Value::Object(attrs)
}

/// The planned state of creating `resource` from `config` (no prior state).
fn created<K: Kind>(resource: &CustomResource<K>, config: &Value) -> Value {
    resource
        .plan(&ctx(), &Value::Null, config, config)
        .unwrap()
        .state
}

fn echo_spec(cpu: &str) -> Json {
    json!({"model": {"name": "echo"}, "container": {"image": "hashicorp/http-echo:1.0",
        "resources": {"requests": {"cpu": cpu, "memory": "1.5Gi"}}},
        "gateway": {"hostnames": ["model.localhost"]}})
}

/// P-04: every attribute a real create plan fills while the config leaves it null is Computed.
fn only_computed_attributes_are_filled<K: Kind>(resource: &CustomResource<K>, spec: Json) {
    let config = config(resource, "x", spec);
    let planned = resource
        .plan(&ctx(), &Value::Null, &config, &config)
        .unwrap();
    let Value::Object(attrs) = &planned.state else {
        panic!("object expected")
    };
    for (name, value) in attrs {
        if value != config.get(name).unwrap() {
            let attr = resource.schema().block.attribute(name).unwrap();
            assert!(
                attr.computed,
                "{name} filled by the provider but not Computed"
            );
        }
    }
}

#[test]
fn create_plan_fills_only_computed_attributes() {
    // P-04: derived from real plans of both kinds with every optional attribute left out.
    only_computed_attributes_are_filled(
        &inference(),
        json!({"model": {"name": "m"}, "container": {"image": "i"}}),
    );
    only_computed_attributes_are_filled(&training(), json!({"container": {"image": "i"}}));
    only_computed_attributes_are_filled(&inference(), echo_spec("0.5"));
}

#[test]
fn plan_time_values_are_known_and_facts_unknown_on_create() {
    let resource = inference();
    let config = config(&resource, "echo", echo_spec("0.5"));
    let planned = resource
        .plan(&ctx(), &Value::Null, &config, &config)
        .unwrap()
        .state;
    assert_eq!(
        planned.get("url"),
        Some(&Value::string("http://model.localhost/"))
    );
    assert_eq!(planned.get("capacity_class"), Some(&Value::Null));
    assert_eq!(planned.get("ready"), Some(&Value::Unknown));
    assert_eq!(planned.get("ready_replicas"), Some(&Value::Unknown));
}

#[test]
fn facts_stay_known_until_the_spec_changes() {
    let resource = inference();
    let config = config(&resource, "echo", echo_spec("0.5"));
    let planned = created(&resource, &config);
    let state = applied(
        &planned,
        &[
            ("ready", Value::Bool(true)),
            ("ready_replicas", Value::Number(Number::from(1i64))),
        ],
    );
    // Same configuration (also after a refresh changed the facts): no change at all.
    let refreshed = with(&state, "ready", Value::Bool(false));
    let proposed = with(&config, "id", Value::string("ml/x"));
    let proposed = with(&proposed, "namespace", Value::string("ml"));
    let proposed = with(&proposed, "ready", Value::Bool(false));
    let proposed = with(
        &proposed,
        "ready_replicas",
        Value::Number(Number::from(1i64)),
    );
    let again = resource
        .plan(&ctx(), &refreshed, &proposed, &config)
        .unwrap();
    assert_eq!(again.state, refreshed);
    assert!(again.requires_replace.is_empty());
    // wait_for alone does not touch the facts either.
    let waiting = with(&proposed, "wait_for", Value::string("ready"));
    let plan = resource
        .plan(&ctx(), &refreshed, &waiting, &config)
        .unwrap()
        .state;
    assert_eq!(plan.get("ready"), Some(&Value::Bool(false)));
    // A spec change makes them unknown.
    let changed = with(&proposed, "intent", Value::string("suspended"));
    let plan = resource
        .plan(&ctx(), &refreshed, &changed, &config)
        .unwrap();
    assert_eq!(plan.state.get("ready"), Some(&Value::Unknown));
    assert!(plan.requires_replace.is_empty(), "intent changes in place");
}

/// A resource without `namespace` lives in the provider's: a change of the provider's `namespace` replaces it, as a
/// change of `namespace` does (the provider hunt found it planned no change, and later writes went to the old one).
#[test]
fn a_changed_provider_namespace_replaces_a_resource_without_one() {
    let resource = inference();
    let config = config(&resource, "echo", echo_spec("0.5"));
    let state = applied(&created(&resource, &config), &[]);
    let proposed = with(&config, "id", Value::string("ml/echo"));
    let proposed = with(&proposed, "namespace", Value::string("ml"));
    let same = resource.plan(&ctx(), &state, &proposed, &config).unwrap();
    assert!(same.requires_replace.is_empty());
    let moved = ProviderContext::new(ProviderConfig {
        namespace: DefaultNamespace::Known("serving".into()),
        ..ProviderConfig::default()
    });
    let plan = resource.plan(&moved, &state, &proposed, &config).unwrap();
    assert_eq!(plan.state.get("namespace"), Some(&Value::string("serving")));
    assert!(
        plan.requires_replace
            .iter()
            .any(|p| format!("{p:?}").contains("namespace")),
        "{:?}",
        plan.requires_replace
    );
    // An unknown provider namespace keeps the prior one.
    let unknown = ProviderContext::new(ProviderConfig {
        namespace: DefaultNamespace::Unknown,
        ..ProviderConfig::default()
    });
    let plan = resource.plan(&unknown, &state, &proposed, &config).unwrap();
    assert_eq!(plan.state.get("namespace"), Some(&Value::string("ml")));
    assert!(plan.requires_replace.is_empty());
}

#[test]
fn equal_quantities_never_replace_a_training_run() {
    // P-01: "0.5" -> "500m" in config is an update of the written form, never a replacement;
    // "0.5" -> "600m" replaces (the run's container is immutable).
    let resource = training();
    let spec =
        |cpu: &str| json!({"container": {"image": "i", "resources": {"requests": {"cpu": cpu}}}});
    let first = config(&resource, "run", spec("0.5"));
    let planned = resource
        .plan(&ctx(), &Value::Null, &first, &first)
        .unwrap()
        .state;
    let state = applied(&planned, &[("phase", Value::string("Running"))]);
    let proposed = |cpu: &str| {
        let c = config(&resource, "run", spec(cpu));
        let c = with(&c, "id", Value::string("ml/x"));
        let c = with(&c, "namespace", Value::string("ml"));
        (
            with(&c, "phase", Value::string("Running")),
            config(&resource, "run", spec(cpu)),
        )
    };
    let (same, same_config) = proposed("500m");
    let plan = resource.plan(&ctx(), &state, &same, &same_config).unwrap();
    assert!(
        plan.requires_replace.is_empty(),
        "{:?}",
        plan.requires_replace
    );
    assert_eq!(plan.state.get("phase"), Some(&Value::string("Running")));
    let (renamed, renamed_config) = (
        with(&same, "name", Value::string("run2")),
        with(&same_config, "name", Value::string("run2")),
    );
    let plan = resource
        .plan(&ctx(), &state, &renamed, &renamed_config)
        .unwrap();
    assert_eq!(plan.requires_replace, vec![AttrPath::attrs(&["name"])]);
    let (other, other_config) = proposed("600m");
    let plan = resource
        .plan(&ctx(), &state, &other, &other_config)
        .unwrap();
    assert_eq!(plan.requires_replace, vec![AttrPath::attrs(&["container"])]);
}

#[test]
fn unplaceable_fit_fails_the_plan_on_its_path() {
    let resource = inference();
    let config = config(
        &resource,
        "huge",
        json!({"model": {"name": "m"}, "container": {"image": "i"}, "gpu": {"count": 1,
            "fit": {"modules": [{"name": "w", "weightsGiB": 400, "placement": "sharded"}]}}}),
    );
    let err = resource
        .plan(&ctx(), &Value::Null, &config, &config)
        .unwrap_err();
    assert_eq!(err.0[0].path.as_ref().unwrap().to_string(), "gpu.fit");
}

#[test]
fn wait_for_values_are_checked_per_kind() {
    let inf = inference();
    let c = with(
        &config(&inf, "x", echo_spec("1")),
        "wait_for",
        Value::string("completed"),
    );
    assert!(inf.validate(&c).has_errors());
    let c = with(&c, "wait_for", Value::string("ready"));
    assert!(!inf.validate(&c).has_errors());
    let tr = training();
    let c = with(
        &config(&tr, "x", json!({"container": {"image": "i"}})),
        "wait_for",
        Value::string("completed"),
    );
    assert!(!tr.validate(&c).has_errors());
}
