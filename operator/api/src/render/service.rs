//! The model server's ClusterIP Service on port 80, targeting the serving container's named port.

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::deployment::PORT_NAME;
use super::inference::Workload;
use super::meta::child_meta;

/// Service port the route and clients use.
pub const SERVICE_PORT: i32 = 80;

/// The Service (named with a DNS-1035 label: Service names must start with a letter).
pub(crate) fn service(workload: &Workload) -> Service {
    Service {
        metadata: child_meta(
            &workload.owner,
            workload.service_name.clone(),
            workload.labels.clone(),
        ),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_string()),
            selector: Some(workload.selector.clone()),
            ports: Some(vec![ServicePort {
                name: Some(PORT_NAME.to_string()),
                port: SERVICE_PORT,
                target_port: Some(IntOrString::String(PORT_NAME.to_string())),
                protocol: Some("TCP".to_string()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    }
}
