//! `render -f`: multi-document YAML of Model Fleet manifests in, the children of every manifest
//! out (YAML), no cluster. Pure: text in, text out. Datasets in the same text resolve TrainingRun
//! references. Invalid manifests are reported with API-server-style field paths
//! ([`crate::api::validate`]).

use serde::Deserialize;

use super::datasets::DatasetReason;
use super::{RenderConfig, RenderError, render_inference, render_training};
use crate::api::{self, Dataset, InferenceService, TrainingRun};

/// Renders every manifest in `text` to multi-document YAML (`---` before each child). Manifests
/// without `metadata.namespace` get `namespace`. Errors name the document, the object and the field.
pub fn render_manifests(
    text: &str,
    namespace: &str,
    config: &RenderConfig,
) -> Result<String, String> {
    let mut docs = Vec::new();
    for (i, doc) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let value = serde_json::Value::deserialize(doc)
            .map_err(|e| format!("document {}: not YAML: {e}", i + 1))?;
        if value.is_null() {
            continue;
        }
        docs.push((i + 1, value));
    }
    let mut errors = Vec::new();
    let mut isvcs = Vec::new();
    let mut runs = Vec::new();
    let mut datasets = Vec::new();
    for (n, mut value) in docs {
        let kind = value
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or_default()
            .to_string();
        let name = value
            .pointer("/metadata/name")
            .and_then(|k| k.as_str())
            .unwrap_or("<unnamed>")
            .to_string();
        if value.pointer("/metadata/namespace").is_none()
            && let Some(meta) = value.get_mut("metadata").and_then(|m| m.as_object_mut())
        {
            meta.insert("namespace".into(), namespace.into());
        }
        let field_errors = api::validate::validate_manifest(&value);
        if !field_errors.is_empty() {
            let list: Vec<String> = field_errors.iter().map(|e| format!("  * {e}")).collect();
            errors.push(format!(
                "document {n}: {kind} {name:?} is invalid:\n{}",
                list.join("\n")
            ));
            continue;
        }
        let parsed = match kind.as_str() {
            "InferenceService" => {
                serde_json::from_value::<InferenceService>(value).map(|o| isvcs.push(o))
            }
            "TrainingRun" => serde_json::from_value::<TrainingRun>(value).map(|o| runs.push(o)),
            "Dataset" => serde_json::from_value::<Dataset>(value).map(|o| datasets.push(o)),
            other => {
                errors.push(format!(
                    "document {n}: kind {other:?} is not a Model Fleet kind"
                ));
                Ok(())
            }
        };
        if let Err(e) = parsed {
            errors.push(format!("document {n}: {kind} {name:?}: {e}"));
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    let mut out = Vec::new();
    for isvc in &isvcs {
        let r = render_inference(isvc, config).map_err(|e| {
            format!(
                "InferenceService {:?}: {e}",
                isvc.metadata.name.as_deref().unwrap_or_default()
            )
        })?;
        out.extend(r.children.to_values());
    }
    for run in &runs {
        let r = render_training(run, &datasets, config).map_err(|e| {
            let hint = match &e {
                RenderError::Datasets(refusal) if refusal.reason == DatasetReason::DatasetNotFound => {
                    " (render reads Datasets only from its input: add the Dataset's manifest, e.g. a second -f)"
                }
                _ => "",
            };
            format!(
                "TrainingRun {:?}: {e}{hint}",
                run.metadata.name.as_deref().unwrap_or_default()
            )
        })?;
        out.extend(r.children.to_values());
    }
    let yaml: Vec<String> = out
        .iter()
        .map(|v| serde_yaml::to_string(v).expect("YAML"))
        .collect();
    Ok(yaml.iter().map(|y| format!("---\n{y}")).collect())
}
