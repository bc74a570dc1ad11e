//! `render -f`: multi-document YAML of Model Fleet manifests in, the children of every manifest
//! out (YAML), no cluster. Pure: text in, text out. Datasets in the same text resolve TrainingRun
//! references. Invalid manifests are reported with API-server-style field paths (the schema walk
//! of [`model_fleet_api::validate`], then the CEL rules of [`model_fleet_api::validate::cel`]).

use serde::Deserialize;

use model_fleet_api::capacity::FitBudget;
use model_fleet_api::conditions::Reason;
use model_fleet_api::render::{RenderConfig, RenderError, render_inference, render_training};
use model_fleet_api::{Dataset, InferenceService, TrainingRun};

/// The Model Fleet objects of one text, parsed and validated.
#[derive(Default)]
struct Manifests {
    isvcs: Vec<InferenceService>,
    runs: Vec<TrainingRun>,
    datasets: Vec<Dataset>,
    /// `(document, kind, name)` of the objects of other API groups (a claim, a Secret, a Job the same file
    /// holds for `kubectl apply`): not rendered, listed as comments.
    others: Vec<(usize, String, String)>,
}

/// Renders every manifest in `text` to multi-document YAML (`---` before each child). Manifests
/// without `metadata.namespace` get `namespace`. Objects of other API groups (a PersistentVolumeClaim or a Job kept
/// in the same file) are listed as comments, not rendered. Errors name the document, the object and the field.
pub fn render_manifests(
    text: &str,
    namespace: &str,
    config: &RenderConfig,
) -> Result<String, String> {
    let manifests = parse(text, namespace)?;
    let mut out: String = manifests
        .others
        .iter()
        .map(|(n, kind, name)| {
            format!("# document {n}: {kind} {name:?} is not a Model Fleet object: not rendered (kubectl applies it as is)\n")
        })
        .collect();
    for isvc in &manifests.isvcs {
        let rendered = render_inference(isvc, config);
        let children = rendered.children.map_err(|e| {
            format!(
                "InferenceService {:?}: {e}",
                isvc.metadata.name.as_deref().unwrap_or_default()
            )
        })?;
        out.push_str(&fit_comment(
            "InferenceService",
            isvc,
            rendered.facts.budget.as_ref(),
        ));
        out.push_str(&documents(&children.to_values()));
    }
    for run in &manifests.runs {
        let rendered = render_training(run, &manifests.datasets, config);
        out.push_str(&fit_comment(
            "TrainingRun",
            run,
            rendered.facts.budget.as_ref(),
        ));
        let children = rendered
            .children
            .map_err(|e| {
                let hint = match &e {
                    RenderError::Datasets(refusal) if refusal.reason == Reason::DatasetNotFound => {
                        " (render reads Datasets only from its input: add the Dataset's manifest, e.g. a second -f)"
                    }
                    _ => "",
                };
                format!(
                    "TrainingRun {:?}: {e}{hint}",
                    run.metadata.name.as_deref().unwrap_or_default()
                )
            })?;
        out.push_str(&documents(&children.to_values()));
    }
    Ok(out)
}

/// Each value as a YAML document, `---` before each.
fn documents(values: &[serde_json::Value]) -> String {
    values
        .iter()
        .map(|v| format!("---\n{}", serde_yaml::to_string(v).expect("YAML")))
        .collect()
}

/// YAML comment lines with what the fit budget decided for `object` (exact per-GPU GiB, the class, each KV cache
/// sized from shape, the headroom warning); empty without a budget. Comments keep the output valid for
/// `kubectl apply -f -`.
fn fit_comment<K: kube::Resource>(kind: &str, object: &K, budget: Option<&FitBudget>) -> String {
    let Some(budget) = budget else {
        return String::new();
    };
    let meta = object.meta();
    let mut lines = vec![format!(
        "# {kind} {}/{}: gpu.fit needs {} GiB per GPU over {} shard(s): class {}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
        budget.per_gpu_gib,
        budget.input.shards,
        budget.class().name
    )];
    lines.extend(budget.kv_cache.iter().map(|kv| {
        format!(
            "#   KV cache of {} from its shape: {} bytes ({} MiB), {} MiB per GPU",
            kv.module,
            kv.bytes,
            kv.mib(),
            kv.per_gpu_mib()
        )
    }));
    lines.extend(
        budget
            .headroom_warning()
            .map(|w| format!("#   warning: {w}")),
    );
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Every document of `text`, validated (schema, then CEL) and parsed; all errors at once.
fn parse(text: &str, namespace: &str) -> Result<Manifests, String> {
    let mut manifests = Manifests::default();
    let mut errors = Vec::new();
    for (i, doc) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let value = serde_json::Value::deserialize(doc)
            .map_err(|e| format!("document {}: not YAML: {e}", i + 1))?;
        if !value.is_null()
            && let Err(error) = manifests.add(i + 1, value, namespace)
        {
            errors.push(error);
        }
    }
    if errors.is_empty() {
        Ok(manifests)
    } else {
        Err(errors.join("\n"))
    }
}

impl Manifests {
    /// Validates and adds document `n`, defaulting its namespace.
    fn add(
        &mut self,
        n: usize,
        mut value: serde_json::Value,
        namespace: &str,
    ) -> Result<(), String> {
        let text = |v: &serde_json::Value, pointer: &str, absent: &str| {
            v.pointer(pointer)
                .and_then(|k| k.as_str())
                .unwrap_or(absent)
                .to_string()
        };
        let kind = text(&value, "/kind", "");
        let name = text(&value, "/metadata/name", "<unnamed>");
        let api_version = text(&value, "/apiVersion", "");
        if !api_version.is_empty() && !api_version.starts_with("modelfleet.io/") {
            self.others.push((n, kind, name));
            return Ok(());
        }
        if value.pointer("/metadata/namespace").is_none()
            && let Some(meta) = value.get_mut("metadata").and_then(|m| m.as_object_mut())
        {
            meta.insert("namespace".into(), namespace.into());
        }
        let field_errors = model_fleet_api::validate::cel::validate_manifest(&value);
        if !field_errors.is_empty() {
            let list: Vec<String> = field_errors.iter().map(|e| format!("  * {e}")).collect();
            return Err(format!(
                "document {n}: {kind} {name:?} is invalid:\n{}",
                list.join("\n")
            ));
        }
        let parsed = match kind.as_str() {
            "InferenceService" => serde_json::from_value(value).map(|o| self.isvcs.push(o)),
            "TrainingRun" => serde_json::from_value(value).map(|o| self.runs.push(o)),
            "Dataset" => serde_json::from_value(value).map(|o| self.datasets.push(o)),
            other => {
                return Err(format!(
                    "document {n}: kind {other:?} is not a Model Fleet kind"
                ));
            }
        };
        parsed.map_err(|e| format!("document {n}: {kind} {name:?}: {e}"))
    }
}
