//! Leader election on a `coordination.k8s.io/v1` Lease, always on (DESIGN.md section 5: rolling updates run two
//! pods), built on the `kube-lease-manager` crate (compatible with kube 5.0.0, so the tree keeps one kube version).
//!
//! The manager renews the Lease every `duration - grace` seconds while holding it and takes it over once it has not
//! been renewed for `duration` seconds. Handing over after a crash therefore takes at most about `duration` seconds;
//! a clean shutdown releases the Lease. A standby does not watch the Lease: it reads it again when the renewal it
//! last saw would expire, so it takes over within `duration` seconds either way (after a release without forcing
//! the expired Lease open first).

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::{Api, Client};
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder, LeaseManagerError};

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
/// [`LeaseManagerError`] when the Lease cannot be read or created (RBAC, network).
pub async fn lease_manager(
    client: Client,
    settings: &LeaseSettings,
) -> Result<LeaseManager, LeaseManagerError> {
    LeaseManagerBuilder::new(client, &settings.name)
        .with_namespace(&settings.namespace)
        .with_identity(&settings.identity)
        .with_duration(settings.duration_seconds)
        .with_grace(settings.grace_seconds)
        .with_field_manager(format!("model-fleet-operator-lease-{}", settings.identity))
        .build()
        .await
}

/// Whether `lease` says `identity` holds it at `now`: it is the holder and `renewTime + leaseDurationSeconds` is
/// still ahead (pure part of the watchdog).
pub fn holds(lease: &Lease, identity: &str, now: Timestamp) -> bool {
    let Some(spec) = lease.spec.as_ref() else {
        return false;
    };
    let (Some(renewed), Some(duration)) = (spec.renew_time.as_ref(), spec.lease_duration_seconds)
    else {
        return false;
    };
    spec.holder_identity.as_deref() == Some(identity)
        && renewed
            .0
            .checked_add(SignedDuration::from_secs(i64::from(duration)))
            .is_ok_and(|expiry| expiry > now)
}

/// How often the watchdog reads the Lease: a third of the duration, at least every second.
fn watchdog_period(settings: &LeaseSettings) -> Duration {
    Duration::from_secs((settings.duration_seconds / 3).max(1))
}

/// Completes once the Lease, read back from the API server, proves this process holds it.
///
/// The lease manager keeps reporting "leading" while its renewals fail (e.g. the API server is unreachable), so the
/// runtime confirms before starting controllers and watches with [`lost`] while they run.
pub async fn confirmed(client: Client, settings: &LeaseSettings) {
    let leases: Api<Lease> = Api::namespaced(client, &settings.namespace);
    loop {
        if let Ok(lease) = leases.get(&settings.name).await
            && holds(&lease, &settings.identity, Timestamp::now())
        {
            return;
        }
        tokio::time::sleep(watchdog_period(settings)).await;
    }
}

/// Watchdog: completes when this process can no longer prove it holds the Lease: another holder or an expired
/// renewal is read back, or no read succeeded for a whole lease duration. Reads only, never writes.
pub async fn lost(client: Client, settings: &LeaseSettings) {
    let leases: Api<Lease> = Api::namespaced(client, &settings.namespace);
    let duration = Duration::from_secs(settings.duration_seconds);
    let mut last_proof = Instant::now();
    loop {
        tokio::time::sleep(watchdog_period(settings)).await;
        match leases.get(&settings.name).await {
            Ok(lease) if holds(&lease, &settings.identity, Timestamp::now()) => {
                last_proof = Instant::now()
            }
            Ok(_) => return,
            Err(error) if last_proof.elapsed() >= duration => {
                tracing::warn!(%error, "cannot confirm the lease for a whole lease duration");
                return;
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

    fn lease(holder: &str, renewed_at: i64, duration: i32) -> Lease {
        Lease {
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.into()),
                renew_time: Some(MicroTime(Timestamp::from_second(renewed_at).unwrap())),
                lease_duration_seconds: Some(duration),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn holds_only_as_holder_before_expiry() {
        let now = Timestamp::from_second(1_000).unwrap();
        assert!(holds(&lease("me", 990, 15), "me", now));
        assert!(!holds(&lease("me", 980, 15), "me", now), "expired");
        assert!(!holds(&lease("other", 999, 15), "me", now));
        assert!(!holds(&Lease::default(), "me", now));
    }

    #[test]
    fn identity_is_not_empty_and_unique_per_process() {
        let identity = default_identity();
        assert!(!identity.is_empty());
        if std::env::var("POD_NAME").is_err() {
            assert!(identity.ends_with(&format!("-{}", std::process::id())));
        }
    }
}
