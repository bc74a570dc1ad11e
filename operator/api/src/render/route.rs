//! The Gateway API HTTPRoute, only with `gateway` (DESIGN.md section 3: only an HTTPRoute is created; TLS stays with
//! the Gateway's admin): the hostnames and one path-prefix rule to the Service, or with `scaling.http` to the KEDA
//! HTTP add-on's interceptor, with the header that names the service's InterceptorRoute ([`super::wake`]).

use super::gateway::{
    HTTPRoute, HttpBackendRef, HttpPathMatch, HttpPathModifier, HttpRouteFilter, HttpRouteMatch,
    HttpRouteParentRef, HttpRouteRule, HttpRouteSpec, HttpUrlRewrite,
};
use super::http_add_on::HttpAddOn;
use super::inference::Workload;
use super::service::SERVICE_PORT;
use super::wake;
use crate::InferenceService;

/// The HTTPRoute of `isvc` (which has `gateway`) on `parent`; through the interceptor of `add_on` when the service
/// has `scaling.http`.
pub(crate) fn http_route(
    isvc: &InferenceService,
    workload: &Workload,
    parent: HttpRouteParentRef,
    add_on: &HttpAddOn,
) -> HTTPRoute {
    let gateway = isvc.spec.gateway.clone().unwrap_or_default();
    let prefix = gateway.path_prefix.unwrap_or_else(|| "/".to_string());
    // Stripping `/` would change nothing: no filter then.
    let strip = gateway.strip_path_prefix == Some(true) && prefix != "/";
    let mut filters = Vec::new();
    if strip {
        filters.push(HttpRouteFilter {
            type_: "URLRewrite".to_string(),
            url_rewrite: Some(HttpUrlRewrite {
                path: HttpPathModifier {
                    type_: "ReplacePrefixMatch".to_string(),
                    replace_prefix_match: "/".to_string(),
                },
            }),
            request_header_modifier: None,
        });
    }
    let (backend, timeouts) = match wake::http_scaling(isvc) {
        Some(http) => {
            filters.push(wake::header_filter(isvc));
            (wake::backend(add_on), Some(wake::route_timeouts(http)))
        }
        None => (
            HttpBackendRef {
                name: workload.service_name.clone(),
                namespace: None,
                port: SERVICE_PORT,
            },
            None,
        ),
    };
    HTTPRoute {
        metadata: workload.child_meta(),
        spec: HttpRouteSpec {
            parent_refs: vec![parent],
            hostnames: gateway.hostnames.unwrap_or_default(),
            rules: vec![HttpRouteRule {
                matches: vec![HttpRouteMatch {
                    path: HttpPathMatch {
                        type_: "PathPrefix".to_string(),
                        value: prefix,
                    },
                }],
                filters,
                backend_refs: vec![backend],
                timeouts,
            }],
        },
        status: None,
    }
}
