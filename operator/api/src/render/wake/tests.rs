//! `scaling.http` rendering: the InterceptorRoute, the ScaledObject's `external-push` trigger, the HTTPRoute to the
//! interceptor with the route header, the ReferenceGrant, and the scale-to-zero warning it silences.

use serde_json::{Value, json};

use super::*;
use crate::render::render_inference;
use crate::render::test_config as config;
use crate::status::inference::scale_from_zero_warning;

fn isvc(scaling: Value, gateway: Value) -> InferenceService {
    serde_json::from_value(json!({
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceService",
        "metadata": {"namespace": "team-a", "name": "chat", "uid": "uid-chat"},
        "spec": {
            "model": {"name": "m"},
            "container": {"image": "example.test/server:1"},
            "replicas": {"min": 0, "max": 3},
            "scaling": scaling,
            "gateway": gateway,
        }
    }))
    .unwrap()
}

fn children(isvc: &InferenceService) -> Vec<Value> {
    render_inference(isvc, &config())
        .children
        .expect("renders")
        .to_values()
}

fn kind<'a>(values: &'a [Value], kind: &str) -> Option<&'a Value> {
    values.iter().find(|v| v["kind"] == kind)
}

#[test]
fn http_renders_an_interceptor_route_with_defaults_and_the_header_rule() {
    let service = isvc(
        json!({"http": {}}),
        json!({"hostnames": ["chat.example.test"]}),
    );
    let values = children(&service);
    let route = kind(&values, "InterceptorRoute").expect("an InterceptorRoute");
    assert_eq!(route["apiVersion"], "http.keda.sh/v1beta1");
    assert_eq!(route["metadata"]["namespace"], "team-a");
    assert_eq!(route["metadata"]["ownerReferences"][0]["uid"], "uid-chat");
    assert_eq!(
        route["spec"],
        json!({
            "target": {"service": "chat", "port": 80},
            "rules": [{"headers": [{"name": ROUTE_HEADER, "value": "team-a/chat"}]}],
            "scalingMetric": {"concurrency": {"targetValue": DEFAULT_TARGET_CONCURRENCY}},
            "timeouts": {"readiness": "600s"},
        })
    );
}

#[test]
fn http_targets_and_timeouts_are_passed_in_the_add_ons_units() {
    let service = isvc(
        json!({"http": {"targetRequestsPerSecond": 5, "coldStartTimeoutSeconds": 900,
                        "requestTimeoutSeconds": 1200}}),
        json!({}),
    );
    let values = children(&service);
    let spec = &kind(&values, "InterceptorRoute").unwrap()["spec"];
    // Only a rate given: no default concurrency target beside it.
    assert_eq!(
        spec["scalingMetric"],
        json!({"requestRate": {"targetValue": 5, "window": "1m"}})
    );
    assert_eq!(
        spec["timeouts"],
        json!({"readiness": "900s", "request": "1200s"})
    );
    let rule = &kind(&values, "HTTPRoute").unwrap()["spec"]["rules"][0];
    assert_eq!(rule["timeouts"], json!({"request": "1200s"}));
    let both = isvc(
        json!({"http": {"targetConcurrency": 4, "targetRequestsPerSecond": 5}}),
        json!({}),
    );
    let values = children(&both);
    let metric = &kind(&values, "InterceptorRoute").unwrap()["spec"]["scalingMetric"];
    assert_eq!(metric["concurrency"]["targetValue"], 4);
    assert_eq!(metric["requestRate"]["targetValue"], 5);
}

#[test]
fn http_adds_the_external_push_trigger_after_the_users_triggers() {
    let service = isvc(
        json!({"http": {}, "triggers": [{"type": "redis", "metadata": {"listName": "q"}}]}),
        json!({}),
    );
    let values = children(&service);
    let scaled = kind(&values, "ScaledObject").expect("a ScaledObject");
    assert_eq!(scaled["spec"]["minReplicaCount"], 0);
    let triggers = scaled["spec"]["triggers"].as_array().unwrap();
    assert_eq!(triggers.len(), 2);
    assert_eq!(triggers[0]["type"], "redis");
    assert_eq!(
        triggers[1],
        json!({"type": "external-push", "name": "http", "metadata": {
            "scalerAddress": "keda-add-ons-http-external-scaler.keda:9090",
            "interceptorRoute": "chat",
        }})
    );
    // With http alone the ScaledObject exists too (KEDA owns the count; no fixed replicas).
    let alone = render_inference(&isvc(json!({"http": {}}), json!({})), &config());
    assert_eq!(alone.facts.fixed_replicas, None);
    assert!(alone.facts.may_scale_to_zero());
    assert!(alone.children.unwrap().scaled_object.is_some());
}

#[test]
fn http_routes_through_the_interceptor_with_the_route_header_after_the_rewrite() {
    let service = isvc(
        json!({"http": {}}),
        json!({"hostnames": ["chat.example.test"], "pathPrefix": "/chat", "stripPathPrefix": true}),
    );
    let values = children(&service);
    let rule = &kind(&values, "HTTPRoute").unwrap()["spec"]["rules"][0];
    assert_eq!(
        rule["backendRefs"],
        json!([{"name": "keda-add-ons-http-interceptor-proxy", "namespace": "keda", "port": 8080}])
    );
    assert_eq!(rule["timeouts"], json!({"request": "0s"}));
    let filters = rule["filters"].as_array().unwrap();
    assert_eq!(filters[0]["type"], "URLRewrite");
    assert_eq!(
        filters[1],
        json!({"type": "RequestHeaderModifier", "requestHeaderModifier": {
            "set": [{"name": ROUTE_HEADER, "value": "team-a/chat"}]}})
    );
    // Without http the route goes to the Service itself, with no namespace and no header.
    let plain = isvc(json!({}), json!({"hostnames": ["chat.example.test"]}));
    let values = children(&plain);
    let rule = &kind(&values, "HTTPRoute").unwrap()["spec"]["rules"][0];
    assert_eq!(rule["backendRefs"], json!([{"name": "chat", "port": 80}]));
    assert!(rule.get("filters").is_none());
    assert!(rule.get("timeouts").is_none());
    assert!(kind(&values, "InterceptorRoute").is_none());
    assert!(kind(&values, "ReferenceGrant").is_none());
}

#[test]
fn the_reference_grant_admits_the_namespaces_routes_to_the_interceptor_only() {
    let add_on = HttpAddOn {
        namespace: "http-add-on".into(),
        interceptor_service: "proxy".into(),
        interceptor_port: 8081,
        scaler_address: "scaler.http-add-on:9090".into(),
    };
    let grant = serde_json::to_value(reference_grant("team-a", &add_on)).unwrap();
    assert_eq!(grant["metadata"]["name"], "model-fleet-team-a");
    assert_eq!(grant["metadata"]["namespace"], "http-add-on");
    assert_eq!(grant["metadata"]["labels"][LABEL_ROUTE_NAMESPACE], "team-a");
    assert!(grant["metadata"].get("ownerReferences").is_none());
    assert_eq!(
        grant["spec"],
        json!({
            "from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": "team-a"}],
            "to": [{"group": "", "kind": "Service", "name": "proxy"}],
        })
    );
    let service = isvc(json!({"http": {}}), json!({}));
    let rendered = render_inference(&service, &config()).children.unwrap();
    assert_eq!(
        rendered
            .reference_grant
            .unwrap()
            .metadata
            .namespace
            .as_deref(),
        Some("keda")
    );
}

#[test]
fn http_can_wake_a_service_whose_other_triggers_cannot() {
    let cpu = json!([{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}}]);
    let unwakeable = isvc(json!({"triggers": cpu}), json!({}));
    let warning = scale_from_zero_warning(&unwakeable.spec).expect("a warning");
    assert!(warning.contains("scaling.triggers[0] (cpu)"), "{warning}");
    assert!(warning.contains("scaling.http"), "{warning}");
    let woken = isvc(json!({"triggers": cpu, "http": {}}), json!({}));
    assert_eq!(scale_from_zero_warning(&woken.spec), None);
}
