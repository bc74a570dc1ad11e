//! Import IDs: `namespace/name`, with an example that fits the kind in the error.

use model_fleet_api::names;

use crate::diag::Diagnostics;

/// Splits an import ID `namespace/name`.
///
/// # Errors
/// A diagnostic explaining the expected form, with an example ID of an object of `kind`.
pub fn parse_import_id(kind: &str, id: &str) -> Result<(String, String), Diagnostics> {
    let invalid = |why: &str| {
        Diagnostics::error(
            "Invalid import ID",
            format!(
                "{why}: expected \"namespace/name\" of the {kind}, e.g. {:?}, got {id:?}.",
                example_id(kind)
            ),
        )
    };
    let Some((namespace, name)) = id.split_once('/') else {
        return Err(invalid("the ID has no namespace"));
    };
    if !names::is_dns_label(namespace) {
        return Err(invalid("the namespace part is not a valid namespace name"));
    }
    if !names::is_dns_subdomain(name) {
        return Err(invalid("the name part is not a valid object name"));
    }
    Ok((namespace.to_string(), name.to_string()))
}

/// An import ID of an object of `kind` for error messages: a Dataset's example is no model server's.
fn example_id(kind: &str) -> &'static str {
    match kind {
        "InferenceService" => "ml/chat",
        "TrainingRun" => "ml/finetune",
        "Dataset" => "ml/corpus-v3",
        _ => "ml/example",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A review's finding: a bad import ID of a `modelfleet_inference` showed `"ml/corpus-v3"`, a Dataset's name.
    #[test]
    fn the_example_of_an_invalid_import_id_fits_the_kind() {
        for (kind, example) in [
            ("InferenceService", "\"ml/chat\""),
            ("TrainingRun", "\"ml/finetune\""),
            ("Dataset", "\"ml/corpus-v3\""),
        ] {
            let err = parse_import_id(kind, "no-namespace").unwrap_err();
            let detail = &err.0[0].detail;
            assert!(
                detail.contains(&format!("of the {kind}, e.g. {example}, got")),
                "{detail}"
            );
        }
        let err = parse_import_id("InferenceService", "ml/").unwrap_err();
        assert!(!err.0[0].detail.contains("corpus"), "{:?}", err.0[0].detail);
    }
}
