//! Rules of Kubernetes' `ValidateResourceRequirements` (`pkg/apis/core/validation/validation.go`, v1.35.4) that the
//! CRDs cannot state: no request exceeds the limit of the same resource, an extended resource is whole and not
//! overcommitted, and huge pages come in whole pages of a valid size (that no quantity is negative is the schema
//! walk's, [`crate::validate`]; that a not-overcommitted request has a limit, and huge pages a `cpu` or `memory`
//! beside them, are CRD rules, as they test only which names are present). The API server checks these only on the
//! rendered Deployment or Job (a reconcile error that never heals), so they are checked here, where the provider's
//! `validate` and `plan` and the operator's `render -f` see them. They are not CEL rules: the API server's quantity
//! library has no `sign()`, and a comparison of the int-or-string map values exceeds its CEL cost budget (tried on
//! kube-apiserver v1.35.4). [`check_gpu`] adds a rule of our own API: the main container's `resources` do not name
//! the GPU's resource, which `gpu` sets.

use serde_json::{Map, Value};

use super::FieldError;
use crate::exact::Exact;

/// Whether `schema` is a resource-requirements object: `requests` and `limits` maps of int-or-string quantities.
fn is_resources(schema: &Value) -> bool {
    ["requests", "limits"].iter().all(|map| {
        schema
            .pointer(&format!(
                "/properties/{map}/additionalProperties/x-kubernetes-int-or-string"
            ))
            .and_then(Value::as_bool)
            == Some(true)
    })
}

/// The amounts of a `requests` or `limits` map by resource name; values that are not quantities (reported by the
/// schema walk) or beyond exact arithmetic are left out.
fn amounts<'a>(obj: &'a Map<String, Value>, map: &str) -> Vec<(&'a str, &'a Value, Exact)> {
    let Some(Value::Object(entries)) = obj.get(map) else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|(name, value)| {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            crate::quantity::parse(&text).map(|amount| (name.as_str(), value, amount))
        })
        .collect()
}

/// Whether `name` is an extended resource (`example.com/device`, `nvidia.com/gpu`): a name with a `/` outside the
/// `kubernetes.io/` namespace (Kubernetes' `IsExtendedResourceName` for the names a container map can hold; the
/// standard ones have no `/`, which a CRD rule checks). Kubernetes counts them in whole units and never overcommits
/// them (`IsIntegerResourceName`, `IsOvercommitAllowed`).
fn is_extended(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/")
}

/// Whether a request of `name` may be below its limit: Kubernetes' `IsOvercommitAllowed`, a native resource that is
/// not huge pages (extended resources and `hugepages-<size>` are never overcommitted).
fn overcommit_allowed(name: &str) -> bool {
    !is_extended(name) && !name.starts_with("hugepages-")
}

/// The page size of a `hugepages-<size>` resource name: `None` for another name, `Some(None)` when `<size>` is no
/// page size Kubernetes accepts (`IsHugePageResourceValueDivisible`: a quantity, positive and whole), else the size
/// in bytes.
fn page_size(name: &str) -> Option<Option<i128>> {
    let size = name.strip_prefix("hugepages-")?;
    Some(
        crate::quantity::parse(size)
            .filter(|size| *size > Exact::ZERO && is_whole(*size))
            .map(Exact::ceil),
    )
}

/// Whether `amount` is whole as Kubernetes counts it: `MilliValue() % 1000 == 0`, the milli value rounded up (so
/// `0.9999999` counts as 1, as on the API server); an amount too large to multiply is left to the API server.
fn is_whole(amount: Exact) -> bool {
    amount
        .checked_mul(Exact::int(1000))
        .is_none_or(|milli| milli.ceil() % 1000 == 0)
}

/// Checks the resource-requirements object `obj` at `path` when `schema` is one ([`is_resources`]): each error at
/// the quantity's own path (`spec.container.resources.requests.cpu`), naming the fix. The rules are
/// `validateResourceRequirements`': an extended resource in whole units; the request of an extended resource or of
/// huge pages equal to its limit when both are given; otherwise a request at most its limit. (No amount is
/// negative: the schema walk checks that of every quantity, `sizeLimit` too.)
pub fn check(schema: &Value, obj: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    if !is_resources(schema) {
        return;
    }
    let (requests, limits) = (amounts(obj, "requests"), amounts(obj, "limits"));
    let mut refuse = |at: String, value: &Value, why: String| {
        errs.push(FieldError {
            message: format!("Invalid value: {value}: {at} {why}"),
            path: at,
        });
    };
    for (map, entries) in [("requests", &requests), ("limits", &limits)] {
        for (name, value, amount) in entries {
            // A negative amount is the schema walk's (every quantity of the API).
            let at = format!("{path}.{map}.{name}");
            if *amount >= Exact::ZERO && is_extended(name) && !is_whole(*amount) {
                let why = format!(
                    "must be a whole number: {name} is an extended resource, counted in units (Kubernetes refuses \
                     a fraction on the pod)"
                );
                refuse(at, value, why);
            } else if let Some(size) = page_size(name) {
                // Kubernetes' `Value()` rounds the amount up to whole bytes before the division.
                let why = match size {
                    None => Some(
                        "is not a page size Kubernetes takes: name huge pages by a whole, positive page size in \
                         bytes, e.g. hugepages-2Mi or hugepages-1Gi"
                            .to_string(),
                    ),
                    Some(size) if *amount >= Exact::ZERO && amount.ceil() % size != 0 => Some(format!(
                        "must be a whole number of {name} pages (Kubernetes refuses another amount on the pod): \
                         use a multiple of the page size"
                    )),
                    Some(_) => None,
                };
                if let Some(why) = why {
                    refuse(at, value, why);
                }
            }
        }
    }
    for (name, value, request) in &requests {
        let Some((_, limit_value, limit)) =
            limits.iter().find(|(limit_name, ..)| limit_name == name)
        else {
            continue;
        };
        let at = format!("{path}.requests.{name}");
        let limit_text = limit_value
            .as_str()
            .map_or_else(|| limit_value.to_string(), str::to_string);
        if !overcommit_allowed(name) && request != limit {
            let why = format!(
                "must equal the {name} limit of {limit_text} (Kubernetes never overcommits an extended resource or \
                 huge pages): set both to the same amount"
            );
            refuse(at, value, why);
        } else if request > limit {
            let why = format!(
                "must be less than or equal to the {name} limit of {limit_text} (Kubernetes refuses it on the pod): \
                 lower the request or raise the limit"
            );
            refuse(at, value, why);
        }
    }
}

/// Checks, on a spec with `gpu` and `container` (`schema` has both), that the main container's `resources` do not
/// name the GPU's extended resource (`gpu.resourceName`, absent means `nvidia.com/gpu`): `gpu.count` sets it, and
/// the operator writes its limit from `gpu.count` over one given there (and drops a request of it). Not a CRD rule:
/// a rule on the spec would refuse every later change (`intent`, `cancel`) of an object stored before it, as
/// validation ratcheting skips only a rule whose own object is unchanged.
pub fn check_gpu(schema: &Value, obj: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    let has = |name: &str| schema.pointer(&format!("/properties/{name}")).is_some();
    if !(has("gpu") && has("container")) {
        return;
    }
    let gpu = obj
        .get("gpu")
        .and_then(|g| g.get("resourceName"))
        .and_then(Value::as_str)
        .unwrap_or(crate::capacity::DEFAULT_GPU_RESOURCE);
    for map in ["requests", "limits"] {
        let Some(value) = obj
            .get("container")
            .and_then(|c| c.pointer(&format!("/resources/{map}")))
            .and_then(|m| m.get(gpu))
        else {
            continue;
        };
        let at = format!("{path}.container.resources.{map}.{gpu}");
        errs.push(FieldError {
            message: format!(
                "Invalid value: {value}: {at}: GPUs are set by gpu, not here: remove it and set gpu.count to the GPUs \
                 per pod (the operator writes the {gpu} limit from gpu.count)"
            ),
            path: at,
        });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::validate::{schema_of, validate_value};

    fn errors(resources: serde_json::Value) -> Vec<(String, String)> {
        let schema = schema_of("InferenceService")
            .and_then(|s| s.pointer("/properties/spec"))
            .unwrap();
        let spec = json!({"model": {"name": "m"}, "container": {"image": "i", "resources": resources},
            "initContainers": [{"name": "i", "image": "i", "resources": resources}]});
        validate_value(schema, &spec, "spec")
            .into_iter()
            .map(|e| (e.path, e.message))
            .collect()
    }

    // A new-user trial: negative quantities and a request above its limit passed validate, then the API server
    // refused every Deployment the operator rendered.
    #[test]
    fn negative_quantities_and_requests_above_limits_are_refused() {
        let found = errors(
            json!({"requests": {"cpu": "-1", "memory": "2Gi"}, "limits": {"memory": "1Gi",
            "ephemeral-storage": "-5"}}),
        );
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.container.resources.limits.ephemeral-storage",
                "spec.container.resources.requests.cpu",
                "spec.container.resources.requests.memory",
                "spec.initContainers[0].resources.limits.ephemeral-storage",
                "spec.initContainers[0].resources.requests.cpu",
                "spec.initContainers[0].resources.requests.memory",
            ],
            "{found:?}"
        );
        assert!(found[0].1.contains("must not be negative"), "{found:?}");
        assert!(
            found[2]
                .1
                .contains("must be less than or equal to the memory limit of 1Gi")
                && found[2].1.ends_with("lower the request or raise the limit"),
            "{found:?}"
        );
    }

    #[test]
    fn equal_amounts_written_differently_and_integers_pass() {
        assert_eq!(
            errors(
                json!({"requests": {"cpu": "1000m", "memory": "1Gi"}, "limits": {"cpu": 1,
            "memory": "1024Mi"}})
            ),
            []
        );
        assert_eq!(
            errors(json!({"requests": {"cpu": 2}, "limits": {"memory": "1Gi"}})),
            []
        );
        assert_eq!(errors(json!({"requests": {"cpu": "0"}})), []);
        // An integer request above a string limit is compared by amount.
        let found = errors(json!({"requests": {"cpu": 2}, "limits": {"cpu": "1500m"}}));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].1.contains("the cpu limit of 1500m"), "{found:?}");
    }

    // The hunt's finding: a fraction of a device, or a device request other than its limit, passed validate, then the
    // API server refused every pod template the operator rendered.
    #[test]
    fn extended_resources_are_whole_and_never_overcommitted() {
        let found = errors(json!({"requests": {"example.com/dev": "2", "cpu": "1"},
            "limits": {"example.com/dev": "500m", "cpu": "2"}}));
        let main: Vec<&(String, String)> = found
            .iter()
            .filter(|(p, _)| p.starts_with("spec.container"))
            .collect();
        assert_eq!(main.len(), 2, "{found:?}");
        assert_eq!(main[0].0, "spec.container.resources.limits.example.com/dev");
        assert!(main[0].1.contains("must be a whole number"), "{found:?}");
        assert_eq!(
            main[1].0,
            "spec.container.resources.requests.example.com/dev"
        );
        assert!(
            main[1]
                .1
                .contains("must equal the example.com/dev limit of 500m"),
            "{found:?}"
        );
        // Equal whole amounts, a native kubernetes.io/ name and a request alone pass: that such a request has a limit
        // is a CRD rule (`limits_for_requests_not_overcommitted`).
        assert_eq!(
            errors(
                json!({"requests": {"example.com/dev": 2, "kubernetes.io/x": "0.5", "example.com/fpga": 1},
                "limits": {"example.com/dev": "2"}})
            ),
            []
        );
    }

    // The hunt's finding: a negative emptyDir sizeLimit passed validate, then the pod template was refused.
    #[test]
    fn a_negative_size_limit_is_refused_as_any_quantity() {
        let schema = schema_of("TrainingRun")
            .and_then(|s| s.pointer("/properties/spec"))
            .unwrap();
        let spec = |limit: serde_json::Value| {
            json!({"container": {"image": "i"}, "volumes": [{"name": "scratch", "mountPath": "/scratch",
                "emptyDir": {"sizeLimit": limit}}]})
        };
        for bad in [json!("-1Gi"), json!(-1)] {
            let found = validate_value(schema, &spec(bad.clone()), "spec");
            assert_eq!(found.len(), 1, "{bad}: {found:?}");
            assert_eq!(found[0].path, "spec.volumes[0].emptyDir.sizeLimit");
            assert!(
                found[0].message.contains("must not be negative"),
                "{found:?}"
            );
        }
        assert!(validate_value(schema, &spec(json!("8Gi")), "spec").is_empty());
        // In the API server's words first, then ours; a negative too large for an exact value is negative too.
        for (bad, api_server) in [
            (json!("-1Gi"), "should match"),
            (json!(-1), "should be greater than or equal to 0"),
            (json!("-1e39"), "should match"),
        ] {
            let found = validate_value(schema, &spec(bad.clone()), "spec");
            assert!(found[0].message.contains(api_server), "{bad}: {found:?}");
            assert!(
                found[0].message.contains("must not be negative"),
                "{bad}: {found:?}"
            );
        }
    }

    // Should the CRD's quantity pattern ever refuse what the quantity grammar takes, the API server's refusal is still
    // reported (it is the authority), not dropped.
    #[test]
    fn a_quantity_the_pattern_refuses_is_reported_even_when_the_grammar_takes_it() {
        let schema = json!({"x-kubernetes-int-or-string": true, "pattern": "^1$"});
        let found = validate_value(&schema, &json!("2"), "spec.q");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0]
                .message
                .contains("spec.q in body should match '^1$'"),
            "{found:?}"
        );
        assert!(validate_value(&schema, &json!("1"), "spec.q").is_empty());
    }

    // The review's findings: huge pages are never overcommitted either, and a whole unit is counted as Kubernetes
    // counts it (the milli value rounded up).
    #[test]
    fn huge_pages_are_not_overcommitted_and_whole_units_round_like_kubernetes() {
        let found = errors(
            json!({"requests": {"hugepages-2Mi": "2Mi", "memory": "1Gi"},
            "limits": {"hugepages-2Mi": "4Mi", "memory": "1Gi"}}),
        );
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0]
                .1
                .contains("must equal the hugepages-2Mi limit of 4Mi"),
            "{found:?}"
        );
        assert_eq!(
            errors(
                json!({"requests": {"example.com/dev": "0.9999999"}, "limits": {"example.com/dev": "0.9999999"}})
            ),
            []
        );
    }

    // Leftovers of the hunt: huge pages of a size Kubernetes cannot read, or an amount that is not whole pages,
    // passed validate, then the API server refused every pod template the operator rendered.
    #[test]
    fn huge_pages_come_in_whole_pages_of_a_real_size() {
        let found = errors(
            json!({"limits": {"hugepages-2Mi": "3Mi", "hugepages-2MB": "2Mi",
            "hugepages-0": "0", "hugepages-1500m": "3", "memory": "1Gi"}}),
        );
        let main: Vec<&(String, String)> = found
            .iter()
            .filter(|(p, _)| p.starts_with("spec.container"))
            .collect();
        let paths: Vec<&str> = main.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.container.resources.limits.hugepages-0",
                "spec.container.resources.limits.hugepages-1500m",
                "spec.container.resources.limits.hugepages-2MB",
                "spec.container.resources.limits.hugepages-2Mi",
            ],
            "{found:?}"
        );
        assert!(
            main[..3]
                .iter()
                .all(|(_, m)| m.contains("is not a page size Kubernetes takes")),
            "{found:?}"
        );
        assert!(
            main[3]
                .1
                .contains("must be a whole number of hugepages-2Mi pages"),
            "{found:?}"
        );
        // Whole pages, zero, and an amount written in other units pass; Kubernetes rounds up to whole bytes first.
        assert_eq!(
            errors(
                json!({"requests": {"hugepages-1Gi": "2048Mi", "memory": "1Gi"},
                "limits": {"hugepages-1Gi": "2Gi", "hugepages-2Mi": "0", "hugepages-2048Ki": "4194304"}})
            ),
            []
        );
    }

    // The hunt's finding: `nvidia.com/gpu` in the main container's resources beside `gpu.count` had its limit replaced
    // by `gpu.count` and kept its request (refused when they differed). render -f and the provider refuse it on the
    // field; init containers and specs without the named resource pass.
    #[test]
    fn the_gpus_resource_is_refused_in_the_main_containers_resources() {
        let schema = schema_of("TrainingRun")
            .and_then(|s| s.pointer("/properties/spec"))
            .unwrap();
        let spec = |gpu: serde_json::Value, resources: serde_json::Value| {
            let mut spec = json!({"container": {"image": "i", "resources": resources},
                "initContainers": [{"name": "i", "image": "i", "resources": resources}]});
            if !gpu.is_null() {
                spec["gpu"] = gpu;
            }
            validate_value(schema, &spec, "spec")
        };
        let found = spec(
            json!({"count": 2}),
            json!({"limits": {"nvidia.com/gpu": "1"}}),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].path,
            "spec.container.resources.limits.nvidia.com/gpu"
        );
        assert!(
            found[0].message.contains("GPUs are set by gpu, not here"),
            "{found:?}"
        );
        let named = spec(
            json!({"count": 1, "resourceName": "example.com/gpu"}),
            json!({"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}),
        );
        assert_eq!(named.len(), 2, "{named:?}");
        assert_eq!(
            spec(json!(null), json!({"limits": {"nvidia.com/gpu": "1"}})).len(),
            1
        );
        assert!(
            spec(
                json!({"count": 1}),
                json!({"limits": {"example.com/fpga": "1"}})
            )
            .is_empty()
        );
    }
}
