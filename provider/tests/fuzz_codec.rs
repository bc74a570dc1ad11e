//! Issue 18, fuzzing the tfplugin5 DynamicValue codec (proptest at scale) against the schemas Terraform really sends:
//! every `modelfleet_*` resource's state type and the provider configuration type. Arbitrary bytes and mutations of
//! valid encodings decode to a value or an error, never a panic; a decoded value re-encodes and decodes to itself
//! (msgpack and JSON). The codec's own generic round-trip properties are in `src/value`. Case count: proptest's
//! default (256) in `cargo test`, more with `PROPTEST_CASES`.

use proptest::prelude::*;
use terraform_provider_modelfleet::resources::Registry;
use terraform_provider_modelfleet::schema::provider_schema;
use terraform_provider_modelfleet::value::{Type, json, msgpack};

fn schema_types() -> Vec<Type> {
    let mut types: Vec<Type> = Registry::builtin()
        .iter()
        .map(|r| r.schema().value_type())
        .collect();
    types.push(provider_schema().value_type());
    types
}

/// Decoding never panics; what decodes re-encodes and decodes to the same value in both encodings.
fn check(bytes: &[u8], ty: &Type) -> Result<(), TestCaseError> {
    if let Ok(value) = msgpack::decode(bytes, ty) {
        let encoded =
            msgpack::encode(&value, ty).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(msgpack::decode(&encoded, ty).ok(), Some(value.clone()));
        if let Ok(text) = json::encode(&value, ty) {
            prop_assert_eq!(json::decode(text.as_bytes(), ty).ok(), Some(value));
        }
    }
    if let Ok(value) = json::decode(bytes, ty) {
        let text = json::encode(&value, ty).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(json::decode(text.as_bytes(), ty).ok(), Some(value));
    }
    Ok(())
}

proptest! {
    #[test]
    fn arbitrary_bytes_against_real_schemas(bytes in prop::collection::vec(any::<u8>(), 0..512), which in any::<prop::sample::Index>()) {
        let types = schema_types();
        check(&bytes, which.get(&types))?;
    }

    #[test]
    fn arbitrary_json_text_against_real_schemas(text in r#"\{("[a-z_]{1,12}":(null|true|[0-9]{1,30}|"[a-z]{0,8}"|\[\]|\{\}),?){0,8}\}"#, which in any::<prop::sample::Index>()) {
        let types = schema_types();
        check(text.as_bytes(), which.get(&types))?;
    }

    #[test]
    fn mutated_null_filled_states_never_panic(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let types = schema_types();
        let ty = which.get(&types);
        // A valid state: every attribute null (how Terraform sends an optional-only configuration).
        let valid = msgpack::encode(&terraform_provider_modelfleet::value::Value::Object(Default::default()), ty)
            .or_else(|_| msgpack::encode(&terraform_provider_modelfleet::value::Value::Null, ty))
            .unwrap();
        let mut bytes = valid;
        for (at, byte) in edits {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        check(&bytes, ty)?;
    }
}
