//! `modelfleet_training`: its schema, plan-time values and wait rule, no cluster.

use serde_json::json;

use super::*;
use crate::resources::Resource as _;
use crate::resources::fields::{self, Field};
use crate::resources::object::live_facts;
use crate::resources::plan::plan_time;
use crate::resources::wait::check;

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

#[test]
fn job_name_follows_the_operator() {
    let resource = training();
    let fields = resource.fields();
    let spec = json!({"container": {"image": "i"}, "completionMode": "Indexed", "completions": 12});
    let value = resource_value(fields, "finetune", spec.clone());
    let values = plan_time::<Training>(fields, &value).unwrap();
    let expected =
        model_fleet_api::render::job_name("finetune", &serde_json::from_value(spec).unwrap());
    assert_eq!(values["job_name"], Value::string(expected));
    let long = "x".repeat(70);
    let value = resource_value(fields, &long, json!({"container": {"image": "i"}}));
    let Value::String(name) = &plan_time::<Training>(fields, &value).unwrap()["job_name"] else {
        panic!("known job name expected")
    };
    assert!(name.len() <= 63, "{name}");
    let mut unknown = value.clone();
    set(&mut unknown, &["name"], Value::Unknown);
    assert_eq!(
        plan_time::<Training>(fields, &unknown).unwrap()["job_name"],
        Value::Unknown
    );
}

#[test]
fn everything_but_intent_and_cancel_replaces() {
    let resource = training();
    let replacing = resource.replacing_attributes().to_vec();
    for attr in ["intent", "cancel"] {
        assert!(!replacing.contains(&attr.to_string()), "{attr}");
    }
    for attr in [
        "name",
        "namespace",
        "container",
        "gpu",
        "datasets",
        "retries",
        "parallelism",
    ] {
        assert!(replacing.contains(&attr.to_string()), "{attr}");
    }
    let block = &resource.schema().block;
    assert_eq!(block.invariant_violations(""), Vec::<String>::new());
    for attr in &replacing {
        assert!(
            block.attribute(attr).is_some() || block.nested(attr).is_some(),
            "{attr}"
        );
    }
    for computed in ["capacity_class", "per_gpu_memory_gib", "job_name", "phase"] {
        assert!(block.attribute(computed).unwrap().computed, "{computed}");
    }
}
#[test]
fn completed_follows_the_phase() {
    let run = |phase: &str| json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "phase": phase}});
    assert_eq!(
        check::<Training>(COMPLETED, &run("Succeeded"), &Value::Null),
        WaitState::Done
    );
    assert!(matches!(
        check::<Training>(COMPLETED, &run("Running"), &Value::Null),
        WaitState::Waiting(m) if m.starts_with("phase is Running")
    ));
    assert!(matches!(
        check::<Training>(COMPLETED, &run("Failed"), &Value::Null),
        WaitState::Failed(_)
    ));
    assert!(matches!(
        check::<Training>(COMPLETED, &run("Cancelled"), &Value::Null),
        WaitState::Failed(_)
    ));
    assert_eq!(
        live_facts::<Training>(&run("Running"))["phase"],
        Value::string("Running")
    );
    assert_eq!(live_facts::<Training>(&json!({}))["phase"], Value::Null);
}

/// A wait on a stalled run is `Stalled` (its timeout advises a fix, not more time) and says why, in the operator's
/// words (its `Ready` message).
#[test]
fn a_stalled_run_says_why_while_waiting() {
    let stalled = "run stalled: the Job cannot create pods: exceeded quota: gpus";
    let run = json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "phase": "Pending",
        "conditions": [{"type": "Ready", "status": "False", "reason": "Progressing", "message": stalled}]}});
    assert_eq!(
        check::<Training>(COMPLETED, &run, &Value::Null),
        WaitState::Stalled(format!("phase is Pending, not Succeeded ({stalled})"))
    );
}

/// A user's finding: a run its Datasets refuse waited as if it only needed more time. It is `Stalled`: its timeout
/// advises a fix (the Dataset created, its allowlist widened), not a longer wait.
#[test]
fn a_run_its_datasets_refuse_is_stalled() {
    let denied = "spec.serviceAccountName: ServiceAccount \"default\" is not in allowedServiceAccounts of Dataset \
                  corpus; ask its owner to add it";
    let run = json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "phase": "Pending",
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "AccessDenied", "message": denied, "observedGeneration": 1},
            {"type": "DatasetsReady", "status": "False", "reason": "AccessDenied", "message": denied}]}});
    assert_eq!(
        check::<Training>(COMPLETED, &run, &Value::Null),
        WaitState::Stalled(format!("phase is Pending, not Succeeded ({denied})"))
    );
}

/// A running run some of whose pods a quota refuses says so while a wait for `completed` goes on (its `Degraded`
/// message, as `Ready` is True).
#[test]
fn a_run_missing_pods_says_why_while_waiting() {
    let refused = "the Job cannot create 1 of its 2 pods: exceeded quota: pods";
    let run = json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "reason": "AsExpected", "message": "phase Running"},
            {"type": "Degraded", "status": "True", "reason": "PodsRefused", "message": refused}]}});
    assert_eq!(
        check::<Training>(COMPLETED, &run, &Value::Null),
        WaitState::Waiting(format!("phase is Running, not Succeeded ({refused})"))
    );
    let fine = json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "reason": "AsExpected", "message": "phase Running"},
            {"type": "Degraded", "status": "False", "reason": "AsExpected", "message": ""}]}});
    assert_eq!(
        check::<Training>(COMPLETED, &fine, &Value::Null),
        WaitState::Waiting("phase is Running, not Succeeded (phase Running)".into())
    );
    // A fit warning does not hide why a Pending run is stalled, nor that it is. (Pods a quota refuses, above, may
    // only need time: others may free it.)
    let stalled = "run stalled: pod ft-1-x: container main: cannot pull image \"i\"";
    let warned = json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "phase": "Pending",
        "conditions": [{"type": "Ready", "status": "False", "reason": "Progressing", "message": stalled},
            {"type": "Degraded", "status": "True", "reason": "FitWithoutHeadroom", "message": "no headroom"}]}});
    assert_eq!(
        check::<Training>(COMPLETED, &warned, &Value::Null),
        WaitState::Stalled(format!("phase is Pending, not Succeeded ({stalled})"))
    );
}

// The inference trial's `fit {}` on a TrainingRun: a validation error on `gpu.fit.modules`, not the plan's decoder's.
#[test]
fn a_fit_without_modules_fails_validation_on_modules() {
    let resource = training();
    let fields = resource.fields();
    let spec = json!({"container": {"image": "i"}, "gpu": {"count": 1, "fit": {"shards": 1}}});
    let mut value = resource_value(fields, "r", spec);
    set(&mut value, &["gpu", "fit", "modules"], Value::List(vec![]));
    let diags = resource.validate(&value);
    let paths: Vec<String> = diags
        .0
        .iter()
        .map(|d| d.path.as_ref().map(ToString::to_string).unwrap_or_default())
        .collect();
    assert!(paths.contains(&"gpu.fit.modules".to_string()), "{diags:?}");
}
