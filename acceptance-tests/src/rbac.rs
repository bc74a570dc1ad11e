//! The operator's RBAC as the chart grants it (`charts/model-fleet-operator/files/rbac/*.yaml`), bound to a test user,
//! so tests run the operator with exactly the chart's permissions, or with one rule removed to prove it is needed.

use std::path::PathBuf;

use anyhow::Context as _;
use serde_json::{Value, json};

use crate::Cluster;
use crate::cluster::repo_root;

fn rules_file(name: &str) -> anyhow::Result<Vec<Value>> {
    let path = repo_root()
        .join("charts/model-fleet-operator/files/rbac")
        .join(name);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_yaml::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// The operator's cluster-wide rules (`operator-rules.yaml`), in file order.
///
/// Errors: the file is missing or not a YAML list.
pub fn operator_rules() -> anyhow::Result<Vec<Value>> {
    rules_file("operator-rules.yaml")
}

/// The leader-election rules (`lease-rules.yaml`; a Role in the release namespace in the chart).
///
/// Errors: as [`operator_rules`].
pub fn lease_rules() -> anyhow::Result<Vec<Value>> {
    rules_file("lease-rules.yaml")
}

/// The rules in the KEDA HTTP add-on's namespace (`http-add-on-rules.yaml`; a Role there in the chart).
///
/// Errors: as [`operator_rules`].
pub fn http_add_on_rules() -> anyhow::Result<Vec<Value>> {
    rules_file("http-add-on-rules.yaml")
}

/// A kubeconfig for `user` (a client certificate of the instance CA) bound cluster-wide to a ClusterRole with
/// `rules` plus the lease and HTTP add-on rules (tests put each operator's Lease, and the add-on's namespace, in its
/// own namespace, so those rules are bound cluster-wide here; the chart binds them in their namespaces only).
///
/// Errors: kubectl's message.
pub fn kubeconfig_with_rules(
    cluster: &Cluster,
    user: &str,
    rules: &[Value],
) -> anyhow::Result<PathBuf> {
    let mut all = rules.to_vec();
    all.extend(lease_rules()?);
    all.extend(http_add_on_rules()?);
    kubeconfig_with_exact_rules(cluster, user, &all)
}

/// A kubeconfig for `user` bound cluster-wide to a ClusterRole with exactly `rules` (the lease rules only if they are
/// among them), the ClusterRole and its binding named `model-fleet-test-rbac-<user>`.
///
/// Errors: kubectl's message.
pub fn kubeconfig_with_exact_rules(
    cluster: &Cluster,
    user: &str,
    rules: &[Value],
) -> anyhow::Result<PathBuf> {
    let name = format!("model-fleet-test-rbac-{user}");
    let objects = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": name}, "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": name},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}
    ]});
    cluster.kubectl_apply(
        &objects,
        &[
            "--server-side",
            "--force-conflicts",
            "--field-manager=acceptance-tests",
        ],
    )?;
    cluster.user_kubeconfig(user, &[])
}
