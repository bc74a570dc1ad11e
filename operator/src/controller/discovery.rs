//! Optional dependencies: the KEDA, KEDA HTTP add-on and Gateway API CRDs.
//!
//! DESIGN.md section 3: when they are absent the affected resources say `DependencyMissing` in a condition and the
//! operator keeps serving everything else. Discovery asks the API server which resources a group version serves
//! (`GET /apis/<group>/<version>`, a read) and caches the answer for [`DEPENDENCY_TTL`] so CRDs installed later are
//! picked up without a restart and reconciles do not each pay for discovery.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use kube::Client;
use kube::core::{ApiResource, GroupVersionKind};

use super::error::{Error, Result};

/// How long a discovery answer is reused (seconds: 30).
pub const DEPENDENCY_TTL: Duration = Duration::from_secs(30);

/// How long one group version's discovery may take before it counts as failed (seconds: 10). kube's client retries
/// answers 503, 429 and 504 by itself for about 160 s (kube-client 5 `RetryPolicy::server_retry`: 15 attempts, the
/// delay doubling from 5 ms), and a group version registered by an aggregated API whose Service is down answers 503
/// (a broken metrics adapter, say): without this limit such a discovery stalled for minutes before failing, and the
/// InferenceService controller waited that long for its first answer.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// KEDA `ScaledObject` (`keda.sh/v1alpha1`, plural `scaledobjects`).
pub fn scaled_object_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("keda.sh", "v1alpha1", "ScaledObject"),
        "scaledobjects",
    )
}

/// Gateway API `HTTPRoute` (`gateway.networking.k8s.io/v1`, plural `httproutes`).
pub fn http_route_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "HTTPRoute"),
        "httproutes",
    )
}

/// KEDA HTTP add-on `InterceptorRoute` (`http.keda.sh/v1beta1`, plural `interceptorroutes`).
pub fn interceptor_route_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("http.keda.sh", "v1beta1", "InterceptorRoute"),
        "interceptorroutes",
    )
}

/// Which optional CRDs the cluster serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dependencies {
    /// KEDA's `ScaledObject` is served.
    pub keda: bool,
    /// Gateway API's `HTTPRoute` is served.
    pub gateway_api: bool,
    /// The KEDA HTTP add-on's `InterceptorRoute` is served.
    pub http_add_on: bool,
}

impl Dependencies {
    /// Both present (used when discovery cannot be asked, e.g. in unit tests).
    pub const ALL: Dependencies = Dependencies {
        keda: true,
        gateway_api: true,
        http_add_on: true,
    };

    /// None present (discovery failed at start).
    pub const NONE: Dependencies = Dependencies {
        keda: false,
        gateway_api: false,
        http_add_on: false,
    };
}

/// Whether the group version of `resource` serves its plural.
///
/// # Errors
/// [`Error::Fetch`]: API errors other than 404 (404 means the group version is not served: `Ok(false)`), and no
/// answer within [`DISCOVERY_TIMEOUT`].
pub async fn serves(client: &Client, resource: &ApiResource) -> Result<bool> {
    let asked = client.list_api_group_resources(&resource.api_version);
    let answer = tokio::time::timeout(DISCOVERY_TIMEOUT, asked)
        .await
        .unwrap_or_else(|_| Err(timed_out()));
    match answer {
        Ok(list) => Ok(list.resources.iter().any(|r| r.name == resource.plural)),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(e) => Err(Error::fetch(
            format!("discovery of {}", resource.api_version),
            e,
        )),
    }
}

/// The error of a discovery past [`DISCOVERY_TIMEOUT`].
fn timed_out() -> kube::Error {
    kube::Error::Service(Box::new(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!(
            "no answer within {} s (the API server kept answering 503, 429 or 504: an aggregated API of this group \
             may be down, see `kubectl get apiservices`)",
            DISCOVERY_TIMEOUT.as_secs()
        ),
    )))
}

/// Discovery answers cached for [`DEPENDENCY_TTL`].
pub struct DependencyCache {
    client: Client,
    ttl: Duration,
    http_add_on_enabled: bool,
    cached: Mutex<Option<(Instant, Dependencies)>>,
    built_with: Mutex<Option<Dependencies>>,
}

impl std::fmt::Debug for DependencyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DependencyCache")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl DependencyCache {
    /// Creates an empty cache asking through `client`. With `http_add_on_enabled` false (`--http-add-on=disabled`)
    /// the add-on is never asked for and always absent.
    pub fn new(client: Client, http_add_on_enabled: bool) -> Self {
        Self {
            client,
            ttl: DEPENDENCY_TTL,
            http_add_on_enabled,
            cached: Mutex::new(None),
            built_with: Mutex::new(None),
        }
    }

    /// Records the answer the InferenceService controller's watches were built with: [`DependencyCache::for_reconcile`]
    /// gives it from then on.
    pub fn built_with(&self, deps: Dependencies) {
        *self.built_with.lock().unwrap_or_else(|e| e.into_inner()) = Some(deps);
    }

    /// The last answer discovery gave, however old (`None` before the first).
    pub fn last_known(&self) -> Option<Dependencies> {
        self.cached
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map(|(_, deps)| deps)
    }

    /// What a reconcile acts on: the answer the running controller was built with, so that no child of a kind is
    /// written before it is watched and no hostname claim is decided before the claim cache is attached (a review's
    /// finding: between a discovery change and the controller's restart, routes were applied without the conflict
    /// check); discovery's current answer ([`DependencyCache::get`]) before any build (the controller is built only
    /// with an answer).
    ///
    /// # Errors
    /// Those of [`DependencyCache::get`], before any build only.
    pub async fn for_reconcile(&self) -> Result<Dependencies> {
        let built = *self.built_with.lock().unwrap_or_else(|e| e.into_inner());
        match built {
            Some(deps) => Ok(deps),
            None => self.get().await,
        }
    }

    /// The current answer, asking the API server when the cached one is older than the TTL.
    ///
    /// # Errors
    /// API errors other than 404 from discovery (the reconcile then retries with backoff).
    pub async fn get(&self) -> Result<Dependencies> {
        if let Some((at, deps)) = *self.cached.lock().unwrap_or_else(|e| e.into_inner())
            && at.elapsed() < self.ttl
        {
            return Ok(deps);
        }
        let deps = Dependencies {
            keda: serves(&self.client, &scaled_object_resource()).await?,
            gateway_api: serves(&self.client, &http_route_resource()).await?,
            http_add_on: self.http_add_on_enabled
                && serves(&self.client, &interceptor_route_resource()).await?,
        };
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if cached.map(|(_, old)| old) != Some(deps) {
            tracing::info!(
                keda = deps.keda,
                gateway_api = deps.gateway_api,
                http_add_on = deps.http_add_on,
                "optional CRDs discovered"
            );
        }
        *cached = Some((Instant::now(), deps));
        Ok(deps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client of a loopback port nothing listens on (bound, then let go): every discovery fails at once.
    fn unreachable() -> Client {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = kube::Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
        Client::try_from(config).unwrap()
    }

    #[tokio::test]
    async fn reconciles_act_on_the_answer_the_controller_was_built_with() {
        let cache = DependencyCache::new(unreachable(), true);
        assert!(cache.get().await.is_err());
        assert_eq!(cache.last_known(), None);
        // Before any build: a reconcile asks discovery itself, and fails (it retries with backoff).
        assert!(cache.for_reconcile().await.is_err());
        // Built with one: that answer, whatever discovery says meanwhile.
        let keda_only = Dependencies {
            keda: true,
            ..Dependencies::NONE
        };
        cache.built_with(keda_only);
        assert_eq!(cache.for_reconcile().await.unwrap(), keda_only);
        // The last answer is kept however old, for a rebuild while discovery fails.
        *cache.cached.lock().unwrap() = Some((
            Instant::now()
                .checked_sub(DEPENDENCY_TTL)
                .unwrap_or_else(Instant::now),
            Dependencies::ALL,
        ));
        assert_eq!(cache.last_known(), Some(Dependencies::ALL));
    }
}
