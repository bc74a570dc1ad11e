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
    /// Service namespace when not the route's own (allowed by a ReferenceGrant there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
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
    /// Timeouts (`HTTPRouteTimeouts`, standard channel since Gateway API v1.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<HttpRouteTimeouts>,
}

/// `HTTPRouteTimeouts`: here only `request` (Gateway API duration; `0s` disables the Gateway's own deadline).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HttpRouteTimeouts {
    /// Deadline of the whole request at the Gateway.
    pub request: String,
}

/// A route filter (Gateway API `HTTPRouteFilter`): `type: URLRewrite` with `urlRewrite`, or
/// `type: RequestHeaderModifier` with `requestHeaderModifier`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteFilter {
    /// `URLRewrite` or `RequestHeaderModifier`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The rewrite (`URLRewrite`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url_rewrite: Option<HttpUrlRewrite>,
    /// The headers set (`RequestHeaderModifier`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_header_modifier: Option<HttpHeaderModifier>,
}

/// `HTTPHeaderFilter`: here only `set` (replaces any value the client sent).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HttpHeaderModifier {
    /// Headers to set.
    pub set: Vec<HttpHeader>,
}

/// One header name and value.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HttpHeader {
    /// Header name.
    pub name: String,
    /// Header value.
    pub value: String,
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

/// `ReferenceGrant.spec.from[]`: the kind and namespace allowed to refer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ReferenceGrantFrom {
    /// `gateway.networking.k8s.io`.
    pub group: String,
    /// `HTTPRoute`.
    pub kind: String,
    /// The referring namespace.
    pub namespace: String,
}

/// `ReferenceGrant.spec.to[]`: the object that may be referred to.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ReferenceGrantTo {
    /// `""` (core).
    pub group: String,
    /// `Service`.
    pub kind: String,
    /// Its name.
    pub name: String,
}

/// Spec of a Gateway API ReferenceGrant (`gateway.networking.k8s.io/v1beta1`, standard channel): lets routes of the
/// `from` namespaces use the `to` objects of the grant's own namespace as backends.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "gateway.networking.k8s.io",
    version = "v1beta1",
    kind = "ReferenceGrant",
    plural = "referencegrants",
    namespaced,
    schema = "disabled",
    derive = "PartialEq"
)]
pub struct ReferenceGrantSpec {
    /// Who may refer.
    pub from: Vec<ReferenceGrantFrom>,
    /// To what.
    pub to: Vec<ReferenceGrantTo>,
}
