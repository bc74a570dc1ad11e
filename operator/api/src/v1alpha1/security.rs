//! How the pods of an `InferenceService` or `TrainingRun` run (`spec.podSecurity`): the Kubernetes Pod Security
//! Standards level they meet and the user and groups of their processes. Rendered by `render::pod` into the pod's and
//! the containers' `securityContext` (docs/security.md, "Pod Security Standards").

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The Kubernetes Pod Security Standards level the pods meet (`pod-security.kubernetes.io/enforce` on a namespace):
/// `baseline` (default) adds no setting of its own (only the user and groups given, else the image decides);
/// `restricted` sets the four settings
/// that level requires (`allowPrivilegeEscalation: false`, `capabilities.drop: [ALL]`, `runAsNonRoot: true`,
/// `seccompProfile.type: RuntimeDefault`), and then an image whose user is root or a name needs `runAsUser`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub enum PodSecurityLevel {
    /// No setting of its own: only the user and groups given are set, else the image decides (many model-server
    /// images run as root). Admitted under `baseline`, refused under `restricted`.
    #[default]
    Baseline,
    /// Admitted under `restricted`: every container gets `allowPrivilegeEscalation: false` and
    /// `capabilities.drop: [ALL]`, the pod `runAsNonRoot: true` and `seccompProfile.type: RuntimeDefault`. The kubelet
    /// then refuses to start an image whose user is root or a name: set `runAsUser` for such images.
    Restricted,
}

/// How the rendered pods run: the Pod Security Standards level they meet and the user and groups of their
/// processes (the pod's `securityContext`). Absent means `baseline` with the image's own user.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.runAsUser) || self.runAsUser != 0 || !has(self.level) || self.level != 'restricted'").message(Message::Message("podSecurity.runAsUser: 0 is root, which level restricted forbids: set a non-zero UID, e.g. 65532".into())).field_path(".runAsUser"))]
pub struct PodSecurity {
    /// `baseline` (default) or `restricted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<PodSecurityLevel>,
    /// UID the containers' processes run as (pod `securityContext.runAsUser`); absent means the image's user.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 2147483647))]
    pub run_as_user: Option<i64>,
    /// Primary GID of the containers' processes (pod `securityContext.runAsGroup`); absent means the image's.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 2147483647))]
    pub run_as_group: Option<i64>,
    /// GID added to every process and given the pod's writable volumes (pod `securityContext.fsGroup`), so a non-root
    /// user can write a claim whose storage driver supports it. Files are re-owned only when the volume's root does
    /// not match already (`fsGroupChangePolicy: OnRootMismatch`), so a large model cache is not walked at every start.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 2147483647))]
    pub fs_group: Option<i64>,
}

impl PodSecurity {
    /// The level, `baseline` when absent.
    pub fn level(&self) -> PodSecurityLevel {
        self.level.unwrap_or_default()
    }
}
