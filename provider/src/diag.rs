//! Diagnostics and attribute paths (tfplugin5 `Diagnostic`, `AttributePath`).

use crate::proto::tfplugin5 as pb;

/// One step of an attribute path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// An object attribute or nested block, by name (`AttributePath.Step.attribute_name`).
    Attr(String),
    /// A map key (`element_key_string`).
    Key(String),
    /// A list index (`element_key_int`).
    Index(i64),
}

/// A path from the resource root to an attribute, e.g. `source.uri` or `splits["train"].uri`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttrPath(pub Vec<Step>);

impl AttrPath {
    /// The root (empty) path.
    pub fn root() -> AttrPath {
        AttrPath::default()
    }

    /// A path of attribute names only: `AttrPath::attrs(&["source", "uri"])`.
    pub fn attrs(names: &[&str]) -> AttrPath {
        AttrPath(names.iter().map(|n| Step::Attr((*n).to_string())).collect())
    }

    /// This path extended by an attribute.
    pub fn attr(&self, name: &str) -> AttrPath {
        let mut steps = self.0.clone();
        steps.push(Step::Attr(name.to_string()));
        AttrPath(steps)
    }

    /// This path extended by a map key.
    pub fn key(&self, key: &str) -> AttrPath {
        let mut steps = self.0.clone();
        steps.push(Step::Key(key.to_string()));
        AttrPath(steps)
    }

    /// This path extended by a list index.
    pub fn index(&self, index: usize) -> AttrPath {
        let mut steps = self.0.clone();
        steps.push(Step::Index(i64::try_from(index).unwrap_or(i64::MAX)));
        AttrPath(steps)
    }

    /// The protobuf form.
    pub fn to_proto(&self) -> pb::AttributePath {
        use pb::attribute_path::step::Selector;
        pb::AttributePath {
            steps: self
                .0
                .iter()
                .map(|step| pb::attribute_path::Step {
                    selector: Some(match step {
                        Step::Attr(name) => Selector::AttributeName(name.clone()),
                        Step::Key(key) => Selector::ElementKeyString(key.clone()),
                        Step::Index(i) => Selector::ElementKeyInt(*i),
                    }),
                })
                .collect(),
        }
    }
}

impl std::fmt::Display for AttrPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Attr(name) if i == 0 => write!(f, "{name}")?,
                Step::Attr(name) => write!(f, ".{name}")?,
                Step::Key(key) => write!(f, "[{key:?}]")?,
                Step::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// Severity of a [`Diagnostic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Stops the operation.
    Error,
    /// Shown, does not stop anything.
    Warning,
}

/// A message for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// One line.
    pub summary: String,
    /// Explanation and what to do.
    pub detail: String,
    /// The attribute at fault, when there is one (Terraform underlines it in the config).
    pub path: Option<AttrPath>,
}

/// A list of diagnostics; operations return it alongside (or instead of) their result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// No diagnostics.
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    /// A single error without a path.
    pub fn error(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostics {
        let mut d = Diagnostics::new();
        d.push_error(None, summary, detail);
        d
    }

    /// A single error at `path`.
    pub fn error_at(
        path: AttrPath,
        summary: impl Into<String>,
        detail: impl Into<String>,
    ) -> Diagnostics {
        let mut d = Diagnostics::new();
        d.push_error(Some(path), summary, detail);
        d
    }

    /// Adds an error.
    pub fn push_error(
        &mut self,
        path: Option<AttrPath>,
        summary: impl Into<String>,
        detail: impl Into<String>,
    ) {
        self.0.push(Diagnostic {
            severity: Severity::Error,
            summary: summary.into(),
            detail: detail.into(),
            path,
        });
    }

    /// Adds a warning.
    pub fn push_warning(
        &mut self,
        path: Option<AttrPath>,
        summary: impl Into<String>,
        detail: impl Into<String>,
    ) {
        self.0.push(Diagnostic {
            severity: Severity::Warning,
            summary: summary.into(),
            detail: detail.into(),
            path,
        });
    }

    /// Appends all of `other`.
    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    /// Whether any error is present.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }

    /// The protobuf form.
    pub fn to_proto(&self) -> Vec<pb::Diagnostic> {
        self.0
            .iter()
            .map(|d| pb::Diagnostic {
                severity: match d.severity {
                    Severity::Error => pb::diagnostic::Severity::Error,
                    Severity::Warning => pb::diagnostic::Severity::Warning,
                } as i32,
                summary: d.summary.clone(),
                detail: d.detail.clone(),
                attribute: d.path.as_ref().map(AttrPath::to_proto),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_and_encode() {
        let path = AttrPath::attrs(&["splits"]).key("train").attr("uri");
        assert_eq!(path.to_string(), "splits[\"train\"].uri");
        let proto = path.to_proto();
        assert_eq!(proto.steps.len(), 3);
        use pb::attribute_path::step::Selector;
        assert_eq!(
            proto.steps[1].selector,
            Some(Selector::ElementKeyString("train".into()))
        );
        assert_eq!(AttrPath::attrs(&["a"]).index(2).to_string(), "a[2]");
    }

    #[test]
    fn severity_maps_to_protocol_numbers() {
        let mut d = Diagnostics::error("e", "");
        d.push_warning(None, "w", "");
        let proto = d.to_proto();
        assert_eq!(proto[0].severity, 1);
        assert_eq!(proto[1].severity, 2);
        assert!(d.has_errors());
    }
}
