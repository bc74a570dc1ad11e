//! Pod tolerations (`gpu.tolerations`), with the rules of Kubernetes' `ValidateTolerations`
//! (`pkg/apis/core/validation/validation.go`, v1.35.4) as CEL and patterns, so a toleration the API server would
//! refuse on the rendered Deployment or Job is refused on the custom resource instead.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Toleration operator.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum TolerationOperator {
    /// Tolerates any value of `key`.
    Exists,
    /// Tolerates only `value`.
    Equal,
}

/// Taint effect a toleration matches.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum TaintEffect {
    /// Pods are not scheduled.
    NoSchedule,
    /// The scheduler avoids the node.
    PreferNoSchedule,
    /// Running pods are evicted.
    NoExecute,
}

/// A pod toleration passed through to the pod template unchanged.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("(has(self.key) && self.key != '') || (has(self.operator) && self.operator == 'Exists')").message(Message::Message("tolerations[].operator must be Exists when key is empty (an empty key with Exists tolerates every taint): set key, or operator: Exists".into())).field_path(".operator"))]
#[x_kube(validation = Rule::new("!has(self.operator) || self.operator != 'Exists' || !has(self.value) || self.value == ''").message(Message::Message("tolerations[].value must be empty when operator is Exists: remove value, or use operator: Equal".into())).field_path(".value"))]
#[x_kube(validation = Rule::new("!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')").message(Message::Message("tolerations[].tolerationSeconds is allowed only with effect NoExecute: set effect: NoExecute or remove tolerationSeconds".into())).field_path(".tolerationSeconds"))]
#[x_kube(validation = super::rules::prefix_within_limit("key", "tolerations[].key"))]
pub struct Toleration {
    /// Taint key, a qualified name (`nvidia.com/gpu`); absent with `operator: Exists` tolerates everything.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 317),
        regex(
            pattern = crate::names::OPTIONAL_QUALIFIED_NAME_PATTERN
        )
    )]
    pub key: Option<String>,
    /// `Exists` or `Equal` (absent means `Equal`, as in Kubernetes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator: Option<TolerationOperator>,
    /// Taint value for `Equal`, a label value; empty with `Exists`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 63),
        regex(pattern = crate::names::LABEL_VALUE_PATTERN)
    )]
    pub value: Option<String>,
    /// Effect to tolerate; absent means all effects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect: Option<TaintEffect>,
    /// For `NoExecute` only: seconds the pod stays bound after the taint appears.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}
