//! Who may serve a hostname and path on a Gateway (issue 18, case "hostname conflict across namespaces").
//!
//! Two InferenceServices whose routes attach to the same Gateway listener with the same hostname and the same path
//! prefix would both get an HTTPRoute, and the Gateway would silently send the traffic to one of them. Instead,
//! exactly one service holds each such claim and the others get no HTTPRoute and `RouteReady=False,
//! HostnameConflict` naming the holder.
//!
//! The holder is chosen by the Gateway API's own route precedence rule for identical matches (HTTPRoute
//! specification, `HTTPRouteRule` "Proxy or Load Balancer routing configuration ... MUST give precedence to ... the
//! oldest Route based on creation timestamp", then "the Route appearing first in alphabetical order by
//! {namespace}/{name}"), applied to the InferenceServices: the oldest service wins, ties (creation timestamps have
//! one-second resolution) go to the alphabetically first `namespace/name`. The rule is a function of the objects
//! alone, so every reconcile, in any order and after any restart, reaches the same answer.
//!
//! What counts as the same claim (Gateway API matching semantics):
//! - the same Gateway (`namespace/name`); listeners (`sectionName`) overlap unless both name different ones;
//! - hostnames: equal strings (a wildcard `*.example.test` and `chat.example.test` do not conflict: the Gateway
//!   prefers the most specific hostname); two routes without hostnames both match every hostname of the listener;
//! - path prefixes: equal after dropping a trailing `/` (`PathPrefix` matching ignores it), so `/v1` and `/v1/`
//!   are one claim and `/` and `/v1` are not (the longest prefix wins at the Gateway).
//!
//! Pure: the operator passes the services it has cached, or only those a [`ClaimIndex`] says share a claim.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::Hash;

use crate::InferenceService;
use crate::render::{ParentKey, RenderConfig};

/// One hostname and path prefix a service's route would serve on a Gateway listener.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteClaim {
    /// `(namespace, name)` of the Gateway.
    pub gateway: (String, String),
    /// The listener (`gateway.parentRef.sectionName`); `None` attaches to every listener.
    pub section: Option<String>,
    /// The hostname; `None` when the route lists none (it then matches every hostname of the listener).
    pub hostname: Option<String>,
    /// The path prefix, normalised (no trailing `/` except for `/` itself).
    pub path: String,
}

impl RouteClaim {
    /// Whether a Gateway would see `self` and `other` as the same match (module docs).
    pub fn overlaps(&self, other: &RouteClaim) -> bool {
        let sections = match (&self.section, &other.section) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        self.gateway == other.gateway
            && sections
            && self.hostname == other.hostname
            && self.path == other.path
    }
}

impl fmt::Display for RouteClaim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = self.hostname.as_deref().unwrap_or("every hostname");
        let (namespace, name) = &self.gateway;
        write!(f, "{host} path {} on Gateway {namespace}/{name}", self.path)
    }
}

/// The claims of `isvc`'s route: one per hostname (or one without a hostname), all with its path prefix. Empty
/// without `gateway`, or when the route has no parent (no `parentRef` and no `--default-gateway`).
pub fn claims(isvc: &InferenceService, config: &RenderConfig) -> Vec<RouteClaim> {
    ClaimKey::of(isvc, config).map_or_else(Vec::new, |key| key.claims())
}

/// A normalised path prefix: no trailing `/` except for `/` itself.
fn normalised(prefix: &str) -> &str {
    match prefix.trim_end_matches('/') {
        "" => "/",
        trimmed => trimmed,
    }
}

/// A service's claims borrowed from it, without allocating: compared against every cached service on each reconcile
/// and watch event, so a fleet of N pays for it N times per object (`benches/pure.rs`, `route_claims`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ClaimKey<'a> {
    parent: ParentKey<'a>,
    /// Empty when the route lists no hostname.
    hostnames: &'a [String],
    path: &'a str,
}

impl<'a> ClaimKey<'a> {
    /// The key of `isvc`, `None` when it claims nothing (no `gateway`, or no parent).
    fn of(isvc: &'a InferenceService, config: &'a RenderConfig) -> Option<Self> {
        let gateway = isvc.spec.gateway.as_ref()?;
        Some(ClaimKey {
            parent: ParentKey::of(isvc, gateway, config)?,
            hostnames: gateway.hostnames.as_deref().unwrap_or_default(),
            path: normalised(gateway.path_prefix.as_deref().unwrap_or("/")),
        })
    }

    /// The owned claims: one per hostname, or one without a hostname.
    fn claims(&self) -> Vec<RouteClaim> {
        let claim = |hostname: Option<String>| RouteClaim {
            gateway: (
                self.parent.namespace.to_owned(),
                self.parent.name.to_owned(),
            ),
            section: self.parent.section.map(str::to_owned),
            hostname,
            path: self.path.to_owned(),
        };
        match self.hostnames {
            [] => vec![claim(None)],
            hostnames => hostnames.iter().cloned().map(Some).map(claim).collect(),
        }
    }

    /// Whether `claim` (one of the claims of another service) is among this key's claims, as
    /// [`RouteClaim::overlaps`] decides.
    fn covers(&self, claim: &RouteClaim) -> bool {
        let sections = match (self.parent.section, &claim.section) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        let hostname = match &claim.hostname {
            None => self.hostnames.is_empty(),
            Some(h) => self.hostnames.contains(h),
        };
        (self.parent.namespace, self.parent.name)
            == (claim.gateway.0.as_str(), claim.gateway.1.as_str())
            && sections
            && hostname
            && self.path == claim.path
    }
}

/// Where a claim can overlap another: the same Gateway, hostname and path ([`RouteClaim::overlaps`] then compares
/// the listeners).
type Bucket = ((String, String), Option<String>, String);

impl RouteClaim {
    fn bucket(self) -> Bucket {
        (self.gateway, self.hostname, self.path)
    }
}

/// Which services claim what, by Gateway, hostname and path: [`conflict`] and [`contenders`] over the services
/// [`ClaimIndex::sharing`] returns decide exactly as over the whole fleet, which a fleet of N otherwise compares
/// against on every reconcile and watch event (N x N over a fleet). `S` names a service (the operator uses its
/// cache's object reference). Every bucket costs its Gateway, hostname and path as strings, once per service claim.
#[derive(Clone, Debug)]
pub struct ClaimIndex<S> {
    by_bucket: HashMap<Bucket, HashSet<S>>,
    by_service: HashMap<S, Vec<Bucket>>,
}

impl<S> Default for ClaimIndex<S> {
    fn default() -> Self {
        Self {
            by_bucket: HashMap::new(),
            by_service: HashMap::new(),
        }
    }
}

impl<S: Clone + Eq + Hash> ClaimIndex<S> {
    /// Records `isvc`'s current claims under `service`, replacing what it claimed before (nothing without
    /// `gateway` or a parent).
    pub fn upsert(&mut self, service: S, isvc: &InferenceService, config: &RenderConfig) {
        self.remove(&service);
        let buckets: Vec<Bucket> = claims(isvc, config)
            .into_iter()
            .map(RouteClaim::bucket)
            .collect();
        for bucket in &buckets {
            self.by_bucket
                .entry(bucket.clone())
                .or_default()
                .insert(service.clone());
        }
        if !buckets.is_empty() {
            self.by_service.insert(service, buckets);
        }
    }

    /// Forgets `service` (deleted, or it no longer deserializes: it claims nothing).
    pub fn remove(&mut self, service: &S) {
        for bucket in self.by_service.remove(service).unwrap_or_default() {
            if let Some(services) = self.by_bucket.get_mut(&bucket) {
                services.remove(service);
                if services.is_empty() {
                    self.by_bucket.remove(&bucket);
                }
            }
        }
    }

    /// The services whose recorded claims could overlap one of `isvc`'s (`isvc` itself too, when recorded): the only
    /// ones [`conflict`] and [`contenders`] need to see.
    pub fn sharing(&self, isvc: &InferenceService, config: &RenderConfig) -> HashSet<S> {
        claims(isvc, config)
            .into_iter()
            .filter_map(|claim| self.by_bucket.get(&claim.bucket()))
            .flatten()
            .cloned()
            .collect()
    }

    /// The other services recorded in a bucket with one of `service`'s recorded claims. Read before an update of
    /// `service` is recorded, these are the services that may have shared a claim the update drops (a holder that
    /// moves its hostname frees it for them), which [`contenders`] of the new version cannot find.
    pub fn sharing_recorded(&self, service: &S) -> HashSet<S> {
        self.by_service
            .get(service)
            .into_iter()
            .flatten()
            .filter_map(|bucket| self.by_bucket.get(bucket))
            .flatten()
            .filter(|other| *other != service)
            .cloned()
            .collect()
    }

    /// How many services claim something.
    pub fn len(&self) -> usize {
        self.by_service.len()
    }

    /// Whether no service claims anything.
    pub fn is_empty(&self) -> bool {
        self.by_service.is_empty()
    }
}

/// A claim held by another InferenceService.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// `namespace/name` of the service that holds the claim.
    pub holder: String,
    /// The claim both would serve.
    pub claim: RouteClaim,
}

impl Conflict {
    /// The note of the `Deleted` Event when the service's own HTTPRoute `route` (`HTTPRoute/name`) is pruned because
    /// of this conflict: it was not dropped from the spec, an older service now holds its hostname and path (a
    /// breaker's finding: the Event said "no longer rendered" beside the `HostnameConflict` warning).
    pub fn route_removed(&self, route: &str) -> String {
        format!(
            "deleted {route}: {} is served by InferenceService {} (created earlier; RouteReady=False, \
             HostnameConflict)",
            self.claim, self.holder
        )
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is already served by InferenceService {} (created earlier): no HTTPRoute is created; use another \
             hostname or gateway.pathPrefix, or delete {}",
            self.claim, self.holder, self.holder
        )
    }
}

/// Precedence key: older first, then alphabetical `namespace/name` (module docs).
fn precedence(isvc: &InferenceService) -> (Option<i64>, &str, &str) {
    let meta = &isvc.metadata;
    (
        meta.creation_timestamp.as_ref().map(|t| t.0.as_second()),
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

/// Whether `a` takes precedence over `b` for a shared claim.
fn outranks(a: &InferenceService, b: &InferenceService) -> bool {
    // A creation timestamp is set on every stored object; one without (not yet created) ranks last.
    let (a_time, a_ns, a_name) = precedence(a);
    let (b_time, b_ns, b_name) = precedence(b);
    let time = |t: Option<i64>| t.unwrap_or(i64::MAX);
    (time(a_time), a_ns, a_name) < (time(b_time), b_ns, b_name)
}

fn same_object(a: &InferenceService, b: &InferenceService) -> bool {
    match (&a.metadata.uid, &b.metadata.uid) {
        (Some(x), Some(y)) => x == y,
        _ => a.metadata.namespace == b.metadata.namespace && a.metadata.name == b.metadata.name,
    }
}

/// The first of `own`'s claims that a service in `others` holds (it outranks `own` and claims the same), or `None`
/// when `own` may serve all its claims. `others` may contain `own` itself (skipped).
pub fn conflict<'a>(
    own: &InferenceService,
    others: impl IntoIterator<Item = &'a InferenceService>,
    config: &RenderConfig,
) -> Option<Conflict> {
    let mine = claims(own, config);
    if mine.is_empty() {
        return None;
    }
    others
        .into_iter()
        .filter(|other| !same_object(own, other) && outranks(other, own))
        .filter_map(|other| {
            let theirs = ClaimKey::of(other, config)?;
            let shared = mine.iter().find(|c| theirs.covers(c))?;
            Some((precedence(other), other, shared.clone()))
        })
        .min_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, holder, claim)| Conflict {
            holder: format!(
                "{}/{}",
                holder.metadata.namespace.as_deref().unwrap_or_default(),
                holder.metadata.name.as_deref().unwrap_or_default()
            ),
            claim,
        })
}

/// The services in `others` that share one of `changed`'s claims: after `changed` is created, updated or deleted,
/// these are reconciled again (they may have lost, or regained, their route). A service whose claims `changed` has
/// just dropped is not found here (its new claims no longer overlap): [`ClaimIndex::sharing_recorded`] finds those
/// before the change is recorded.
pub fn contenders<'a>(
    changed: &InferenceService,
    others: impl IntoIterator<Item = &'a InferenceService>,
    config: &RenderConfig,
) -> Vec<&'a InferenceService> {
    let mine = claims(changed, config);
    if mine.is_empty() {
        return Vec::new();
    }
    others
        .into_iter()
        .filter(|other| !same_object(changed, other))
        .filter(|other| {
            ClaimKey::of(other, config).is_some_and(|theirs| mine.iter().any(|m| theirs.covers(m)))
        })
        .collect()
}

#[cfg(test)]
mod tests;
