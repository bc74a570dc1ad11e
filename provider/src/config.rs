//! The provider configuration (DESIGN.md section 6): parsed from the `provider "modelfleet"` block
//! (tfplugin5 `PrepareProviderConfig` validates it, `Configure` stores it).

use crate::diag::{AttrPath, Diagnostics};
use crate::schema::DEFAULT_FIELD_MANAGER;
use crate::value::Value;

/// Namespace used when neither the resource nor the provider sets one.
pub const DEFAULT_NAMESPACE: &str = "default";

/// How resources find their namespace when the configuration leaves it null.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DefaultNamespace {
    /// A known namespace.
    Known(String),
    /// The provider's `namespace` depends on something not yet applied.
    Unknown,
}

/// The parsed provider configuration. Unknown values (possible when the provider block depends
/// on resources not applied yet) count as unset, except `namespace`, which plans keep unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderConfig {
    /// `kubeconfig_path`.
    pub kubeconfig_path: Option<String>,
    /// `kubeconfig_context`.
    pub kubeconfig_context: Option<String>,
    /// `host` (API server URL).
    pub host: Option<String>,
    /// `token` (sensitive).
    pub token: Option<String>,
    /// `client_certificate` (PEM).
    pub client_certificate: Option<String>,
    /// `client_key` (PEM, sensitive).
    pub client_key: Option<String>,
    /// `cluster_ca_certificate` (PEM).
    pub cluster_ca_certificate: Option<String>,
    /// `insecure`.
    pub insecure: bool,
    /// The connection settings (`kubeconfig_path`, `kubeconfig_context`, `host`, `token`, `client_certificate`,
    /// `client_key`, `cluster_ca_certificate`, `insecure`) whose value is unknown, in that order: they depend on
    /// something not applied yet, so a request now could reach another cluster (the default kubeconfig's, or the one
    /// the known settings alone name). While any is, nothing is read: see `ProviderContext::unknown_connection`.
    pub unknown_connection: Vec<String>,
    /// Default namespace for resources.
    pub namespace: DefaultNamespace,
    /// Server-side apply field manager.
    pub field_manager: String,
    /// Server-side apply `force`.
    pub force_conflicts: bool,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        ProviderConfig {
            kubeconfig_path: None,
            kubeconfig_context: None,
            host: None,
            token: None,
            client_certificate: None,
            client_key: None,
            cluster_ca_certificate: None,
            insecure: false,
            unknown_connection: Vec::new(),
            namespace: DefaultNamespace::Known(DEFAULT_NAMESPACE.to_string()),
            field_manager: DEFAULT_FIELD_MANAGER.to_string(),
            force_conflicts: false,
        }
    }
}

/// The provider attributes that say which cluster to talk to and how, in schema order (the schema's test checks that
/// they and `namespace`, `field_manager`, `force_conflicts` are all its attributes).
pub const CONNECTION_ATTRIBUTES: &[&str] = &[
    "kubeconfig_path",
    "kubeconfig_context",
    "host",
    "token",
    "client_certificate",
    "client_key",
    "cluster_ca_certificate",
    "insecure",
];

fn known_string(config: &Value, name: &str) -> Option<String> {
    config
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_string)
        .filter(|s| !s.is_empty())
}

fn is_set(config: &Value, name: &str) -> bool {
    matches!(config.get(name), Some(v) if !v.is_null())
}

/// Checks a provider configuration value (known parts only; unknown parts are checked again at
/// Configure time). Diagnostics carry the attribute path.
pub fn validate(config: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if is_set(config, "host") && is_set(config, "kubeconfig_path") {
        diags.push_error(
            Some(AttrPath::attrs(&["host"])),
            "Conflicting cluster settings",
            "Set either `host` (with `token` or client certificate) or `kubeconfig_path`, not \
             both.",
        );
    }
    for (a, b) in [
        ("client_certificate", "client_key"),
        ("client_key", "client_certificate"),
    ] {
        if is_set(config, a) && matches!(config.get(b), Some(Value::Null) | None) {
            diags.push_error(
                Some(AttrPath::attrs(&[a])),
                format!("`{a}` requires `{b}`"),
                "Client certificate authentication needs both the certificate and its key.",
            );
        }
    }
    if let Some(host) = known_string(config, "host") {
        let ok = host
            .parse::<http::Uri>()
            .ok()
            .is_some_and(|uri| uri.scheme().is_some() && uri.host().is_some());
        if !ok {
            diags.push_error(
                Some(AttrPath::attrs(&["host"])),
                "Invalid API server URL",
                format!("`host` must be a URL such as https://127.0.0.1:6443, got {host:?}."),
            );
        }
    }
    if let Some(Value::String(manager)) = config.get("field_manager")
        && manager.trim().is_empty()
    {
        diags.push_error(
            Some(AttrPath::attrs(&["field_manager"])),
            "Empty field manager",
            "`field_manager` must be a non-empty name (default terraform-modelfleet).",
        );
    }
    if let Some(Value::String(ns)) = config.get("namespace")
        && !model_fleet_api::names::is_dns_label(ns)
    {
        diags.push_error(
            Some(AttrPath::attrs(&["namespace"])),
            "Invalid namespace",
            format!("{ns:?} is not a valid namespace name (RFC 1123 label)."),
        );
    }
    diags
}

impl ProviderConfig {
    /// Parses a validated configuration value (the object of the provider schema type).
    pub fn from_value(config: &Value) -> ProviderConfig {
        let defaults = ProviderConfig::default();
        ProviderConfig {
            kubeconfig_path: known_string(config, "kubeconfig_path"),
            kubeconfig_context: known_string(config, "kubeconfig_context"),
            host: known_string(config, "host"),
            token: known_string(config, "token"),
            client_certificate: known_string(config, "client_certificate"),
            client_key: known_string(config, "client_key"),
            cluster_ca_certificate: known_string(config, "cluster_ca_certificate"),
            insecure: config
                .get("insecure")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            unknown_connection: CONNECTION_ATTRIBUTES
                .iter()
                .filter(|name| matches!(config.get(name), Some(Value::Unknown)))
                .map(|name| (*name).to_string())
                .collect(),
            namespace: match config.get("namespace") {
                Some(Value::Unknown) => DefaultNamespace::Unknown,
                _ => known_string(config, "namespace")
                    .map_or(defaults.namespace, DefaultNamespace::Known),
            },
            field_manager: known_string(config, "field_manager").unwrap_or(defaults.field_manager),
            force_conflicts: config
                .get("force_conflicts")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::provider_schema;

    fn config(pairs: &[(&str, Value)]) -> Value {
        let mut value = Value::null_object(&provider_schema().value_type());
        if let Value::Object(attrs) = &mut value {
            for (k, v) in pairs {
                attrs.insert((*k).to_string(), v.clone());
            }
        }
        value
    }

    #[test]
    fn defaults_apply_when_unset() {
        let parsed = ProviderConfig::from_value(&config(&[]));
        assert_eq!(parsed, ProviderConfig::default());
        assert_eq!(parsed.field_manager, "terraform-modelfleet");
        assert!(!parsed.force_conflicts);
        assert!(validate(&config(&[])).0.is_empty());
    }

    #[test]
    fn explicit_values_and_unknown_namespace() {
        let parsed = ProviderConfig::from_value(&config(&[
            ("namespace", Value::Unknown),
            ("field_manager", Value::string("me")),
            ("force_conflicts", Value::Bool(true)),
        ]));
        assert_eq!(parsed.namespace, DefaultNamespace::Unknown);
        assert_eq!(parsed.field_manager, "me");
        assert!(parsed.force_conflicts);
        assert!(
            parsed.unknown_connection.is_empty(),
            "namespace is no connection setting"
        );
    }

    #[test]
    fn unknown_connection_settings_are_recorded_by_name() {
        let parsed = ProviderConfig::from_value(&config(&[
            ("token", Value::Unknown),
            ("host", Value::Unknown),
            ("kubeconfig_context", Value::string("kind-a")),
        ]));
        assert_eq!(parsed.unknown_connection, ["host", "token"]);
        assert_eq!(parsed.host, None, "an unknown value counts as unset");
    }

    #[test]
    fn validation_points_at_attributes() {
        let diags = validate(&config(&[
            ("host", Value::string("not a url")),
            ("client_certificate", Value::string("pem")),
            ("namespace", Value::string("Bad_NS")),
            ("field_manager", Value::string(" ")),
        ]));
        let paths: Vec<String> = diags
            .0
            .iter()
            .map(|d| d.path.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(
            paths,
            ["client_certificate", "host", "field_manager", "namespace"]
        );
        let both = validate(&config(&[
            ("host", Value::string("https://127.0.0.1:6443")),
            ("kubeconfig_path", Value::string("/tmp/kc")),
        ]));
        assert_eq!(both.0.len(), 1);
        // Unknown values are not judged yet.
        assert!(validate(&config(&[("host", Value::Unknown)])).0.is_empty());
    }
}
