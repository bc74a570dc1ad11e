//! Pure rendering (DESIGN.md sections 1 and 3): a custom resource (plus the Datasets it references and the
//! operator's configuration) becomes its status facts and its desired children. No I/O: the controller fetches,
//! calls [`render_inference`] / [`render_training`], applies what comes back and prunes what does not.
//!
//! Facts are always known, even when the children cannot be built (a fit too large, a refused Dataset): the status
//! step reports them either way and never recomputes them. Each child has its own small function:
//! [`deployment`](self::deployment), [`service`](self::service), [`scaled_object`](self::scaled_object),
//! [`route`](self::route) and [`job`](self::job); [`inference`](self::inference) and [`training`](self::training)
//! decide the facts and assemble the children.

mod datasets;
mod deployment;
pub mod gateway;
pub mod http_add_on;
mod inference;
mod job;
pub mod keda;
mod meta;
mod pod;
mod replicas;
mod route;
mod scaled_object;
mod service;
mod training;
pub mod wake;

pub use datasets::{
    DatasetRefusal, ResolvedDataset, check_datasets, holds_claim, mounts_a_claim, mounts_claim,
    refuse_service_dataset_claims,
};
pub use deployment::{DEFAULT_PORT, DEFAULT_STARTUP_SECONDS};
pub use gateway::{HTTPRoute, HttpRouteSpec, ReferenceGrant};
pub use http_add_on::{HttpAddOn, InterceptorRoute};
pub(crate) use inference::ParentKey;
pub use inference::{
    InferenceChildren, InferenceFacts, RenderedInference, gateway_url, render_inference, route_url,
};
pub use job::{MAX_ENV_ENTRY_BYTES, MAX_STORED_OBJECT_BYTES};
pub use keda::{PAUSED_REPLICAS_ANNOTATION, ScaledObject, ScaledObjectSpec};
pub use meta::{FIELD_MANAGER, LABEL_INFERENCE, LABEL_TRAINING, MANAGED_BY};
pub(crate) use pod::DEFAULT_SERVICE_ACCOUNT;
pub use replicas::{LiveReplicas, ReplicaPlan, replica_plan};
pub use training::{
    DATASETS_ENV, RenderedTraining, TrainingChildren, TrainingFacts, job_name, job_name_of,
    render_training,
};

use std::fmt;
use std::str::FromStr;

use crate::capacity::CapacityError;
use crate::conditions::Reason;

/// Operator configuration that affects rendering.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderConfig {
    /// `--default-gateway NAMESPACE/NAME`: the parent of routes without `gateway.parentRef`.
    pub default_gateway: Option<GatewayRef>,
    /// Built-in environment variables `(name, value)` added to every container of a TrainingRun's Job when it is
    /// created (names a container sets itself win). Empty in production; the operator's hidden
    /// `--test-training-default-env` sets it so tests can prove a changed default never touches an existing Job
    /// (case O-05(b)).
    pub training_default_env: Vec<(String, String)>,
    /// Where the KEDA HTTP add-on runs, for services with `scaling.http`.
    pub http_add_on: HttpAddOn,
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

    /// Parses `NAMESPACE/NAME`; the namespace must be a DNS label and the name a DNS subdomain, as the API server
    /// requires.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (namespace, name) = text
            .split_once('/')
            .ok_or_else(|| format!("expected NAMESPACE/NAME, got {text:?}"))?;
        if !crate::names::is_dns_label(namespace) || !crate::names::is_dns_subdomain(name) {
            return Err(format!(
                "expected NAMESPACE/NAME with lowercase DNS names, got {text:?}"
            ));
        }
        Ok(GatewayRef {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        })
    }
}

impl fmt::Display for GatewayRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Why a resource's children cannot be rendered. Each maps to a condition reason via [`RenderError::reason`].
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
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
    /// The datasets a run reads describe themselves ([`DATASETS_ENV`]) in more than one environment variable
    /// holds ([`MAX_ENV_ENTRY_BYTES`]), so no container of the Job could start, or their copies (one per container)
    /// make a Job larger than the API server stores ([`MAX_STORED_OBJECT_BYTES`]).
    #[error("{0}")]
    DatasetsTooLarge(String),
}

impl RenderError {
    /// Condition reason for this error (`DatasetsReady` reasons for dataset refusals).
    pub fn reason(&self) -> Reason {
        match self {
            RenderError::Capacity(CapacityError::KvShards { .. }) => Reason::FitUnsplittable,
            RenderError::Capacity(_) => Reason::FitTooLarge,
            RenderError::Datasets(r) => r.reason,
            RenderError::WritableDatasetMount(_) => Reason::WritableDatasetMount,
            RenderError::NoGateway => Reason::GatewayNotFound,
            RenderError::Reserved(_) | RenderError::DatasetsTooLarge(_) => Reason::InvalidSpec,
        }
    }

    /// The message of a condition whose reason is [`RenderError::reason`]: the error's words without the reason a
    /// dataset refusal's `Display` starts with (kept there for `render -f`, which has no reason beside it), so a
    /// status never says `CrossNamespace: CrossNamespace: ...`.
    pub fn condition_message(&self) -> String {
        match self {
            RenderError::Datasets(refusal) => refusal.message.clone(),
            other => other.to_string(),
        }
    }
}

/// The configuration unit tests render with: the default Gateway `model-fleet-system/shared`, nothing else.
#[cfg(test)]
pub(crate) fn test_config() -> RenderConfig {
    RenderConfig {
        default_gateway: Some(GatewayRef {
            namespace: "model-fleet-system".into(),
            name: "shared".into(),
        }),
        ..RenderConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_gateway_refs() {
        let gw: GatewayRef = "gateway-system/shared".parse().unwrap();
        assert_eq!(gw.namespace, "gateway-system");
        assert_eq!(gw.name, "shared");
        assert_eq!(gw.to_string(), "gateway-system/shared");
        for bad in [
            "shared",
            "/shared",
            "ns/",
            "NS/shared",
            "ns/sha red",
            "a/b/c",
            "-ns/x",
        ] {
            assert!(
                bad.parse::<GatewayRef>().is_err(),
                "{bad} should be refused"
            );
        }
    }
}
