//! The CRDs' CEL rules (`x-kubernetes-validations`) evaluated client-side with `kube-cel`, as the
//! API server would, after the structural checks of [`model_fleet_api::validate`]. Used by
//! `render -f`; the API server stays the authority.

use model_fleet_api::validate::{FieldError, schema_of, validate_schema};
use serde_json::Value;

/// Validates a whole manifest as the API server does on create: first the schema
/// ([`validate_schema`]), then, when that passes, the CEL rules ([`validate_cel`]). An empty
/// result means valid.
pub fn validate_manifest(manifest: &Value) -> Vec<FieldError> {
    let errs = validate_schema(manifest);
    if !errs.is_empty() {
        return errs;
    }
    validate_cel(manifest, None)
}

/// Evaluates the CRD's CEL rules on `manifest`; with `old`, transition rules (`oldSelf`) too, as
/// on an update. Messages read like the API server's (`spec.replicas.min: Invalid value: ...`).
pub fn validate_cel(manifest: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let kind = manifest
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(schema) = schema_of(kind) else {
        return Vec::new();
    };
    match kube_cel::Validator::new().validate(schema, manifest, old) {
        Ok(()) => Vec::new(),
        Err(errs) => errs
            .iter()
            .map(|e| FieldError {
                path: e.field_path.trim_start_matches('.').to_string(),
                message: format!("Invalid value: {}", e.message),
            })
            .collect(),
    }
}
