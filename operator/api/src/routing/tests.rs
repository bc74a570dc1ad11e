use std::collections::BTreeSet;

use serde_json::json;

use super::*;
use crate::render::test_config as config;

/// An InferenceService `namespace/name` created at `created` (RFC 3339) with `gateway`.
fn isvc(
    namespace: &str,
    name: &str,
    created: &str,
    gateway: serde_json::Value,
) -> InferenceService {
    serde_json::from_value(json!({
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceService",
        "metadata": {
            "namespace": namespace, "name": name, "uid": format!("uid-{namespace}-{name}"),
            "creationTimestamp": created,
        },
        "spec": {
            "model": {"name": "m"},
            "container": {"image": "example.test/server:1"},
            "gateway": gateway,
        }
    }))
    .unwrap()
}

const EARLY: &str = "2026-12-03T10:00:00Z";
const LATE: &str = "2026-12-03T10:05:00Z";

fn chat() -> serde_json::Value {
    json!({"hostnames": ["chat.example.test"], "pathPrefix": "/"})
}

#[test]
fn the_case_as_reported_the_later_service_in_another_namespace_loses_naming_the_holder() {
    let a = isvc("team-a", "a", EARLY, chat());
    let b = isvc("team-b", "b", LATE, chat());
    let all = [a.clone(), b.clone()];
    assert_eq!(conflict(&a, &all, &config()), None, "a is unaffected");
    let lost = conflict(&b, &all, &config()).expect("b conflicts");
    assert_eq!(lost.holder, "team-a/a");
    assert_eq!(lost.claim.hostname.as_deref(), Some("chat.example.test"));
    let message = lost.to_string();
    assert!(message.contains("team-a/a"), "{message}");
    assert!(
        message.contains("chat.example.test path / on Gateway model-fleet-system/shared"),
        "{message}"
    );
    // Deleting a: b holds the claim.
    assert_eq!(conflict(&b, [&b], &config()), None);
    // b's own HTTPRoute, pruned for the conflict, is not said to be "no longer rendered".
    assert_eq!(
        lost.route_removed("HTTPRoute/b"),
        "deleted HTTPRoute/b: chat.example.test path / on Gateway model-fleet-system/shared is served by \
         InferenceService team-a/a (created earlier; RouteReady=False, HostnameConflict)"
    );
}

#[test]
fn ties_on_the_second_go_to_the_alphabetically_first_namespace_and_name() {
    let x = isvc("team-b", "a", EARLY, chat());
    let y = isvc("team-a", "z", EARLY, chat());
    let all = [x.clone(), y.clone()];
    assert_eq!(conflict(&y, &all, &config()), None);
    assert_eq!(conflict(&x, &all, &config()).unwrap().holder, "team-a/z");
}

#[test]
fn the_oldest_of_several_holders_is_named() {
    let first = isvc("n1", "first", "2026-12-03T09:00:00Z", chat());
    let second = isvc("n2", "second", EARLY, chat());
    let last = isvc("n3", "last", LATE, chat());
    let all = [second.clone(), first.clone(), last.clone()];
    assert_eq!(conflict(&last, &all, &config()).unwrap().holder, "n1/first");
    assert_eq!(
        conflict(&second, &all, &config()).unwrap().holder,
        "n1/first"
    );
}

#[test]
fn different_hostnames_paths_gateways_or_listeners_do_not_conflict() {
    let a = isvc("team-a", "a", EARLY, chat());
    let cases = [
        json!({"hostnames": ["other.example.test"]}),
        json!({"hostnames": ["*.example.test"]}),
        json!({"hostnames": ["chat.example.test"], "pathPrefix": "/v1"}),
        json!({"hostnames": ["chat.example.test"], "parentRef": {"name": "other", "namespace": "model-fleet-system"}}),
        json!({}),
    ];
    for gateway in cases {
        let b = isvc("team-b", "b", LATE, gateway.clone());
        assert_eq!(conflict(&b, [&a, &b], &config()), None, "{gateway}");
    }
    let listener = |section: &str| {
        json!({"hostnames": ["chat.example.test"],
               "parentRef": {"name": "shared", "namespace": "model-fleet-system", "sectionName": section}})
    };
    let l1 = isvc("team-a", "a", EARLY, listener("https"));
    let l2 = isvc("team-b", "b", LATE, listener("http"));
    assert_eq!(conflict(&l2, [&l1, &l2], &config()), None);
    // A route on every listener overlaps one on a named listener.
    let every = isvc("team-c", "c", LATE, chat());
    assert_eq!(
        conflict(&every, [&l1, &every], &config()).unwrap().holder,
        "team-a/a"
    );
}

#[test]
fn the_same_claim_spelled_differently_conflicts() {
    let a = isvc(
        "team-a",
        "a",
        EARLY,
        json!({"hostnames": ["x.example.test"], "pathPrefix": "/v1/"}),
    );
    let b = isvc(
        "team-b",
        "b",
        LATE,
        json!({"hostnames": ["y.example.test", "x.example.test"], "pathPrefix": "/v1"}),
    );
    let lost = conflict(&b, [&a, &b], &config()).unwrap();
    assert_eq!(lost.claim.hostname.as_deref(), Some("x.example.test"));
    assert_eq!(lost.claim.path, "/v1");
    // The default Gateway and an explicit parentRef to it are the same Gateway.
    let c = isvc(
        "team-c",
        "c",
        LATE,
        json!({"hostnames": ["x.example.test"], "pathPrefix": "/v1",
        "parentRef": {"name": "shared", "namespace": "model-fleet-system"}}),
    );
    assert_eq!(
        conflict(&c, [&a, &c], &config()).unwrap().holder,
        "team-a/a"
    );
    // Two routes without hostnames share every hostname.
    let d = isvc("team-d", "d", EARLY, json!({}));
    let e = isvc("team-e", "e", LATE, json!({"pathPrefix": "/"}));
    assert_eq!(
        conflict(&e, [&d, &e], &config()).unwrap().holder,
        "team-d/d"
    );
}

#[test]
fn without_a_gateway_or_a_parent_there_is_nothing_to_claim() {
    let a = isvc("team-a", "a", EARLY, chat());
    let mut no_gateway = isvc("team-b", "b", LATE, chat());
    no_gateway.spec.gateway = None;
    assert!(claims(&no_gateway, &config()).is_empty());
    assert_eq!(conflict(&no_gateway, [&a], &config()), None);
    let b = isvc("team-b", "b", LATE, chat());
    assert_eq!(conflict(&b, [&a, &b], &RenderConfig::default()), None);
}

#[test]
fn contenders_are_the_others_sharing_a_claim() {
    let a = isvc("team-a", "a", EARLY, chat());
    let b = isvc("team-b", "b", LATE, chat());
    let c = isvc(
        "team-c",
        "c",
        LATE,
        json!({"hostnames": ["other.example.test"]}),
    );
    let all = [a.clone(), b.clone(), c.clone()];
    let names = |list: Vec<&InferenceService>| {
        list.iter()
            .map(|i| i.metadata.name.clone().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(contenders(&a, &all, &config())), ["b"]);
    assert_eq!(names(contenders(&b, &all, &config())), ["a"]);
    assert!(contenders(&c, &all, &config()).is_empty());
}

/// One service per combination of parent, listener, hostnames and path that the module docs name, the i-th created
/// at `created(i)`.
fn every_combination(created: fn(usize) -> &'static str) -> Vec<InferenceService> {
    let gateways = [
        json!({}),
        json!({"parentRef": {"name": "shared", "namespace": "model-fleet-system"}}),
        json!({"parentRef": {"name": "shared", "namespace": "model-fleet-system", "sectionName": "http"}}),
        json!({"parentRef": {"name": "shared", "namespace": "model-fleet-system", "sectionName": "https"}}),
        json!({"parentRef": {"name": "other"}}),
    ];
    let hostnames = [
        json!(null),
        json!([]),
        json!(["a.test"]),
        json!(["b.test", "a.test"]),
    ];
    let paths = [json!(null), json!("/"), json!("/v1"), json!("/v1/")];
    let mut services = Vec::new();
    for (g, gateway) in gateways.iter().enumerate() {
        for (h, hosts) in hostnames.iter().enumerate() {
            for (p, path) in paths.iter().enumerate() {
                let mut gateway = gateway.clone();
                if !hosts.is_null() {
                    gateway["hostnames"] = hosts.clone();
                }
                if !path.is_null() {
                    gateway["pathPrefix"] = path.clone();
                }
                let at = created(services.len());
                services.push(isvc("team", &format!("s-{g}-{h}-{p}"), at, gateway));
            }
        }
    }
    services
}

/// The borrowed key the hot paths use decides exactly as the owned claims do, over every combination of parent,
/// listener, hostnames and path that the module docs name.
#[test]
fn the_borrowed_claim_key_agrees_with_the_claims() {
    let services = every_combination(|_| EARLY);
    let config = config();
    for a in &services {
        let key = ClaimKey::of(a, &config);
        assert_eq!(key.is_some(), !claims(a, &config).is_empty());
        for b in &services {
            let owned = claims(a, &config)
                .iter()
                .any(|t| claims(b, &config).iter().any(|m| m.overlaps(t)));
            let borrowed = claims(b, &config)
                .iter()
                .any(|m| key.is_some_and(|k| k.covers(m)));
            assert_eq!(
                owned, borrowed,
                "{:?} vs {:?}",
                a.metadata.name, b.metadata.name
            );
        }
    }
}

/// Over every combination the module docs name, the services the index says share a claim are all the decisions
/// need: conflict and contenders over them equal conflict and contenders over the whole fleet. Changing a service's
/// claims and removing it leave no trace.
#[test]
fn the_index_finds_every_service_the_whole_fleet_would() {
    // Half of them older, so that conflicts have holders.
    let mut services = every_combination(|i| if i % 2 == 0 { EARLY } else { LATE });
    services.push(isvc("team", "no-gateway", EARLY, json!(null)));
    let config = config();
    let mut index = ClaimIndex::default();
    for (i, service) in services.iter().enumerate() {
        index.upsert(i, service, &config);
    }
    assert_eq!(index.len(), services.len() - 1, "no gateway, no claim");
    // Sorted: the index hands out the services of a bucket in no particular order.
    let names = |list: Vec<&InferenceService>| -> BTreeSet<String> {
        list.iter()
            .map(|i| i.metadata.name.clone().unwrap())
            .collect()
    };
    for service in &services {
        let shared: Vec<&InferenceService> = index
            .sharing(service, &config)
            .into_iter()
            .map(|i| &services[i])
            .collect();
        assert_eq!(
            conflict(service, shared.iter().copied(), &config),
            conflict(service, &services, &config)
        );
        assert_eq!(
            names(contenders(service, shared.iter().copied(), &config)),
            names(contenders(service, &services, &config))
        );
    }

    // A service that changes its claims leaves its old buckets; one removed leaves every bucket.
    let moved = isvc(
        "team",
        "s-0-1-1",
        EARLY,
        json!({"hostnames": ["moved.test"]}),
    );
    let at = services
        .iter()
        .position(|s| s.metadata.name == moved.metadata.name)
        .unwrap();
    let before = index.sharing_recorded(&at);
    assert!(!before.contains(&at), "not itself");
    assert_eq!(
        before,
        index
            .sharing(&services[at], &config)
            .into_iter()
            .filter(|i| *i != at)
            .collect(),
        "the services it shared a bucket with before the move"
    );
    assert!(!before.is_empty());
    index.upsert(at, &moved, &config);
    assert!(
        index.sharing_recorded(&at).is_empty(),
        "alone on moved.test"
    );
    assert!(!index.sharing(&services[at], &config).contains(&at));
    assert_eq!(index.sharing(&moved, &config), [at].into());
    index.remove(&at);
    assert!(index.sharing(&moved, &config).is_empty());
    for (i, _) in services.iter().enumerate() {
        index.remove(&i);
    }
    assert!(index.is_empty() && index.by_bucket.is_empty());
}
