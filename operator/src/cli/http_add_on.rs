//! Where the KEDA HTTP add-on runs: flags shared by `run` and `render` (services with `scaling.http`).

use model_fleet_api::render::HttpAddOn;
use model_fleet_api::render::http_add_on::{
    DEFAULT_INTERCEPTOR_PORT, DEFAULT_INTERCEPTOR_SERVICE, DEFAULT_NAMESPACE, scaler_address_in,
};

/// `run --http-add-on`: whether the operator uses the KEDA HTTP add-on at all.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpAddOnMode {
    /// Use it wherever its `InterceptorRoute` CRD is served (discovery, re-asked every 30 s).
    Auto,
    /// Never use it, even where its CRDs are installed: services with `scaling.http` report `DependencyMissing`
    /// naming this flag. The chart passes it unless `httpAddOn.enabled`, since the operator then has no Role in the
    /// add-on's namespace for its ReferenceGrants.
    Disabled,
}

/// The add-on's namespace, interceptor Service and external scaler (defaults: its Helm chart in `keda`).
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct HttpAddOnArgs {
    /// Namespace of the KEDA HTTP add-on: HTTPRoutes of services with scaling.http point at its interceptor there,
    /// and the operator keeps one ReferenceGrant per source namespace in it.
    #[arg(long, value_name = "NAMESPACE", default_value = DEFAULT_NAMESPACE)]
    pub http_add_on_namespace: String,

    /// The add-on's interceptor proxy Service (in --http-add-on-namespace).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_INTERCEPTOR_SERVICE)]
    pub http_interceptor_service: String,

    /// Port of the interceptor proxy Service.
    #[arg(long, value_name = "PORT", default_value_t = DEFAULT_INTERCEPTOR_PORT,
          value_parser = clap::value_parser!(i32).range(1..=65535))]
    pub http_interceptor_port: i32,

    /// HOST:PORT of the add-on's external scaler, the scalerAddress of the ScaledObject's external-push trigger
    /// (default: keda-add-ons-http-external-scaler.<--http-add-on-namespace>:9090).
    #[arg(long, value_name = "HOST:PORT")]
    pub http_scaler_address: Option<String>,
}

impl HttpAddOnArgs {
    /// The render configuration's view.
    pub fn add_on(&self) -> HttpAddOn {
        HttpAddOn {
            namespace: self.http_add_on_namespace.clone(),
            interceptor_service: self.http_interceptor_service.clone(),
            interceptor_port: self.http_interceptor_port,
            scaler_address: self
                .http_scaler_address
                .clone()
                .unwrap_or_else(|| scaler_address_in(&self.http_add_on_namespace)),
        }
    }
}
