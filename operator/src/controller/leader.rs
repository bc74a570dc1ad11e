//! Leader election on a `coordination.k8s.io/v1` Lease, always on (DESIGN.md section 5: rolling updates run two
//! pods), built on the `kube-lease-manager` crate (compatible with kube 5.0.0, so the tree keeps one kube version).
//!
//! The manager renews the Lease every `duration - grace` seconds while holding it and takes it over once it has not
//! been renewed for `duration` seconds. Handing over after a crash therefore takes at most about `duration` seconds.
//! A clean shutdown releases the Lease (clears `holderIdentity`). The manager itself would only read the Lease again
//! when the renewal it last saw expires, so a standby also watches the Lease ([`released`]) and asks for it at once
//! when its holder lets it go: a rolling update hands over in about a second, as controller-runtime's standbys
//! (retrying every 2 s) do, instead of up to `duration` seconds later.

use std::time::{Duration, Instant};

use futures::StreamExt as _;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::runtime::{WatchStreamExt as _, watcher};
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

/// When `lease` expires: `renewTime + leaseDurationSeconds` (`None` without both, or out of range).
fn expiry(lease: &Lease) -> Option<Timestamp> {
    let spec = lease.spec.as_ref()?;
    let (renewed, duration) = (spec.renew_time.as_ref()?, spec.lease_duration_seconds?);
    renewed
        .0
        .checked_add(SignedDuration::from_secs(i64::from(duration)))
        .ok()
}

/// Whether `lease` says `identity` holds it at `now`: it is the holder and `renewTime + leaseDurationSeconds` is
/// still ahead (pure part of the watchdog).
pub fn holds(lease: &Lease, identity: &str, now: Timestamp) -> bool {
    lease
        .spec
        .as_ref()
        .is_some_and(|spec| spec.holder_identity.as_deref() == Some(identity))
        && expiry(lease).is_some_and(|expiry| expiry > now)
}

/// The Lease's holder, if it names one (`spec.holderIdentity`, an empty string counting as none).
fn holder(lease: &Lease) -> Option<&str> {
    lease
        .spec
        .as_ref()
        .and_then(|spec| spec.holder_identity.as_deref())
        .filter(|holder| !holder.is_empty())
}

/// Tells a clean release from everything else: fed every version of the Lease a watch sees, it answers `true` when
/// the Lease turns vacant while the last held version seen had not expired yet (its holder let it go, e.g. on
/// SIGTERM). Pure part of [`released`]. Left to the lease manager's own loop: a Lease forced open after it expired
/// (a crashed holder), where the manager's own random back-off keeps two standbys from racing, and a Lease vacant
/// at the watch's first list (the manager takes one that is vacant at its own first read; a release in the
/// milliseconds between that read and the list is noticed only at the expiry the manager read).
#[derive(Debug, Default)]
pub struct ReleaseDetector {
    /// Expiry of the last held version seen (`None`: none seen, or none since the last release).
    live_until: Option<Timestamp>,
}

impl ReleaseDetector {
    /// Records `lease` as read at `now`; `true` on a release of a Lease that was still live.
    pub fn released(&mut self, lease: &Lease, now: Timestamp) -> bool {
        if holder(lease).is_some() {
            self.live_until = expiry(lease);
            return false;
        }
        self.live_until.take().is_some_and(|until| until > now)
    }
}

/// Completes once the Lease's holder releases it (see [`ReleaseDetector`]), watching the one Lease (a
/// `metadata.name` field selector; RBAC `list` and `watch` on `leases`). If the watch is refused it warns once and
/// never completes: the standby then takes over when the Lease would have expired, as without this watch.
pub async fn released(client: Client, settings: &LeaseSettings) {
    let leases: Api<Lease> = Api::namespaced(client, &settings.namespace);
    let config = watcher::Config::default().fields(&format!("metadata.name={}", settings.name));
    let mut versions = std::pin::pin!(watcher(leases, config).default_backoff().applied_objects());
    let mut detector = ReleaseDetector::default();
    let (mut warned, mut announced) = (false, false);
    while let Some(version) = versions.next().await {
        match version {
            Ok(lease) if detector.released(&lease, Timestamp::now()) => return,
            Ok(lease) => {
                if let Some(holder) = holder(&lease).filter(|h| *h != settings.identity)
                    && !announced
                {
                    announced = true;
                    tracing::info!(%holder, "the lease is held by another process: standing by");
                }
            }
            Err(error) if !warned => {
                warned = true;
                tracing::warn!(%error, "cannot watch the lease: a release is noticed only when the lease would expire");
            }
            Err(_) => {}
        }
    }
    std::future::pending().await
}

/// How often the watchdog reads the Lease: a third of the duration, at least every second.
pub fn watchdog_period(settings: &LeaseSettings) -> Duration {
    Duration::from_secs((settings.duration_seconds / 3).max(1))
}

/// Reads the Lease, giving up after one [`watchdog_period`]: a stalled connection (no error, no answer) counts as a
/// failed read, so the watchdog cannot hang on it while the Lease expires.
///
/// # Errors
/// The API error, or that no answer came within the period.
async fn read(leases: &Api<Lease>, settings: &LeaseSettings) -> anyhow::Result<Lease> {
    let period = watchdog_period(settings);
    match tokio::time::timeout(period, leases.get(&settings.name)).await {
        Ok(read) => Ok(read?),
        Err(_) => anyhow::bail!("no answer within {} s", period.as_secs()),
    }
}

/// Completes once the Lease, read back from the API server, proves this process holds it.
///
/// The lease manager keeps reporting "leading" while its renewals fail (e.g. the API server is unreachable), so the
/// runtime confirms before starting controllers and watches with [`lost`] while they run.
pub async fn confirmed(client: Client, settings: &LeaseSettings) {
    let leases: Api<Lease> = Api::namespaced(client, &settings.namespace);
    loop {
        if let Ok(lease) = read(&leases, settings).await
            && holds(&lease, &settings.identity, Timestamp::now())
        {
            return;
        }
        tokio::time::sleep(watchdog_period(settings)).await;
    }
}

/// Watchdog: completes when this process can no longer prove it holds the Lease: another holder or an expired
/// renewal is read back, or no read was answered for a whole lease duration (each read waits one watchdog period
/// at most, so a stalled connection counts). Reads only, never writes.
pub async fn lost(client: Client, settings: &LeaseSettings) {
    let leases: Api<Lease> = Api::namespaced(client, &settings.namespace);
    let duration = Duration::from_secs(settings.duration_seconds);
    let mut last_proof = Instant::now();
    loop {
        tokio::time::sleep(watchdog_period(settings)).await;
        match read(&leases, settings).await {
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
    fn a_release_is_a_live_lease_seen_vacant() {
        let vacant = Lease {
            spec: Some(LeaseSpec::default()),
            ..Default::default()
        };
        let at = |second| Timestamp::from_second(second).unwrap();
        let mut detector = ReleaseDetector::default();
        assert!(
            !detector.released(&vacant, at(1_000)),
            "vacant from the start"
        );
        assert!(!detector.released(&lease("other", 990, 15), at(1_000)));
        assert!(
            !detector.released(&lease("other", 995, 15), at(1_000)),
            "a renewal"
        );
        assert!(detector.released(&vacant, at(1_001)), "released while live");
        assert!(!detector.released(&vacant, at(1_002)), "still vacant");
        assert!(!detector.released(&lease("other", 1_000, 15), at(1_003)));
        assert!(
            !detector.released(&vacant, at(1_020)),
            "forced open after it expired at 1015: the manager's own loop takes it"
        );
        let mut empty = lease("", 1_030, 15);
        empty.spec.as_mut().unwrap().renew_time = None;
        assert!(!detector.released(&lease("me", 1_030, 15), at(1_031)));
        assert!(
            detector.released(&empty, at(1_031)),
            "an empty holder is no holder"
        );
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
