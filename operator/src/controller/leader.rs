//! Leader election on a `coordination.k8s.io/v1` Lease, always on (DESIGN.md section 5: rolling updates run two
//! pods), built on the `kube-lease-manager` crate (compatible with kube 5.0.0, so the tree keeps one kube version).
//!
//! The manager renews the Lease every `duration - grace` seconds while holding it and takes it over once it has not
//! been renewed for `duration` seconds. Handing over after a crash therefore takes at most about `duration` seconds.
//! A clean shutdown releases the Lease (clears `holderIdentity`). The manager itself would only read the Lease again
//! when the renewal it last saw expires, so a standby also watches the Lease ([`released`]) and asks for it at once
//! when its holder lets it go: a rolling update hands over in about a second, as controller-runtime's standbys
//! (retrying every 2 s) do, instead of up to `duration` seconds later.
//!
//! The manager keeps reporting "leading" while its renewals fail, so the leader proves it from the Lease itself:
//! [`confirmed`] before its controllers start, then the [`lost`] watchdog, which stops them by the expiry the last
//! renewal read back proved, the moment a standby may take the Lease over.

use std::time::Duration;

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

/// Until when `lease` says `identity` holds it, seen at `now`: `renewTime + leaseDurationSeconds` when `identity` is
/// the holder and that is still ahead, else `None` (pure part of the watchdog).
pub fn held_until(lease: &Lease, identity: &str, now: Timestamp) -> Option<Timestamp> {
    let spec = lease.spec.as_ref()?;
    if spec.holder_identity.as_deref() != Some(identity) {
        return None;
    }
    expiry(lease).filter(|expiry| *expiry > now)
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

/// How often the watchdog reads the Lease while no renewal is due: a third of the duration, at least every second.
/// Also the longest a read may wait for its answer.
pub fn watchdog_period(settings: &LeaseSettings) -> Duration {
    Duration::from_secs((settings.duration_seconds / 3).max(1))
}

/// How often the watchdog reads the Lease once its renewal is due (`grace` seconds before the expiry, when the lease
/// manager renews): a fifth of the grace, at most 1 s (0.2 s with the smallest grace, 1 s), so a renewal is read back
/// well before the expiry.
fn renewal_poll(settings: &LeaseSettings) -> Duration {
    (Duration::from_secs(settings.grace_seconds) / 5)
        .clamp(Duration::from_millis(100), Duration::from_secs(1))
}

/// Time left until `expiry` at `now`; `None` once it has passed.
fn left(expiry: Timestamp, now: Timestamp) -> Option<Duration> {
    Duration::try_from(expiry.duration_since(now))
        .ok()
        .filter(|left| !left.is_zero())
}

/// How long the watchdog waits before its next read, given the expiry its reads last proved (pure part of [`lost`]):
/// one [`watchdog_period`] while the renewal is not due, the first read a [`renewal_poll`] step after it is due,
/// then one such step at a time; never past the expiry. `None` once the expiry has passed: the process can no
/// longer prove it holds the Lease, and a standby may take it now (kube-lease-manager takes a Lease whose
/// `renewTime + leaseDurationSeconds` is behind its own clock).
pub fn next_read(expiry: Timestamp, now: Timestamp, settings: &LeaseSettings) -> Option<Duration> {
    bounded(expiry, now, settings, 1)
}

/// How long the watchdog's read at `now` may wait for its answer (pure part of [`lost`]): never past the expiry, nor
/// past one [`renewal_poll`] step after the renewal is due, and once it is due two steps at most, so a read that hangs
/// on a stalled connection is given up and tried again in time instead of using up the renewal window; `None` once
/// the expiry has passed.
pub fn read_timeout(
    expiry: Timestamp,
    now: Timestamp,
    settings: &LeaseSettings,
) -> Option<Duration> {
    bounded(expiry, now, settings, 2)
}

/// The watchdog's cadence, shared by [`next_read`] and [`read_timeout`]: until the renewal is due, one
/// [`watchdog_period`] but no later than one [`renewal_poll`] step after it is due; once it is due, `steps_once_due`
/// steps; never past the expiry (`None` once it has passed).
fn bounded(
    expiry: Timestamp,
    now: Timestamp,
    settings: &LeaseSettings,
    steps_once_due: u32,
) -> Option<Duration> {
    let left = left(expiry, now)?;
    let step = renewal_poll(settings);
    let bound = match left.checked_sub(Duration::from_secs(settings.grace_seconds)) {
        Some(until_due) if !until_due.is_zero() => watchdog_period(settings).min(until_due + step),
        _ => steps_once_due * step,
    };
    Some(bound.min(left))
}

/// Reads the Lease, giving up after `timeout`: a stalled connection (no error, no answer) counts as a failed read,
/// so neither caller can hang on it.
///
/// # Errors
/// The API error, or that no answer came within `timeout`.
async fn read(leases: &Api<Lease>, name: &str, timeout: Duration) -> anyhow::Result<Lease> {
    match tokio::time::timeout(timeout, leases.get(name)).await {
        Ok(read) => Ok(read?),
        Err(_) => anyhow::bail!("no answer within {} ms", timeout.as_millis()),
    }
}

/// Completes once the Lease, read back from the API server, proves this process holds it with more than two
/// [`renewal_poll`] steps left (so controllers do not start only to be stopped at once); returns the expiry that read
/// proved (`renewTime + leaseDurationSeconds`), where [`lost`] starts.
///
/// The lease manager keeps reporting "leading" while its renewals fail (e.g. the API server is unreachable), so the
/// runtime confirms before starting controllers and watches with [`lost`] while they run.
pub async fn confirmed(client: Client, settings: &LeaseSettings) -> Timestamp {
    let leases: Api<Lease> = Api::namespaced(client, &settings.namespace);
    let period = watchdog_period(settings);
    loop {
        if let Ok(lease) = read(&leases, &settings.name, period).await
            && let Some(expiry) = held_until(&lease, &settings.identity, Timestamp::now())
            && left(expiry, Timestamp::now()).is_some_and(|left| left > 2 * renewal_poll(settings))
        {
            return expiry;
        }
        tokio::time::sleep(period).await;
    }
}

/// Watchdog: completes when this process can no longer prove it holds the Lease, at the latest at the expiry its
/// reads last proved (`expiry`, then the one each read shows, even an earlier one: kube-lease-manager renews with a
/// patch that has no precondition, so a renewal delayed by a partition can set a later holder's `renewTime` back, and
/// standbys judge by what the Lease says): another holder or an expired renewal is read back, or no read proved a
/// renewal before that expiry (no read waits past it, see [`read_timeout`], so a stalled connection counts). So a leader cut off from the API server stops by the time a standby may take the Lease over, not a
/// whole lease duration after its last answered read. Writes it already sent over a stalled connection may still land
/// when the connection recovers; nothing here can recall them. Reads only, never writes; times are this process's
/// clock, which also wrote `renewTime` (see [`next_read`] for the cadence).
pub async fn lost(client: Client, settings: &LeaseSettings, mut expiry: Timestamp) {
    let leases: Api<Lease> = Api::namespaced(client, &settings.namespace);
    let mut failure: Option<anyhow::Error> = None;
    loop {
        let Some(wait) = next_read(expiry, Timestamp::now(), settings) else {
            let error = failure.map_or_else(
                || "no read proved a renewal".to_owned(),
                |e| format!("{e:#}"),
            );
            tracing::warn!(%error, %expiry, "cannot confirm the lease before it expires");
            return;
        };
        tokio::time::sleep(wait).await;
        let Some(timeout) = read_timeout(expiry, Timestamp::now(), settings) else {
            continue;
        };
        match read(&leases, &settings.name, timeout).await {
            Ok(lease) => match held_until(&lease, &settings.identity, Timestamp::now()) {
                Some(renewed) => {
                    expiry = renewed;
                    failure = None;
                }
                None => {
                    let spec = lease.spec.unwrap_or_default();
                    let holder = spec.holder_identity.unwrap_or_default();
                    let renewed = spec.renew_time.map(|t| t.0.to_string()).unwrap_or_default();
                    tracing::warn!(%holder, %renewed, "the lease read back is not ours or has expired");
                    return;
                }
            },
            Err(error) => failure = Some(error),
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
    fn held_only_as_holder_before_expiry() {
        let now = Timestamp::from_second(1_000).unwrap();
        assert_eq!(
            held_until(&lease("me", 990, 15), "me", now),
            Some(Timestamp::from_second(1_005).unwrap())
        );
        assert_eq!(
            held_until(&lease("me", 985, 15), "me", now),
            None,
            "expired"
        );
        assert_eq!(held_until(&lease("other", 999, 15), "me", now), None);
        assert_eq!(held_until(&Lease::default(), "me", now), None);
    }

    fn settings(duration_seconds: u64, grace_seconds: u64) -> LeaseSettings {
        LeaseSettings {
            name: "fleet".into(),
            namespace: "default".into(),
            identity: "me".into(),
            duration_seconds,
            grace_seconds,
        }
    }

    #[test]
    fn the_watchdog_reads_each_period_then_often_once_the_renewal_is_due_and_never_past_the_expiry()
    {
        let at = |millis: i64| Timestamp::from_millisecond(millis).unwrap();
        let ms = Duration::from_millis;
        // The defaults: 15 s lease, renewed 5 s before expiry; read every 5 s, every 1 s once the renewal is due.
        let defaults = settings(15, 5);
        let expiry = at(15_000);
        assert_eq!(next_read(expiry, at(0), &defaults), Some(ms(5_000)));
        assert_eq!(
            next_read(expiry, at(7_000), &defaults),
            Some(ms(4_000)),
            "the first read one step after the renewal is due (10 s)"
        );
        assert_eq!(next_read(expiry, at(10_500), &defaults), Some(ms(1_000)));
        assert_eq!(
            next_read(expiry, at(14_600), &defaults),
            Some(ms(400)),
            "never past the expiry"
        );
        assert_eq!(next_read(expiry, at(15_000), &defaults), None, "expired");
        assert_eq!(next_read(expiry, at(20_000), &defaults), None);
        // The drills' 4 s lease, renewed 1 s before expiry: read every 1 s, every 200 ms once the renewal is due.
        let short = settings(4, 1);
        let expiry = at(4_000);
        assert_eq!(next_read(expiry, at(0), &short), Some(ms(1_000)));
        assert_eq!(next_read(expiry, at(2_500), &short), Some(ms(700)));
        assert_eq!(next_read(expiry, at(3_100), &short), Some(ms(200)));
        assert_eq!(next_read(expiry, at(3_950), &short), Some(ms(50)));
        // Reads wait until one step after the renewal is due at most, then two steps, never past the expiry.
        assert_eq!(read_timeout(at(15_000), at(0), &defaults), Some(ms(5_000)));
        assert_eq!(
            read_timeout(at(15_000), at(8_000), &defaults),
            Some(ms(3_000))
        );
        assert_eq!(
            read_timeout(at(15_000), at(10_000), &defaults),
            Some(ms(2_000))
        );
        assert_eq!(
            read_timeout(at(15_000), at(14_500), &defaults),
            Some(ms(500))
        );
        assert_eq!(read_timeout(at(15_000), at(15_000), &defaults), None);
        assert_eq!(read_timeout(at(4_000), at(3_100), &short), Some(ms(400)));
        // A long grace polls at most every second.
        assert_eq!(
            next_read(at(600_000), at(590_000), &settings(600, 200)),
            Some(ms(1_000))
        );
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
