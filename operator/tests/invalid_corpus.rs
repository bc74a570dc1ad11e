//! The invalid-manifest corpus under `tests/invalid/` (one file per CEL rule and per enum / range
//! of the generated CRDs; regenerate with `python3 operator/tests/invalid/generate.py`).
//!
//! - Coverage: every `x-kubernetes-validations` rule, `enum`, `minimum` and `maximum` in the
//!   generated CRDs has a file that expects its path (and, for CEL, its message), so a new rule
//!   without a bad example fails here.
//! - Each file is really refused: schema cases by [`api::validate`] (the schema walk), CEL cases by the CRD's own
//!   rules evaluated client-side with `kube-cel` (transition rules with the first document as
//!   `oldSelf`). The control-plane test applies the same files to a real API server.
//! - Every example passes the same checks (cases O-05(a) and O-09 are covered by the
//!   `trun-immutable-*` / `mfds-immutable-*` files).

use std::path::{Path, PathBuf};

use model_fleet_api as api;
use serde_json::Value;

/// One corpus file.
#[derive(Debug)]
struct Case {
    file: String,
    covers: String,
    path: String,
    message: String,
    docs: Vec<Value>,
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/invalid")
}

fn parse_docs(text: &str) -> Vec<Value> {
    use serde::Deserialize;
    serde_yaml::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

fn load(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap();
    let header = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("# {key}: ")))
            .unwrap_or_else(|| panic!("{}: missing `# {key}:` header", path.display()))
            .trim()
            .to_string()
    };
    Case {
        file: path.file_name().unwrap().to_string_lossy().into_owned(),
        covers: header("covers"),
        path: header("expect-path"),
        message: header("expect-message"),
        docs: parse_docs(&text),
    }
}

fn corpus() -> Vec<Case> {
    let mut cases: Vec<Case> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| load(&p))
        .collect();
    cases.sort_by(|a, b| a.file.cmp(&b.file));
    assert!(cases.len() > 50, "the corpus is missing");
    cases
}

/// What the schema asks a bad example for.
#[derive(Debug)]
struct Requirement {
    kind: String,
    covers: &'static str,
    /// Path pattern: `[]` for any index, `*` for any map key.
    pattern: String,
    /// CEL message (empty for schema keywords).
    message: String,
}

fn requirements() -> Vec<Requirement> {
    fn walk(kind: &str, node: &Value, path: &str, out: &mut Vec<Requirement>) {
        let Some(o) = node.as_object() else { return };
        for (key, covers) in [
            ("enum", "enum"),
            ("minimum", "minimum"),
            ("maximum", "maximum"),
        ] {
            if o.contains_key(key) {
                out.push(Requirement {
                    kind: kind.into(),
                    covers,
                    pattern: path.into(),
                    message: String::new(),
                });
            }
        }
        for rule in o
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let field = rule
                .get("fieldPath")
                .and_then(Value::as_str)
                .unwrap_or_default();
            out.push(Requirement {
                kind: kind.into(),
                covers: "cel",
                pattern: format!("{path}{field}"),
                message: rule["message"]
                    .as_str()
                    .expect("every rule has a message")
                    .into(),
            });
        }
        for (k, child) in o
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            walk(kind, child, &format!("{path}.{k}"), out);
        }
        if let Some(items) = o.get("items") {
            walk(kind, items, &format!("{path}[]"), out);
        }
        if let Some(values) = o.get("additionalProperties") {
            walk(kind, values, &format!("{path}.*"), out);
        }
    }
    let mut out = Vec::new();
    for kind in ["InferenceService", "TrainingRun", "Dataset"] {
        let spec = api::validate::schema_of(kind)
            .unwrap()
            .pointer("/properties/spec")
            .unwrap();
        walk(kind, spec, "spec", &mut out);
    }
    out
}

/// `spec.volumes[0].name` -> segments `spec`, `volumes[]`, `name`, matched against a pattern.
fn path_matches(pattern: &str, path: &str) -> bool {
    let normalized = regex::Regex::new(r"\[\d+\]")
        .unwrap()
        .replace_all(path, "[]")
        .into_owned();
    let (p, n): (Vec<&str>, Vec<&str>) = (
        pattern.split('.').collect(),
        normalized.split('.').collect(),
    );
    p.len() == n.len() && p.iter().zip(&n).all(|(a, b)| *a == "*" || a == b)
}

fn kind_of(c: &Case) -> &str {
    c.docs
        .last()
        .and_then(|d| d["kind"].as_str())
        .unwrap_or_default()
}

#[test]
fn every_rule_enum_and_range_has_an_invalid_example() {
    let cases = corpus();
    let mut missing = Vec::new();
    for r in requirements() {
        let covered = cases.iter().any(|c| {
            kind_of(c) == r.kind
                && c.covers == r.covers
                && path_matches(&r.pattern, &c.path)
                && (r.message.is_empty() || r.message.contains(&c.message))
        });
        if !covered {
            missing.push(format!(
                "{} {} at {} {:?}",
                r.kind, r.covers, r.pattern, r.message
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "rules without an invalid example in operator/tests/invalid/ (add a case to generate.py and rerun it):\n  {}",
        missing.join("\n  ")
    );
}

fn full_schema(kind: &str) -> &'static Value {
    api::validate::schema_of(kind).unwrap()
}

fn cel_errors(doc: &Value, old: Option<&Value>) -> Vec<(String, String)> {
    match kube_cel::Validator::new().validate(full_schema(doc["kind"].as_str().unwrap()), doc, old)
    {
        Ok(()) => Vec::new(),
        Err(errs) => errs
            .iter()
            .map(|e| (e.field_path.clone(), e.message.clone()))
            .collect(),
    }
}

#[test]
fn every_invalid_example_is_refused_with_its_path_and_message() {
    let mut failures = Vec::new();
    for c in corpus() {
        let new = c.docs.last().unwrap();
        let old = (c.docs.len() > 1).then(|| &c.docs[0]);
        if let Some(old) = old {
            let (s, e) = (api::validate::validate_schema(old), cel_errors(old, None));
            if !s.is_empty() || !e.is_empty() {
                failures.push(format!(
                    "{}: the created document is itself invalid: {s:?} {e:?}",
                    c.file
                ));
                continue;
            }
        }
        let got: Vec<(String, String)> = if c.covers == "cel" {
            cel_errors(new, old)
        } else {
            api::validate::validate_schema(new)
                .into_iter()
                .map(|e| (e.path, e.message))
                .collect()
        };
        let hit = got
            .iter()
            .any(|(p, m)| p.trim_start_matches('.') == c.path && m.contains(&c.message));
        if !hit {
            failures.push(format!(
                "{}: expected {} / {:?}, got {got:?}",
                c.file, c.path, c.message
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_cel_rule_compiles() {
    for kind in ["InferenceService", "TrainingRun", "Dataset"] {
        let compiled = kube_cel::compile_schema(full_schema(kind));
        assert!(
            !compiled.has_errors(),
            "{kind}: {:?}",
            compiled.compilation_errors()
        );
    }
}

#[test]
fn every_example_is_valid() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        for doc in parse_docs(&std::fs::read_to_string(&path).unwrap()) {
            let schema = api::validate::validate_schema(&doc);
            assert!(schema.is_empty(), "{}: {schema:?}", path.display());
            let cel = cel_errors(&doc, None);
            assert!(cel.is_empty(), "{}: {cel:?}", path.display());
        }
    }
}
