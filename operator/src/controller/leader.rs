//! Leader election on a `coordination.k8s.io/v1` Lease, always on (DESIGN.md section 5: rolling updates run two
//! pods), built on the `kube-lease-manager` crate (compatible with kube 5.0.0, so the tree keeps one kube version).
//!
//! The manager renews the Lease every `duration - grace` seconds while holding it and takes it over once it has not
//! been renewed for `duration` seconds. Handing over after a crash therefore takes at most about `duration` seconds;
//! a clean shutdown releases the Lease so the standby takes over at its next poll.

use kube::Client;
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};

use super::error::Result;

/// Default Lease duration in seconds: a killed leader is replaced within about this long.
pub const DEFAULT_LEASE_DURATION_SECONDS: u64 = 15;

/// Default grace in seconds: the holder renews this long before the Lease would expire.
pub const DEFAULT_LEASE_GRACE_SECONDS: u64 = 5;

/// Where and how to hold the Lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseSettings {
    /// Lease name (`--lease-name`).
    pub name: String,
    /// Lease namespace (`--lease-namespace`).
    pub namespace: String,
    /// Holder identity, unique per process (pod name, or host name and process id).
    pub identity: String,
    /// Lease duration in seconds.
    pub duration_seconds: u64,
    /// Renewal margin in seconds before expiry; must be below `duration_seconds`.
    pub grace_seconds: u64,
}

/// A unique identity for this process: `$POD_NAME` when set (in cluster), else `<hostname>-<pid>`.
pub fn default_identity() -> String {
    if let Ok(pod) = std::env::var("POD_NAME")
        && !pod.is_empty()
    {
        return pod;
    }
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_owned())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "model-fleet-operator".to_owned());
    format!("{host}-{}", std::process::id())
}

/// Creates the Lease manager (creating the Lease if it does not exist yet). Its first request proves the API server
/// is reachable and the Lease usable.
///
/// # Errors
/// [`Error::Lease`](super::Error::Lease) when the Lease cannot be read or created (RBAC, network).
pub async fn lease_manager(client: Client, settings: &LeaseSettings) -> Result<LeaseManager> {
    Ok(LeaseManagerBuilder::new(client, &settings.name)
        .with_namespace(&settings.namespace)
        .with_identity(&settings.identity)
        .with_duration(settings.duration_seconds)
        .with_grace(settings.grace_seconds)
        .with_field_manager(format!("model-fleet-operator-lease-{}", settings.identity))
        .build()
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_not_empty_and_unique_per_process() {
        let identity = default_identity();
        assert!(!identity.is_empty());
        if std::env::var("POD_NAME").is_err() {
            assert!(identity.ends_with(&format!("-{}", std::process::id())));
        }
    }
}
