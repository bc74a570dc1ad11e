//! `scaling.http`, HTTP wake-from-zero (DESIGN.md section 3, Scaling): what the KEDA HTTP add-on needs besides the
//! service's own children.
//!
//! - an `InterceptorRoute` named like the Deployment, whose one rule matches the header [`ROUTE_HEADER`] (value
//!   `namespace/name`): the HTTPRoute sets that header, so the interceptor finds the route whatever the hostname
//!   and even after the Gateway stripped `pathPrefix`, and two services never share a route;
//! - the HTTPRoute's backend becomes the interceptor's proxy Service in the add-on's namespace ([`backend`]), which
//!   Gateway API allows only with a `ReferenceGrant` there ([`reference_grant`], one per source namespace, kept by
//!   the operator since a cross-namespace object cannot be owned);
//! - an `external-push` trigger on the ScaledObject naming the route ([`trigger`]).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::gateway::{
    HttpBackendRef, HttpHeader, HttpHeaderModifier, HttpRouteFilter, HttpRouteTimeouts,
    ReferenceGrant, ReferenceGrantFrom, ReferenceGrantSpec, ReferenceGrantTo,
};
use super::http_add_on::{
    ConcurrencyTarget, HttpAddOn, InterceptorHeaderMatch, InterceptorRoute, InterceptorRouteSpec,
    InterceptorRule, InterceptorTarget, InterceptorTimeouts, RequestRateTarget, ScalingMetric,
    external_push_metadata,
};
use super::inference::Workload;
use super::meta::MANAGED_BY;
use super::service::SERVICE_PORT;
use crate::{
    DEFAULT_COLD_START_TIMEOUT_SECONDS, DEFAULT_TARGET_CONCURRENCY, HttpScaling, InferenceService,
    Trigger,
};

/// Header the HTTPRoute sets and the InterceptorRoute matches: `namespace/name` of the InferenceService.
pub const ROUTE_HEADER: &str = "x-model-fleet-route";

/// Label on a ReferenceGrant the operator keeps: the namespace whose routes it admits.
pub const LABEL_ROUTE_NAMESPACE: &str = "modelfleet.io/route-namespace";

/// Window of `targetRequestsPerSecond` (the add-on's default, stated so the rendered object says it).
pub const REQUEST_RATE_WINDOW: &str = "1m";

/// `scaling.http` of `isvc`, if given.
pub fn http_scaling(isvc: &InferenceService) -> Option<&HttpScaling> {
    isvc.spec.scaling.as_ref()?.http.as_ref()
}

/// The value of [`ROUTE_HEADER`] for `isvc`.
pub fn route_header_value(isvc: &InferenceService) -> String {
    format!(
        "{}/{}",
        isvc.metadata.namespace.as_deref().unwrap_or_default(),
        isvc.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The InterceptorRoute of a service with `scaling.http`: target the service's Service on port 80, one header rule,
/// the targets (concurrency [`DEFAULT_TARGET_CONCURRENCY`] when neither is given) and the timeouts in seconds.
pub(crate) fn interceptor_route(
    isvc: &InferenceService,
    http: &HttpScaling,
    workload: &Workload,
) -> InterceptorRoute {
    let concurrency = match (http.target_concurrency, http.target_requests_per_second) {
        (Some(value), _) => Some(value),
        (None, None) => Some(DEFAULT_TARGET_CONCURRENCY),
        (None, Some(_)) => None,
    };
    let cold_start = http
        .cold_start_timeout_seconds
        .unwrap_or(DEFAULT_COLD_START_TIMEOUT_SECONDS);
    InterceptorRoute {
        metadata: workload.child_meta(),
        spec: InterceptorRouteSpec {
            target: InterceptorTarget {
                service: workload.service_name.clone(),
                port: SERVICE_PORT,
            },
            rules: vec![InterceptorRule {
                headers: vec![InterceptorHeaderMatch {
                    name: ROUTE_HEADER.to_string(),
                    value: route_header_value(isvc),
                }],
            }],
            scaling_metric: ScalingMetric {
                concurrency: concurrency.map(|target_value| ConcurrencyTarget { target_value }),
                request_rate: http.target_requests_per_second.map(|target_value| {
                    RequestRateTarget {
                        target_value,
                        window: REQUEST_RATE_WINDOW.to_string(),
                    }
                }),
            },
            timeouts: InterceptorTimeouts {
                readiness: format!("{cold_start}s"),
                request: http.request_timeout_seconds.map(|s| format!("{s}s")),
            },
        },
    }
}

/// The `external-push` trigger that makes KEDA ask the add-on's scaler about the route named `route`.
pub(crate) fn trigger(add_on: &HttpAddOn, route: &str) -> Trigger {
    Trigger {
        type_: "external-push".to_string(),
        name: Some("http".to_string()),
        metadata: external_push_metadata(add_on, route),
        authentication_ref: None,
        metric_type: None,
    }
}

/// The HTTPRoute backend: the interceptor's proxy Service in the add-on's namespace.
pub(crate) fn backend(add_on: &HttpAddOn) -> HttpBackendRef {
    HttpBackendRef {
        name: add_on.interceptor_service.clone(),
        namespace: Some(add_on.namespace.clone()),
        port: add_on.interceptor_port,
    }
}

/// The HTTPRoute filter that sets [`ROUTE_HEADER`] (replacing whatever a client sent).
pub(crate) fn header_filter(isvc: &InferenceService) -> HttpRouteFilter {
    HttpRouteFilter {
        type_: "RequestHeaderModifier".to_string(),
        url_rewrite: None,
        request_header_modifier: Some(HttpHeaderModifier {
            set: vec![HttpHeader {
                name: ROUTE_HEADER.to_string(),
                value: route_header_value(isvc),
            }],
        }),
    }
}

/// The HTTPRoute rule's `timeouts`: `request` is `requestTimeoutSeconds` when given, else `0s` (no deadline at the
/// Gateway). A Gateway's own default (Envoy-based ones cut a route at 15 s) would end a request while the interceptor
/// still holds it for a cold start of minutes; the interceptor's readiness deadline bounds that wait instead.
pub(crate) fn route_timeouts(http: &HttpScaling) -> HttpRouteTimeouts {
    HttpRouteTimeouts {
        request: format!("{}s", http.request_timeout_seconds.unwrap_or(0)),
    }
}

/// Name of the ReferenceGrant admitting the routes of `namespace` (a DNS subdomain: at most 75 characters).
pub fn grant_name(namespace: &str) -> String {
    format!("model-fleet-{namespace}")
}

/// The ReferenceGrant, in the add-on's namespace, that lets HTTPRoutes of `namespace` use the interceptor Service.
/// It has no owner (owners must share its namespace): the operator creates it with the first service of
/// `namespace` that has `scaling.http` and deletes it once none is left.
pub fn reference_grant(namespace: &str, add_on: &HttpAddOn) -> ReferenceGrant {
    ReferenceGrant {
        metadata: ObjectMeta {
            name: Some(grant_name(namespace)),
            namespace: Some(add_on.namespace.clone()),
            labels: Some(BTreeMap::from([
                (
                    "app.kubernetes.io/managed-by".to_string(),
                    MANAGED_BY.to_string(),
                ),
                (LABEL_ROUTE_NAMESPACE.to_string(), namespace.to_string()),
            ])),
            ..ObjectMeta::default()
        },
        spec: ReferenceGrantSpec {
            from: vec![ReferenceGrantFrom {
                group: "gateway.networking.k8s.io".to_string(),
                kind: "HTTPRoute".to_string(),
                namespace: namespace.to_string(),
            }],
            to: vec![ReferenceGrantTo {
                group: String::new(),
                kind: "Service".to_string(),
                name: add_on.interceptor_service.clone(),
            }],
        },
    }
}

#[cfg(test)]
mod tests;
