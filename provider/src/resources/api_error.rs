//! Kubernetes API errors as Terraform diagnostics: a field manager conflict names the other manager and the fix, a
//! missing CRD says how to install it, a 422's causes become diagnostics on the attribute paths they name.

use kube::core::ApiResource;

use super::ProviderContext;
use super::fields::{self, Field};
use crate::diag::Diagnostics;

/// What the provider was doing when the request failed, to say it in the summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Reading the object (refresh, import, create's existence check, delete's poll).
    Read,
    /// Server-side applying it (create, update).
    Apply,
    /// Deleting it.
    Delete,
}

impl Action {
    fn as_str(self) -> &'static str {
        match self {
            Action::Read => "read",
            Action::Apply => "apply",
            Action::Delete => "delete",
        }
    }
}

/// Reads `name` through `api`: `Ok(None)` only when the API server says that object is not found (a 404 whose Status
/// names it). A 404 without the name is the resource type missing (the CRDs are not installed, or the context points
/// at another cluster) and stays an error, so a refresh never mistakes it for "deleted, create it again"
/// (terraform-provider-kubernetes#2597, terraform-provider-kubectl#295).
///
/// # Errors
/// Every API failure but the object's own 404.
pub async fn get_object(
    api: &kube::Api<kube::api::DynamicObject>,
    name: &str,
) -> Result<Option<kube::api::DynamicObject>, kube::Error> {
    match api.get(name).await {
        Ok(object) => Ok(Some(object)),
        Err(kube::Error::Api(status)) if status.is_not_found() && names_object(&status, name) => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Whether a 404 Status is about the object `name` (its details name it) rather than about the resource type.
fn names_object(status: &kube::core::Status, name: &str) -> bool {
    status.details.as_ref().is_some_and(|d| d.name == name)
}

/// The cluster the provider talks to, as its configuration names it, for messages: `context "kind-a"`, `host
/// "https://..."`, or the kubeconfig's current context.
pub fn cluster_named(ctx: &ProviderContext) -> String {
    match (&ctx.config.kubeconfig_context, &ctx.config.host) {
        (Some(context), _) => format!("kubeconfig context {context:?}"),
        (None, Some(host)) => format!("host {host:?}"),
        (None, None) => "the kubeconfig's current context".to_owned(),
    }
}

/// The detail of a request that got no Kubernetes answer (a connection refused, a timeout, TLS, credentials, a body
/// that is not a Kubernetes object): the server it was sent to (the client's URL and the configuration that chose
/// it), every cause in `err`'s source chain, and, when the server did not answer, what to check. kube's own message
/// names no host (`error trying to connect: ...`).
fn unanswered(err: &kube::Error, ctx: &ProviderContext) -> String {
    let mut causes = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !causes.contains(&text) {
            causes.push_str(": ");
            causes.push_str(&text);
        }
        source = cause.source();
    }
    let server = ctx
        .client
        .cluster_url()
        .map_or_else(String::new, |url| format!(" {url}"));
    // Advice on reaching the server only when it did not answer (connect, TLS, timeout); credentials (an exec plugin)
    // and an answer that is not a Kubernetes object have their cause in the message.
    let advice = if matches!(err, kube::Error::HyperError(_) | kube::Error::Service(_)) {
        " Check that the API server is running and reachable from where Terraform runs, and that the provider block \
         names the right cluster."
    } else {
        ""
    };
    format!(
        "The Kubernetes API request to{server} ({}) failed: {causes}.{advice}",
        cluster_named(ctx)
    )
}

/// Translates `err` from `action` on `object` (`namespace/name` of kind `api`) into diagnostics, with attribute paths
/// (through `fields`) where the API server names the fields.
pub fn diagnostics(
    err: kube::Error,
    action: Action,
    api: &ApiResource,
    object: &str,
    fields: &[Field],
    ctx: &ProviderContext,
) -> Diagnostics {
    let kind = &api.kind;
    let kube::Error::Api(status) = &err else {
        return Diagnostics::error(
            format!("Cannot {} {kind} {object}", action.as_str()),
            unanswered(&err, ctx),
        );
    };
    if status.is_conflict() && action == Action::Apply {
        return Diagnostics::error(
            format!("Field manager conflict applying {kind} {object}"),
            format!(
                "{}\n\nAnother field manager owns these fields (named above with the fields). Make the \
                 configuration agree with it, remove its changes, or set force_conflicts = true in the provider \
                 block to take ownership as field manager {:?}.",
                status.message, ctx.config.field_manager
            ),
        );
    }
    if status.code == 404 && status.details.as_ref().is_none_or(|d| d.name.is_empty()) {
        return Diagnostics::error(
            format!(
                "{kind} API not found while trying to {} {object}",
                action.as_str()
            ),
            format!(
                "The API server of {} has no {}/{} {} resource ({kind}): the Model Fleet CRDs are not installed \
                 there, or this is not the cluster the object was created on. Nothing was changed (a resource in state \
                 stays there): install the CRDs (chart or `model-fleet-operator crd`) or point the provider at the right cluster, \
                 then plan again. Server said: {}",
                cluster_named(ctx),
                api.group,
                api.version,
                api.plural,
                status.message
            ),
        );
    }
    let mut diags = Diagnostics::new();
    let causes = status
        .details
        .as_ref()
        .map(|d| d.causes.as_slice())
        .unwrap_or_default();
    for cause in causes {
        diags.push_error(
            fields::attr_path_for(fields, &cause.field),
            format!("Invalid {kind} {object}"),
            format!("{} (field {})", cause.message, cause.field),
        );
    }
    if diags.0.is_empty() {
        diags.push_error(
            None,
            format!("Cannot {} {kind} {object}", action.as_str()),
            format!(
                "{} ({}, HTTP {})",
                status.message, status.reason, status.code
            ),
        );
    }
    diags
}

#[cfg(test)]
mod tests {
    use kube::api::{Api, DynamicObject};
    use kube::core::ApiResource;

    use super::{Action, diagnostics};
    use crate::config::ProviderConfig;
    use crate::resources::ProviderContext;

    // A new-user trial: with the API server down, the error named no host ("error trying to connect: ..."). Port 1 of
    // loopback is closed, so the connection is refused at once.
    #[tokio::test]
    async fn a_request_nobody_answers_names_the_server_and_the_cause() {
        let ctx = ProviderContext::new(ProviderConfig {
            host: Some("https://127.0.0.1:1".into()),
            token: Some("t".into()),
            insecure: true,
            ..ProviderConfig::default()
        });
        let client = ctx.client.get().await.unwrap();
        let api = ApiResource::erase::<model_fleet_api::InferenceService>(&());
        let err = Api::<DynamicObject>::namespaced_with(client, "default", &api)
            .get("m")
            .await
            .unwrap_err();
        let diags = diagnostics(err, Action::Read, &api, "default/m", &[], &ctx);
        let detail = &diags.0[0].detail;
        assert!(
            detail.contains("request to https://127.0.0.1:1/ (host \"https://127.0.0.1:1\")"),
            "{detail}"
        );
        assert!(
            detail.to_lowercase().contains("connection refused"),
            "{detail}"
        );
        assert!(
            detail.contains("Check that the API server is running"),
            "{detail}"
        );
    }
}
