//! The KEDA `ScaledObject` (keda.sh/v1alpha1) we render: a small typed subset of KEDA's schema,
//! so the operator does not depend on KEDA's crate (DESIGN.md section 3, Scaling).

use kube::CustomResource;
use serde::{Deserialize, Serialize};

use crate::Trigger;

/// Annotation that pauses KEDA at a fixed replica count (`"0"` for `intent: suspended`).
pub const PAUSED_REPLICAS_ANNOTATION: &str = "autoscaling.keda.sh/paused-replicas";

/// The workload a ScaledObject scales.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ScaleTargetRef {
    /// `apps/v1`.
    pub api_version: String,
    /// `Deployment`.
    pub kind: String,
    /// Deployment name.
    pub name: String,
}

/// Spec of a KEDA ScaledObject.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "keda.sh",
    version = "v1alpha1",
    kind = "ScaledObject",
    namespaced,
    schema = "disabled",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct ScaledObjectSpec {
    /// The Deployment.
    pub scale_target_ref: ScaleTargetRef,
    /// Seconds between trigger checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub polling_interval: Option<i32>,
    /// Seconds before scaling to zero after the last activity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cooldown_period: Option<i32>,
    /// Seconds after creation before the first scale to zero.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_cooldown_period: Option<i32>,
    /// Replicas while no trigger is active (only 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_replica_count: Option<i32>,
    /// Lower bound.
    pub min_replica_count: i32,
    /// Upper bound.
    pub max_replica_count: i32,
    /// Triggers, exactly as the InferenceService gives them.
    pub triggers: Vec<Trigger>,
    /// KEDA's advanced settings; only the HPA's name, when KEDA's own would be too long.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advanced: Option<Advanced>,
}

/// `spec.advanced` of a ScaledObject (the subset rendered).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Advanced {
    /// The HorizontalPodAutoscaler KEDA makes.
    pub horizontal_pod_autoscaler_config: HorizontalPodAutoscalerConfig,
}

/// `spec.advanced.horizontalPodAutoscalerConfig` of a ScaledObject (the subset rendered).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerConfig {
    /// The HPA's name (KEDA's default: `keda-hpa-<ScaledObject name>`).
    pub name: String,
}
