//! The Gateway API HTTPRoute, only with `gateway` (DESIGN.md section 3: only an HTTPRoute is created; TLS stays with
//! the Gateway's admin): the hostnames and one path-prefix rule to the Service.

use super::gateway::{
    HTTPRoute, HttpBackendRef, HttpPathMatch, HttpPathModifier, HttpRouteFilter, HttpRouteMatch,
    HttpRouteParentRef, HttpRouteRule, HttpRouteSpec, HttpUrlRewrite,
};
use super::inference::Workload;
use super::meta::child_meta;
use super::service::SERVICE_PORT;
use crate::InferenceService;

/// The HTTPRoute of `isvc` (which has `gateway`) on `parent`.
pub(crate) fn http_route(
    isvc: &InferenceService,
    workload: &Workload,
    parent: HttpRouteParentRef,
) -> HTTPRoute {
    let gateway = isvc.spec.gateway.clone().unwrap_or_default();
    let prefix = gateway.path_prefix.unwrap_or_else(|| "/".to_string());
    // Stripping `/` would change nothing: no filter then.
    let strip = gateway.strip_path_prefix == Some(true) && prefix != "/";
    let filters = if strip {
        vec![HttpRouteFilter {
            type_: "URLRewrite".to_string(),
            url_rewrite: HttpUrlRewrite {
                path: HttpPathModifier {
                    type_: "ReplacePrefixMatch".to_string(),
                    replace_prefix_match: "/".to_string(),
                },
            },
        }]
    } else {
        Vec::new()
    };
    HTTPRoute {
        metadata: child_meta(
            &workload.owner,
            workload.name.clone(),
            workload.labels.clone(),
        ),
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
                backend_refs: vec![HttpBackendRef {
                    name: workload.service_name.clone(),
                    port: SERVICE_PORT,
                }],
            }],
        },
        status: None,
    }
}
