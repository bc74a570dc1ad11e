use super::*;
use crate::diag::AttrPath;
use crate::value::Value;
use serde_json::Value as Json;

#[test]
fn snake_case_names() {
    for (camel, snake) in [
        ("allowedServiceAccounts", "allowed_service_accounts"),
        ("claimName", "claim_name"),
        ("perGpuMemoryGiB", "per_gpu_memory_gib"),
        ("runtimeGiB", "runtime_gib"),
        ("uri", "uri"),
        ("HTTPRoute", "http_route"),
        ("pathPrefix", "path_prefix"),
        ("ttlSecondsAfterFinished", "ttl_seconds_after_finished"),
        ("idleReplicaCount", "idle_replica_count"),
    ] {
        assert_eq!(snake_case(camel), snake, "{camel}");
    }
}

fn sample_schema() -> Json {
    serde_json::json!({
        "type": "object",
        "required": ["version", "source"],
        "properties": {
            "version": {"type": "string", "description": "v"},
            "source": {"type": "object", "required": ["uri"], "properties": {
                "uri": {"type": "string"}, "digest": {"type": "string", "nullable": true}}},
            "splits": {"type": "object", "additionalProperties": {"type": "object", "required": ["uri"], "properties": {
                "uri": {"type": "string"}, "records": {"type": "integer", "format": "int64"}}}},
            "allowedServiceAccounts": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "cpu": {"x-kubernetes-int-or-string": true},
            "ports": {"type": "array", "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }
    })
}

#[test]
fn derives_attributes_and_blocks() {
    let fields = fields_from_openapi(&sample_schema());
    let mut block = Block::default();
    add_to_block(&mut block, &fields);
    assert!(block.attribute("version").unwrap().required);
    assert_eq!(
        block.attribute("allowed_service_accounts").unwrap().ty,
        Type::list(Type::String)
    );
    assert_eq!(
        block.attribute("labels").unwrap().ty,
        Type::map(Type::String)
    );
    assert_eq!(block.attribute("cpu").unwrap().ty, Type::String);
    assert_eq!(block.attribute("extra").unwrap().ty, Type::String);
    let source = block.nested("source").unwrap();
    assert_eq!(
        (source.nesting, source.min_items, source.max_items),
        (Nesting::Single, 1, 1)
    );
    assert!(source.block.attribute("uri").unwrap().required);
    assert!(source.block.attribute("digest").unwrap().optional);
    assert_eq!(block.nested("splits").unwrap().nesting, Nesting::Map);
    assert_eq!(block.nested("ports").unwrap().nesting, Nesting::List);
    assert_eq!(block.invariant_violations(""), Vec::<String>::new());
}

#[test]
fn json_round_trip_keeps_absent_fields_absent() {
    let fields = fields_from_openapi(&sample_schema());
    let spec = serde_json::json!({
        "version": "3",
        "source": {"uri": "s3://b/x"},
        "splits": {"train": {"uri": "s3://b/train", "records": 12345678901i64}},
        "allowedServiceAccounts": ["trainer"],
        "cpu": 2,
        "extra": {"a": [1, 2]}
    });
    let value = from_json(&fields, spec.as_object().unwrap());
    assert_eq!(value.get("ports"), Some(&Value::List(vec![])));
    assert_eq!(value.get("labels"), Some(&Value::Null));
    assert_eq!(value.get("cpu"), Some(&Value::string("2")));
    let back = to_json(&fields, &value, &AttrPath::root()).unwrap();
    let mut expected = spec.as_object().unwrap().clone();
    expected.insert("cpu".into(), Json::String("2".into()));
    assert_eq!(back, expected);
}

#[test]
fn unknown_at_apply_is_reported_with_its_path() {
    let fields = fields_from_openapi(&sample_schema());
    let mut value = from_json(
        &fields,
        serde_json::json!({"version": "1"}).as_object().unwrap(),
    );
    if let Value::Object(attrs) = &mut value {
        attrs.insert(
            "allowed_service_accounts".into(),
            Value::List(vec![Value::Unknown]),
        );
    }
    let err = to_json(&fields, &value, &AttrPath::root()).unwrap_err();
    assert_eq!(
        err.0[0].path.as_ref().unwrap().to_string(),
        "allowed_service_accounts[0]"
    );
}

#[test]
fn kubernetes_paths_map_to_attribute_paths() {
    let fields = fields_from_openapi(&sample_schema());
    assert_eq!(
        attr_path_for(&fields, "spec.source.uri")
            .unwrap()
            .to_string(),
        "source.uri"
    );
    assert_eq!(
        attr_path_for(&fields, "spec.splits[train].uri")
            .unwrap()
            .to_string(),
        "splits[\"train\"].uri"
    );
    assert_eq!(
        attr_path_for(&fields, "spec.allowedServiceAccounts[0]")
            .unwrap()
            .to_string(),
        "allowed_service_accounts[0]"
    );
    assert_eq!(attr_path_for(&fields, "metadata.name"), None);
}

#[test]
fn descriptions_speak_terraform_names_and_list_enum_values() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "intent": {"type": "string", "enum": ["automatic", "active", "suspended"],
                "description": "What to do. Absent means `automatic`."},
            "dtype": {"type": "string", "enum": ["fp16", "bf16"]},
            "fit": {"type": "object", "description": "Sizes; with `runtimeGiB: 0` and `kvCache.fromShape[0].headDim` \
                set, `metadata.generation` and `hiddenSize / attentionHeads` stay, as does `runtimeGiB`.",
                "properties": {
                    "runtimeGiB": {"type": "number"},
                    "kvCache": {"type": "object", "properties": {"fromShape": {"type": "array", "items": {
                        "type": "object", "properties": {"headDim": {"type": "integer"},
                        "hiddenSize": {"type": "integer"}}}}}}
                }}
        }
    });
    let fields = with_terraform_names(fields_from_openapi(&schema));
    let description = |name: &str| {
        fields
            .iter()
            .find(|f| f.json_name == name)
            .unwrap()
            .description
            .clone()
    };
    assert_eq!(
        description("intent"),
        "What to do. Absent means `automatic`. One of `automatic`, `active`, `suspended`."
    );
    assert_eq!(description("dtype"), "One of `fp16`, `bf16`.");
    // Known paths are renamed with their indexes, in every place of a span; a path with a segment the schema does not
    // name (metadata, attentionHeads here) stays as written.
    assert_eq!(
        description("fit"),
        "Sizes; with `runtime_gib: 0` and `kv_cache.from_shape[0].head_dim` set, `metadata.generation` and \
         `hidden_size / attentionHeads` stay, as does `runtime_gib`."
    );
}
