//! The CRDs' CEL rules (`x-kubernetes-validations`) evaluated client-side with `kube-cel`, as the
//! API server would, after the structural checks of [`crate::validate`]. Used by the operator's `render -f` and by
//! the provider's `terraform validate` / `plan`; the API server stays the authority.

use super::{FieldError, schemas, validate_schema};
use std::sync::OnceLock;

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
/// The schema's defaults are applied first, as the API server does. Each kind's rules are compiled
/// once per process (about 1 ms); an evaluation of the vLLM example then costs about 0.55 ms (`make bench-pure`,
/// `validate/cel_vllm`), which matters to the provider: Terraform validates and plans every resource of a
/// configuration in each `plan`.
pub fn validate_cel(manifest: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let kind = manifest
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(compiled) = compiled(kind) else {
        return Vec::new();
    };
    let result = VALIDATOR.with(|validator| validator.validate_compiled(compiled, manifest, old));
    match result {
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

thread_local! {
    /// The CEL environment with the Kubernetes function libraries (not shareable across threads).
    static VALIDATOR: kube_cel::Validator = kube_cel::Validator::new();
}

/// The compiled rules of `kind`'s schema ([`super::schema_of`]), each kind compiled at its first use.
fn compiled(kind: &str) -> Option<&'static kube_cel::CompiledSchema> {
    static COMPILED: OnceLock<Vec<OnceLock<kube_cel::CompiledSchema>>> = OnceLock::new();
    let all = schemas();
    let index = all.iter().position(|(k, _)| k == kind)?;
    let slots = COMPILED.get_or_init(|| all.iter().map(|_| OnceLock::new()).collect());
    Some(slots[index].get_or_init(|| kube_cel::compile_schema(&all[index].1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A qualified name whose DNS prefix is `len` characters long (labels of 63 characters and a shorter last one).
    fn prefixed(len: usize) -> String {
        let labels = std::iter::repeat_n("a".repeat(63), len / 64);
        let mut prefix: Vec<String> = labels.collect();
        prefix.push("b".repeat(len - prefix.len() * 64));
        format!("{}/k", prefix.join("."))
    }

    fn run_with(key: &str) -> Value {
        json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun", "metadata": {"name": "r"},
            "spec": {"container": {"image": "i"}, "gpu": {"count": 1,
                "tolerations": [{"key": key, "operator": "Exists"}], "nodeSelector": {key: "x"}}}})
    }

    // Kubernetes' IsQualifiedName takes a 253-character prefix (DNS1123SubdomainMaxLength) and refuses a longer one.
    #[test]
    fn a_qualified_name_takes_a_prefix_of_253_characters_and_no_more() {
        assert_eq!(prefixed(253).find('/'), Some(253));
        assert_eq!(validate_manifest(&run_with(&prefixed(253))), Vec::new());
        let paths: Vec<String> = validate_manifest(&run_with(&prefixed(254)))
            .into_iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(
            paths,
            ["spec.gpu.nodeSelector", "spec.gpu.tolerations[0].key"],
            "both rules refuse a 254-character prefix"
        );
    }
}
