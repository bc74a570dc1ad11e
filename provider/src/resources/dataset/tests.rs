//! Plan, validate, import-ID and state-upgrade rules of custom-resource-backed types, checked on
//! `modelfleet_dataset` with no cluster at all (plans must never need one), and its schema.

use std::collections::BTreeMap;

use super::*;
use crate::config::{DefaultNamespace, ProviderConfig};
use crate::diag::AttrPath;
use crate::resources::object::parse_import_id;
use crate::resources::{ProviderContext, Resource as _, fields};
use crate::schema::Nesting;
use crate::value::{Number, Type, Value};

fn ctx() -> ProviderContext {
    ProviderContext::new(ProviderConfig {
        namespace: DefaultNamespace::Known("ml".into()),
        ..ProviderConfig::default()
    })
}

/// A configuration value with only the required attributes (what Terraform sends for a minimal
/// `resource` block: every attribute present, nulls and empty collections for the rest).
fn minimal_config(resource: &CustomResource<Dataset>) -> Value {
    let mut config = match Value::null_object(&resource.schema().value_type()) {
        Value::Object(attrs) => attrs,
        _ => unreachable!(),
    };
    config.insert("name".into(), Value::string("corpus-v3"));
    config.insert("version".into(), Value::string("3"));
    config.insert(
        "source".into(),
        Value::Object(BTreeMap::from([
            ("uri".into(), Value::string("s3://bucket/corpus/v3/")),
            ("digest".into(), Value::Null),
        ])),
    );
    config.insert("splits".into(), Value::Map(BTreeMap::new()));
    Value::Object(config)
}

fn with(value: &Value, attr: &str, v: Value) -> Value {
    let Value::Object(mut attrs) = value.clone() else {
        unreachable!()
    };
    attrs.insert(attr.into(), v);
    Value::Object(attrs)
}

#[test]
fn create_plan_fills_only_computed_attributes() {
    // P-04 for datasets: every attribute the provider fills when config is null is Computed,
    // derived from a real plan rather than a hand-kept list.
    let resource = dataset();
    let ctx = ctx();
    let config = minimal_config(&resource);
    let planned = resource.plan(&ctx, &Value::Null, &config, &config).unwrap();
    assert!(planned.requires_replace.is_empty());
    let Value::Object(attrs) = &planned.state else {
        panic!("object expected")
    };
    for (name, value) in attrs {
        let configured = config.get(name).unwrap();
        if value != configured {
            let attr = resource.schema().block.attribute(name);
            assert!(
                attr.is_some_and(|a| a.computed),
                "{name} planned as {value:?} but config has {configured:?} and it is not Computed"
            );
            assert!(
                configured.is_null(),
                "{name}: a configured value must be planned as is"
            );
        }
    }
    assert_eq!(planned.state.get("id"), Some(&Value::Unknown));
    assert_eq!(planned.state.get("namespace"), Some(&Value::string("ml")));
    // The plan conforms to the schema type (invariant 1).
    crate::value::msgpack::encode(&planned.state, &resource.schema().value_type()).unwrap();
    // No client was ever built.
    assert!(!ctx.client.is_initialized());
}

#[test]
fn configured_namespace_wins_and_unknown_provider_namespace_stays_unknown() {
    let resource = dataset();
    let config = with(
        &minimal_config(&resource),
        "namespace",
        Value::string("team-a"),
    );
    let planned = resource
        .plan(&ctx(), &Value::Null, &config, &config)
        .unwrap();
    assert_eq!(
        planned.state.get("namespace"),
        Some(&Value::string("team-a"))
    );

    let unknown_ctx = ProviderContext::new(ProviderConfig {
        namespace: DefaultNamespace::Unknown,
        ..ProviderConfig::default()
    });
    let config = minimal_config(&resource);
    let planned = resource
        .plan(&unknown_ctx, &Value::Null, &config, &config)
        .unwrap();
    assert_eq!(planned.state.get("namespace"), Some(&Value::Unknown));
}

fn applied_state(resource: &CustomResource<Dataset>) -> Value {
    let config = minimal_config(resource);
    let planned = resource
        .plan(&ctx(), &Value::Null, &config, &config)
        .unwrap()
        .state;
    let state = with(&planned, "id", Value::string("ml/corpus-v3"));
    with(
        &state,
        "allowed_service_accounts",
        Value::List(vec![Value::string("trainer")]),
    )
}

#[test]
fn no_change_plans_the_prior_state() {
    let resource = dataset();
    let prior = applied_state(&resource);
    // Terraform's proposed state for an unchanged config is the prior state.
    let planned = resource.plan(&ctx(), &prior, &prior, &prior).unwrap();
    assert_eq!(planned.state, prior);
    assert!(planned.requires_replace.is_empty());
}

#[test]
fn allowed_service_accounts_update_in_place() {
    let resource = dataset();
    let prior = applied_state(&resource);
    let proposed = with(
        &prior,
        "allowed_service_accounts",
        Value::List(vec![Value::string("trainer"), Value::string("eval")]),
    );
    let planned = resource.plan(&ctx(), &prior, &proposed, &proposed).unwrap();
    assert!(planned.requires_replace.is_empty());
    assert_eq!(planned.state, proposed);
}

#[test]
fn immutable_changes_require_replacement() {
    let resource = dataset();
    let prior = applied_state(&resource);
    for (attr, value) in [
        ("version", Value::string("4")),
        ("name", Value::string("corpus-v4")),
        ("namespace", Value::string("other")),
        ("description", Value::string("now described")),
        (
            "splits",
            Value::Map(BTreeMap::from([(
                "train".into(),
                Value::Object(BTreeMap::from([
                    ("uri".into(), Value::string("s3://t")),
                    ("records".into(), Value::Number(Number::from(10i64))),
                    ("digest".into(), Value::Null),
                ])),
            )])),
        ),
    ] {
        let proposed = with(&prior, attr, value);
        let planned = resource.plan(&ctx(), &prior, &proposed, &proposed).unwrap();
        assert_eq!(
            planned.requires_replace,
            vec![AttrPath::attrs(&[attr])],
            "{attr}"
        );
    }
}

#[test]
fn destroy_plans_null() {
    let resource = dataset();
    let prior = applied_state(&resource);
    let planned = resource
        .plan(&ctx(), &prior, &Value::Null, &Value::Null)
        .unwrap();
    assert_eq!(planned.state, Value::Null);
}

#[test]
fn validate_points_at_bad_attributes() {
    let resource = dataset();
    let config = with(
        &minimal_config(&resource),
        "name",
        Value::string("Not_Valid"),
    );
    let config = with(&config, "namespace", Value::string("-bad"));
    let config = with(
        &config,
        "timeouts",
        Value::Object(BTreeMap::from([
            ("create".into(), Value::Null),
            ("update".into(), Value::Null),
            ("delete".into(), Value::string("soon")),
        ])),
    );
    let diags = resource.validate(&config);
    let paths: Vec<String> = diags
        .0
        .iter()
        .map(|d| d.path.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(paths, ["name", "namespace", "timeouts.delete"]);
    // Unknown values are not judged.
    let config = with(&minimal_config(&resource), "name", Value::Unknown);
    assert!(resource.validate(&config).0.is_empty());
}

#[test]
fn import_ids_need_namespace_and_name() {
    assert_eq!(
        parse_import_id("Dataset", "ml/corpus-v3").unwrap(),
        ("ml".to_string(), "corpus-v3".to_string())
    );
    for bad in ["corpus-v3", "/x", "ml/", "ML/x", "ml/x/y"] {
        let err = parse_import_id("Dataset", bad).unwrap_err();
        assert!(err.0[0].detail.contains("namespace/name"), "{bad}: {err:?}");
    }
}

// A new-user trial: a name of 70 characters without dots is one the API server takes (IsDNS1123Subdomain limits only
// the total to 253), and the operator reconciles it; validate and import must take it too.
#[test]
fn long_names_without_dots_are_valid_names_and_import_ids() {
    let resource = dataset();
    let long = "d".repeat(70);
    let config = with(&minimal_config(&resource), "name", Value::string(&long));
    assert!(
        resource.validate(&config).0.is_empty(),
        "{:?}",
        resource.validate(&config)
    );
    assert_eq!(
        parse_import_id("Dataset", &format!("ml/{long}")).unwrap(),
        ("ml".to_string(), long.clone())
    );
    let too_long = "d".repeat(254);
    let config = with(&minimal_config(&resource), "name", Value::string(&too_long));
    assert_eq!(resource.validate(&config).0.len(), 1);
    assert!(parse_import_id("Dataset", &format!("ml/{too_long}")).is_err());
}

#[test]
fn upgrade_reads_version_0_json_state() {
    let resource = dataset();
    let state = applied_state(&resource);
    let json = crate::value::json::encode(
        &with(&state, "namespace", Value::string("ml")),
        &resource.schema().value_type(),
    )
    .unwrap();
    let upgraded = resource.upgrade(0, json.as_bytes()).unwrap();
    assert_eq!(upgraded, with(&state, "namespace", Value::string("ml")));
    // State from a newer provider is refused, garbage is an error, not a panic.
    assert!(resource.upgrade(1, json.as_bytes()).is_err());
    assert!(resource.upgrade(0, b"{not json").is_err());
    // A hand-written state as Terraform stores it (missing attributes read as null).
    let upgraded = resource
        .upgrade(
            0,
            br#"{"id":"ml/x","name":"x","namespace":"ml","version":"1","source":{"uri":"s3://x","digest":null},"splits":{}}"#,
        )
        .unwrap();
    assert_eq!(upgraded.get("allowed_service_accounts"), Some(&Value::Null));
    assert_eq!(upgraded.get("pvc"), Some(&Value::Null));
}

#[test]
fn apply_time_state_equals_plan_plus_computed() {
    // Invariant 4: everything known in the plan comes back unchanged; what create_or_update
    // returns is the planned object with id/namespace set. Checked through the JSON mapping:
    // planned -> spec JSON -> state value is the identity on spec attributes.
    let resource = dataset();
    let state = applied_state(&resource);
    let spec = fields::to_json(resource.fields(), &state, &AttrPath::root()).unwrap();
    let back = fields::from_json(resource.fields(), &spec);
    for field in resource.fields() {
        assert_eq!(
            back.get(&field.tf_name),
            state.get(&field.tf_name),
            "{}",
            field.tf_name
        );
    }
}

#[test]
fn schema_follows_the_api() {
    let resource = dataset();
    let block = &resource.schema().block;
    assert_eq!(block.invariant_violations(""), Vec::<String>::new());
    assert!(block.attribute("version").unwrap().required);
    assert_eq!(
        block.attribute("allowed_service_accounts").unwrap().ty,
        Type::list(Type::String)
    );
    let source = block.nested("source").unwrap();
    assert_eq!((source.nesting, source.min_items), (Nesting::Single, 1));
    assert!(source.block.attribute("uri").unwrap().required);
    let splits = block.nested("splits").unwrap();
    assert_eq!(splits.nesting, Nesting::Map);
    assert_eq!(splits.block.attribute("records").unwrap().ty, Type::Number);
    assert_eq!(
        block
            .nested("pvc")
            .unwrap()
            .block
            .attribute("claim_name")
            .unwrap()
            .ty,
        Type::String
    );
    assert!(block.attribute("id").unwrap().computed);
    let ns = block.attribute("namespace").unwrap();
    assert!(ns.optional && ns.computed);
}

#[test]
fn everything_but_allowed_service_accounts_replaces() {
    let resource = dataset();
    let replacing = resource.replacing_attributes().to_vec();
    assert!(!replacing.contains(&"allowed_service_accounts".to_string()));
    for attr in [
        "name",
        "namespace",
        "version",
        "source",
        "format",
        "splits",
        "description",
        "pvc",
    ] {
        assert!(replacing.contains(&attr.to_string()), "{attr}");
    }
    // Every requires-replace path exists in the schema.
    let block = &resource.schema().block;
    for attr in &replacing {
        assert!(
            block.attribute(attr).is_some() || block.nested(attr).is_some(),
            "{attr}"
        );
    }
}
