//! The Gateway API `HTTPRoute` (gateway.networking.k8s.io/v1) we render: a small typed subset,
//! because the `gateway-api` crate needs a different kube version (DESIGN.md section 2: one kube).

use kube::CustomResource;
use serde::{Deserialize, Serialize};

/// A parent Gateway of the route.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteParentRef {
    /// `gateway.networking.k8s.io`.
    pub group: String,
    /// `Gateway`.
    pub kind: String,
    /// Gateway name.
    pub name: String,
    /// Gateway namespace.
    pub namespace: String,
    /// Listener name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_name: Option<String>,
}

/// A path match.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HttpPathMatch {
    /// `PathPrefix`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The prefix.
    pub value: String,
}

/// A request match.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HttpRouteMatch {
    /// Path match.
    pub path: HttpPathMatch,
}

/// A backend Service.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HttpBackendRef {
    /// Service name.
    pub name: String,
    /// Service port.
    pub port: i32,
}

/// One routing rule.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteRule {
    /// Matches.
    pub matches: Vec<HttpRouteMatch>,
    /// Filters applied before the request is forwarded (only `URLRewrite` is rendered).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<HttpRouteFilter>,
    /// Backends.
    pub backend_refs: Vec<HttpBackendRef>,
}

/// A route filter (Gateway API `HTTPRouteFilter`); only `type: URLRewrite` is rendered.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteFilter {
    /// `URLRewrite`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The rewrite.
    pub url_rewrite: HttpUrlRewrite,
}

/// `HTTPURLRewriteFilter`: here only its path.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HttpUrlRewrite {
    /// The path rewrite.
    pub path: HttpPathModifier,
}

/// `HTTPPathModifier` of type `ReplacePrefixMatch`: the matched prefix is replaced by `replacePrefixMatch`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HttpPathModifier {
    /// `ReplacePrefixMatch`.
    #[serde(rename = "type")]
    pub type_: String,
    /// What the matched prefix becomes, e.g. `/`.
    pub replace_prefix_match: String,
}

/// Route status as the Gateway controller writes it (kept as JSON: only read for `RouteReady`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct HttpRouteStatus {
    /// Per-parent status with `conditions` (`Accepted`, `ResolvedRefs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<serde_json::Value>,
}

/// Spec of an HTTPRoute.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "gateway.networking.k8s.io",
    version = "v1",
    kind = "HTTPRoute",
    plural = "httproutes",
    namespaced,
    schema = "disabled",
    status = "HttpRouteStatus",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteSpec {
    /// Gateways.
    pub parent_refs: Vec<HttpRouteParentRef>,
    /// Host names.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub hostnames: Vec<String>,
    /// Rules.
    pub rules: Vec<HttpRouteRule>,
}
