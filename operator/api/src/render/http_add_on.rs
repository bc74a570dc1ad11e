//! The KEDA HTTP add-on's `InterceptorRoute` (`http.keda.sh/v1beta1`, add-on v0.14 and later) we render: a small
//! typed subset of its schema (DESIGN.md section 3, Scaling: `scaling.http`), and where the add-on runs.
//!
//! The add-on's interceptor proxies every request of a route to the route's Service, holding it while the Service
//! has no ready endpoint, and reports the requests in flight to KEDA through its external scaler, which the
//! ScaledObject names in an `external-push` trigger.

use std::collections::BTreeMap;

use kube::CustomResource;
use serde::{Deserialize, Serialize};

/// Where the KEDA HTTP add-on runs (operator flags `--http-add-on-namespace`, `--http-interceptor-service`,
/// `--http-interceptor-port`, `--http-scaler-address`); the defaults are those of the add-on's Helm chart
/// (`kedacore/keda-add-ons-http`) installed into the `keda` namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpAddOn {
    /// Namespace of the interceptor Service, where the operator keeps one ReferenceGrant per source namespace.
    pub namespace: String,
    /// The interceptor's proxy Service (HTTPRoute backend).
    pub interceptor_service: String,
    /// Its proxy port.
    pub interceptor_port: i32,
    /// `host:port` of the add-on's external scaler (gRPC), the `scalerAddress` of the `external-push` trigger.
    pub scaler_address: String,
}

/// The add-on's namespace when installed as its docs show.
pub const DEFAULT_NAMESPACE: &str = "keda";
/// The interceptor proxy Service of the add-on's Helm chart.
pub const DEFAULT_INTERCEPTOR_SERVICE: &str = "keda-add-ons-http-interceptor-proxy";
/// The interceptor proxy Service's port.
pub const DEFAULT_INTERCEPTOR_PORT: i32 = 8080;

/// The external scaler of the add-on's Helm chart installed in `namespace`: `host:port` (gRPC port 9090).
pub fn scaler_address_in(namespace: &str) -> String {
    format!("keda-add-ons-http-external-scaler.{namespace}:9090")
}

impl Default for HttpAddOn {
    fn default() -> Self {
        Self {
            namespace: DEFAULT_NAMESPACE.to_string(),
            interceptor_service: DEFAULT_INTERCEPTOR_SERVICE.to_string(),
            interceptor_port: DEFAULT_INTERCEPTOR_PORT,
            scaler_address: scaler_address_in(DEFAULT_NAMESPACE),
        }
    }
}

/// The Service the interceptor forwards to (`target`; we always give the port number).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct InterceptorTarget {
    /// Service name.
    pub service: String,
    /// Service port.
    pub port: i32,
}

/// A header a request must carry (`value` exact).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct InterceptorHeaderMatch {
    /// Header name.
    pub name: String,
    /// Exact value.
    pub value: String,
}

/// One routing rule; no `hosts` and no `paths` mean every host and path, so only the header selects the route.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct InterceptorRule {
    /// All must match.
    pub headers: Vec<InterceptorHeaderMatch>,
}

/// `scalingMetric.concurrency`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ConcurrencyTarget {
    /// Requests in flight per replica.
    pub target_value: i32,
}

/// `scalingMetric.requestRate`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestRateTarget {
    /// Requests per second per replica.
    pub target_value: i32,
    /// Sliding window (Go duration), `1m`.
    pub window: String,
}

/// What drives the scaler: one or both targets (KEDA takes the larger replica count).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ScalingMetric {
    /// Concurrency target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<ConcurrencyTarget>,
    /// Request-rate target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<RequestRateTarget>,
}

/// Per-route timeouts (Go durations such as `600s`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct InterceptorTimeouts {
    /// Wait for a ready endpoint (the cold start).
    pub readiness: String,
    /// Whole request, cold start included; absent: the add-on's global setting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
}

/// Spec of an InterceptorRoute.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "http.keda.sh",
    version = "v1beta1",
    kind = "InterceptorRoute",
    plural = "interceptorroutes",
    namespaced,
    schema = "disabled",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct InterceptorRouteSpec {
    /// The Service requests go to.
    pub target: InterceptorTarget,
    /// Which requests are this route's.
    pub rules: Vec<InterceptorRule>,
    /// The scaling metric.
    pub scaling_metric: ScalingMetric,
    /// Timeouts.
    pub timeouts: InterceptorTimeouts,
}

/// The `external-push` trigger metadata naming `route` (an InterceptorRoute in the ScaledObject's namespace).
pub fn external_push_metadata(add_on: &HttpAddOn, route: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("scalerAddress".to_string(), add_on.scaler_address.clone()),
        ("interceptorRoute".to_string(), route.to_string()),
    ])
}
