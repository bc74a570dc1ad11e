//! Data source schemas and values with no cluster: every argument of the resource is readable, nothing but `name`
//! and `namespace` can be set, and a resource state projects onto a value Terraform can decode.

use serde_json::json;

use super::*;
use crate::config::ProviderConfig;
use crate::resources::fields;
use crate::resources::inference::{Inference, inference};
use crate::resources::plan;
use crate::resources::training::training;
use crate::schema::{NestedBlock, Nesting};
use crate::value::msgpack;

#[test]
fn the_schema_is_the_resource_schema_read_only_without_wait_for_and_timeouts() {
    let resource = inference();
    let data_source = ExistingObject::new(Arc::new(inference()));
    let block = &data_source.schema().block;
    assert!(block.blocks.is_empty(), "tfplugin5 has no computed blocks");
    for attribute in &block.attributes {
        let settable = (attribute.required, attribute.optional);
        match attribute.name.as_str() {
            NAME => assert_eq!(settable, (true, false)),
            NAMESPACE => assert_eq!(settable, (false, true), "defaults to the provider's"),
            _ => assert_eq!(settable, (false, false), "{} is read-only", attribute.name),
        }
        assert!(
            attribute.computed || attribute.required,
            "{}",
            attribute.name
        );
    }
    // The same value type as the resource's, less what only configures an apply.
    let Type::Object(mut expected) = resource.schema().block.value_type() else {
        unreachable!()
    };
    expected.remove(WAIT_FOR);
    expected.remove(TIMEOUTS);
    assert_eq!(block.value_type(), Type::Object(expected));
    // A resource block is an attribute of its nesting's type: `gateway` (single) an object, `env` a list.
    let resource_block = &resource.schema().block;
    for nested in &resource_block.blocks {
        if nested.type_name == TIMEOUTS {
            continue;
        }
        let attribute = block.attribute(&nested.type_name).unwrap();
        assert_eq!(attribute.ty, nested.value_type());
        if nested.nesting == Nesting::Single {
            assert!(
                matches!(attribute.ty, Type::Object(_)),
                "{}",
                nested.type_name
            );
        }
    }
    assert!(block.description.contains("InferenceService"));
}

#[test]
fn a_state_projects_onto_a_value_terraform_decodes() {
    let resource = inference();
    let data_source = ExistingObject::new(Arc::new(inference()));
    let spec = json!({
        "model": {"uri": "hf://org/model"},
        "container": {"image": "ghcr.io/org/server:1"},
        "gateway": {"hostnames": ["llm.example.com"], "pathPrefix": "/v1"},
        "env": [{"name": "A", "value": "1"}],
    });
    let Value::Object(mut state) = fields::from_json(resource.fields(), spec.as_object().unwrap())
    else {
        unreachable!()
    };
    state.insert(NAME.into(), Value::string("llm"));
    state.insert(NAMESPACE.into(), Value::string("ml"));
    state.insert(WAIT_FOR.into(), Value::string("ready"));
    let state = plan::with_plan_time_values::<Inference>(resource.fields(), Value::Object(state));

    let value = project(&data_source.schema().block, &state);
    let ty = data_source.schema().block.value_type();
    let bytes = msgpack::encode(&value, &ty).expect("conforms to the data source type");
    let decoded = msgpack::decode(&bytes, &ty).unwrap();
    assert_eq!(decoded, value);
    assert_eq!(
        value.get("url").and_then(Value::as_str),
        Some("http://llm.example.com/v1"),
        "plan-time values are read too"
    );
    assert_eq!(value.get(WAIT_FOR), None);
    assert_eq!(
        value.get("id"),
        Some(&Value::Null),
        "absent in the state: null"
    );
}

#[test]
fn names_are_checked_on_their_attribute_before_any_request() {
    let data_source = ExistingObject::new(Arc::new(training()));
    let ty = data_source.schema().block.value_type();
    let Value::Object(mut config) = Value::null_object(&ty) else {
        unreachable!()
    };
    config.insert(NAME.into(), Value::string("Not_A_Name"));
    config.insert(NAMESPACE.into(), Value::string("ml.prod"));
    let diags = data_source.validate(&Value::Object(config.clone()));
    let paths: Vec<_> = diags.0.iter().map(|d| d.path.clone()).collect();
    assert_eq!(
        paths,
        [
            Some(AttrPath::attrs(&[NAME])),
            Some(AttrPath::attrs(&[NAMESPACE]))
        ]
    );
    config.insert(NAME.into(), Value::Unknown);
    config.insert(NAMESPACE.into(), Value::Null);
    assert!(data_source.validate(&Value::Object(config)).0.is_empty());
}

#[test]
fn a_null_namespace_is_the_providers_and_an_unknown_default_is_an_error_on_namespace() {
    let config = Value::Object([(NAME.to_string(), Value::string("x"))].into());
    let known = DefaultNamespace::Known("ml".into());
    assert_eq!(namespace_of(&config, &known).unwrap(), "ml");
    let set = Value::Object([(NAMESPACE.to_string(), Value::string("team"))].into());
    assert_eq!(
        namespace_of(&set, &DefaultNamespace::Unknown).unwrap(),
        "team"
    );
    let error = namespace_of(&config, &DefaultNamespace::Unknown).unwrap_err();
    assert_eq!(error.0[0].path, Some(AttrPath::attrs(&[NAMESPACE])));
}

#[tokio::test]
async fn a_read_while_the_connection_is_unknown_is_refused_without_a_request() {
    let data_source = ExistingObject::new(Arc::new(inference()));
    let ctx = ProviderContext::new(ProviderConfig {
        // Would be tried (and fail) if the read went on: nothing listens on port 9 of this host.
        host: Some("https://127.0.0.1:9".into()),
        unknown_connection: vec!["host".into(), "token".into()],
        ..ProviderConfig::default()
    });
    let config = Value::Object([(NAME.to_string(), Value::string("chat"))].into());
    let error = data_source.read(&ctx, &config).await.unwrap_err();
    assert_eq!(error.0[0].summary, "Provider connection not known yet");
    assert!(
        error.0[0].detail.contains("`host` and `token` depend on"),
        "{:?}",
        error.0[0]
    );
}

/// A sensitive attribute stays sensitive in the data source: a top-level one keeps its flag, and a block whose body
/// holds one at any depth becomes a sensitive attribute (Terraform then redacts the whole object in plans and
/// outputs); a block without one does not.
#[test]
fn a_block_holding_a_sensitive_attribute_at_any_depth_becomes_a_sensitive_attribute() {
    let block = |attributes: Vec<Attribute>, blocks: Vec<NestedBlock>| Block {
        attributes,
        blocks,
        description: String::new(),
    };
    let nested = |name: &str, body: Block| NestedBlock {
        type_name: name.into(),
        block: body,
        nesting: Nesting::Single,
        min_items: 0,
        max_items: 1,
    };
    let plain = || Attribute::optional("plain", Type::String, "");
    let secret = || Attribute::optional("secret", Type::String, "").sensitive();
    let resource = block(
        vec![
            Attribute::required(NAME, Type::String, ""),
            Attribute::optional("password", Type::String, "").sensitive(),
        ],
        vec![
            nested(
                "auth",
                block(
                    vec![plain()],
                    vec![nested("inner", block(vec![plain(), secret()], vec![]))],
                ),
            ),
            nested(
                "public",
                block(
                    vec![plain()],
                    vec![nested("inner", block(vec![plain()], vec![]))],
                ),
            ),
        ],
    );
    let derived = read_only_block(&resource, "Thing".into());
    let sensitive = |name: &str| derived.attribute(name).unwrap().sensitive;
    assert!(sensitive("password"));
    assert!(sensitive("auth"), "a secret two blocks down");
    assert!(!sensitive("public"));
    assert!(!sensitive(NAME));
}
