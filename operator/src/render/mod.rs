//! Pure rendering (DESIGN.md sections 1 and 3): a custom resource (plus the Datasets it
//! references and the operator's configuration) becomes the desired children and the status
//! facts. No I/O: the controller fetches, calls [`render_inference`] / [`render_training`],
//! applies what comes back and prunes what does not.

mod datasets;
pub mod gateway;
mod inference;
pub mod keda;
mod manifests;
mod meta;
mod pod;
mod training;

pub use datasets::{DatasetReason, DatasetRefusal, ResolvedDataset, check_datasets};
pub use gateway::{HTTPRoute, HttpRouteSpec};
pub use inference::{InferenceChildren, InferenceFacts, RenderedInference, render_inference};
pub use inference::{gateway_url, route_url};
pub use keda::{PAUSED_REPLICAS_ANNOTATION, ScaledObject, ScaledObjectSpec};
pub use manifests::render_manifests;
pub use meta::{FIELD_MANAGER, LABEL_INFERENCE, LABEL_TRAINING, MANAGED_BY};
pub use training::{
    DATASETS_ENV, RenderedTraining, TrainingChildren, TrainingFacts, job_name, render_training,
};

use std::fmt;
use std::str::FromStr;

use crate::capacity::CapacityError;

/// Operator configuration that affects rendering.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderConfig {
    /// `--default-gateway NAMESPACE/NAME`: the parent of routes without `gateway.parentRef`.
    pub default_gateway: Option<GatewayRef>,
}

/// A Gateway by namespace and name (`NAMESPACE/NAME`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayRef {
    /// Namespace of the Gateway.
    pub namespace: String,
    /// Name of the Gateway.
    pub name: String,
}

impl FromStr for GatewayRef {
    type Err = String;

    /// Parses `NAMESPACE/NAME`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('/') {
            Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
                Ok(GatewayRef {
                    namespace: ns.to_string(),
                    name: name.to_string(),
                })
            }
            _ => Err(format!("expected NAMESPACE/NAME, got {s:?}")),
        }
    }
}

impl fmt::Display for GatewayRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Why a resource cannot be rendered. Each maps to a condition reason via [`RenderError::reason`].
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RenderError {
    /// The fit budget is too big or malformed.
    #[error(transparent)]
    Capacity(#[from] CapacityError),
    /// A referenced Dataset refuses the run.
    #[error("{0}")]
    Datasets(DatasetRefusal),
    /// A dataset mount was asked to be writable (case O-07).
    #[error("{0}")]
    WritableDatasetMount(String),
    /// `gateway` is set without `parentRef` and the operator has no `--default-gateway`.
    #[error(
        "spec.gateway.parentRef: Required value: set gateway.parentRef or start the operator with --default-gateway NAMESPACE/NAME"
    )]
    NoGateway,
    /// A name the operator reserves is used (`main`, `dshm`, `dataset-*`).
    #[error("{0}")]
    Reserved(String),
}

impl RenderError {
    /// Condition reason for this error (`DatasetsReady` reasons for dataset refusals).
    pub fn reason(&self) -> &'static str {
        match self {
            RenderError::Capacity(_) => "FitTooLarge",
            RenderError::Datasets(r) => r.reason.as_str(),
            RenderError::WritableDatasetMount(_) => "WritableDatasetMount",
            RenderError::NoGateway => "GatewayNotFound",
            RenderError::Reserved(_) => "InvalidSpec",
        }
    }
}
