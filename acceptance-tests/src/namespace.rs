//! One namespace per test, deleted when the test ends.

use k8s_openapi::api::core::v1::{Namespace, ResourceQuota};
use kube::Api;
use kube::api::PostParams;
use std::process::{Command, Stdio};

use crate::Cluster;

/// Label put on every namespace a test creates, so leftovers are easy to find and remove.
pub const TEST_LABEL: &str = "modelfleet.io/test";

/// A namespace created for one test; dropping it starts its deletion (without waiting).
#[derive(Debug)]
pub struct TestNamespace {
    name: String,
    kubectl: std::path::PathBuf,
    kubeconfig: std::path::PathBuf,
}

impl TestNamespace {
    pub(crate) async fn create(cluster: &Cluster, prefix: &str) -> anyhow::Result<Self> {
        let suffix = format!("{:08x}", rand_u32());
        let mut prefix = prefix.to_ascii_lowercase();
        prefix.truncate(63 - 9);
        let name = format!("{prefix}-{suffix}");
        let ns: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": {TEST_LABEL: "true"}}
        }))?;
        Api::<Namespace>::all(cluster.client().await?)
            .create(&PostParams::default(), &ns)
            .await?;
        Ok(Self {
            name,
            kubectl: cluster.dir.join("bin/kubectl"),
            kubeconfig: cluster.kubeconfig.clone(),
        })
    }

    /// The namespace's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        // Drop cannot be async, and the test's runtime may be shutting down: use kubectl.
        let _ = Command::new(&self.kubectl)
            .env("KUBECONFIG", &self.kubeconfig)
            .args([
                "delete",
                "namespace",
                &self.name,
                "--wait=false",
                "--ignore-not-found",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A random number from the OS-seeded hasher (no extra dependency for test names).
fn rand_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.finish() as u32
}

/// Creates the ResourceQuota `name` in `namespace` capping `resource` (a quota key such as `pods` or
/// `requests.nvidia.com/gpu`) at `amount`, then waits (up to 30 s) until the quota controller has counted it
/// (`status.hard` set), so admission surely applies it to the next pod.
///
/// Errors: the create, or the wait's timeout.
pub async fn resource_quota(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    (resource, amount): (&str, &str),
) -> anyhow::Result<()> {
    let quotas = Api::<ResourceQuota>::namespaced(client.clone(), namespace);
    let quota: ResourceQuota = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "spec": {"hard": {resource: amount}},
    }))?;
    quotas.create(&PostParams::default(), &quota).await?;
    crate::wait_for(
        "the quota to be counted",
        std::time::Duration::from_secs(30),
        || async {
            let counted = quotas.get(name).await?.status.and_then(|s| s.hard);
            Ok(counted.is_some().then_some(()))
        },
    )
    .await
}
