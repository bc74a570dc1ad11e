//! Which cluster a resource lives on, so a refresh against another cluster is an error instead of "gone, create it"
//! (terraform-provider-kubernetes#2597).
//!
//! At create and import, and at every refresh that finds the object, the provider records the cluster's identity,
//! the UID of its `kube-system` Namespace (the API server creates it once and it is never recreated), in the
//! resource's tfplugin5 private state: opaque bytes Terraform stores beside the state and hands back on every call.
//! When a refresh does not find the object, the recorded identity is compared with the identity of the cluster the
//! provider now talks to: a mismatch is an error naming the kind, the object, the cluster and both identities, and
//! Terraform keeps the resource (so a destroy against the right cluster still works). A state without a recorded
//! identity (written by an older provider, or by credentials that may not read the `kube-system` Namespace) keeps
//! the old behaviour: the object is gone.

use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use serde_json::Value as Json;

use super::private_state;

use crate::diag::Diagnostics;

/// The Namespace whose UID names a cluster.
pub const IDENTITY_NAMESPACE: &str = "kube-system";

/// The key of the cluster identity in the private state's JSON object.
pub const PRIVATE_KEY: &str = "cluster_uid";

/// The cluster identity recorded in `private`, if any.
pub fn recorded(private: &[u8]) -> Option<String> {
    private_state::object(private)
        .get(PRIVATE_KEY)
        .and_then(Json::as_str)
        .filter(|uid| !uid.is_empty())
        .map(str::to_owned)
}

/// `private` with the cluster identity set to `uid` (other keys kept); `private` unchanged when `uid` is `None`.
pub fn with_identity(private: &[u8], uid: Option<&str>) -> Vec<u8> {
    let Some(uid) = uid else {
        return private.to_vec();
    };
    private_state::edited(private, |object| {
        object.insert(PRIVATE_KEY.to_owned(), Json::String(uid.to_owned()));
    })
}

/// What a refresh that did not find `object` (`namespace/name` of `kind`) on the cluster `cluster` (as the
/// configuration names it) means: `Ok(())` when the object is really gone (no identity recorded, the current one
/// unknown, or both equal), an error when the state was recorded on another cluster.
///
/// # Errors
/// The identities differ: a diagnostic naming the kind, the object, the cluster and both identities.
pub fn check_gone(
    recorded: Option<&str>,
    current: Option<&str>,
    kind: &str,
    object: &str,
    cluster: &str,
) -> Result<(), Diagnostics> {
    match (recorded, current) {
        (Some(recorded), Some(current)) if recorded != current => Err(Diagnostics::error(
            format!("{kind} {object} was created on another cluster"),
            format!(
                "The provider now talks to {cluster}, a different cluster from the one {kind} {object} was created \
                 on (cluster identity, the UID of its kube-system Namespace: {current}, recorded in state: \
                 {recorded}). The object is not there, but it was not deleted either: Terraform keeps it in state \
                 and plans nothing. Point the provider (kubeconfig_path, kubeconfig_context or host) at the cluster \
                 the resource was created on; to move the resource to this cluster, remove it from state \
                 (`terraform state rm`) and apply again."
            ),
        )),
        _ => Ok(()),
    }
}

/// The identity of the cluster `client` talks to: the UID of its `kube-system` Namespace, or `None` when it cannot
/// be read (credentials without `get` on that Namespace, or any other failure: the identity check is then skipped,
/// it never fails an operation by itself).
pub async fn current(client: kube::Client) -> Option<String> {
    let namespaces: Api<Namespace> = Api::all(client);
    match namespaces.get(IDENTITY_NAMESPACE).await {
        Ok(namespace) => namespace.metadata.uid,
        Err(err) => {
            tracing::debug!(%err, "cannot read the cluster identity; the wrong-cluster check is skipped");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_state_round_trips_and_keeps_other_keys() {
        assert_eq!(recorded(b""), None);
        assert_eq!(recorded(b"not json"), None);
        assert_eq!(recorded(br#"{"cluster_uid": ""}"#), None);
        let first = with_identity(b"", Some("uid-a"));
        assert_eq!(recorded(&first).as_deref(), Some("uid-a"));
        let other = with_identity(br#"{"other": 1}"#, Some("uid-b"));
        assert_eq!(recorded(&other).as_deref(), Some("uid-b"));
        assert_eq!(private_state::object(&other)["other"], Json::from(1));
        assert_eq!(with_identity(b"opaque", None), b"opaque".to_vec());
        // Unchanged bytes when the identity is already there (no needless private-state churn).
        assert_eq!(with_identity(&first, Some("uid-a")), first);
    }

    #[test]
    fn only_a_different_known_identity_is_an_error() {
        let check = |recorded, current| {
            check_gone(
                recorded,
                current,
                "Dataset",
                "ml/corpus",
                "kubeconfig context \"b\"",
            )
        };
        assert!(check(None, None).is_ok());
        assert!(
            check(None, Some("b")).is_ok(),
            "old states keep today's behaviour"
        );
        assert!(
            check(Some("a"), None).is_ok(),
            "unreadable identity: no check"
        );
        assert!(
            check(Some("a"), Some("a")).is_ok(),
            "same cluster: really gone"
        );
        let diags = check(Some("uid-a"), Some("uid-b")).unwrap_err();
        assert!(diags.has_errors());
        let text = format!("{} {}", diags.0[0].summary, diags.0[0].detail);
        for part in [
            "Dataset ml/corpus",
            "kubeconfig context \"b\"",
            "uid-a",
            "uid-b",
            "keeps it",
        ] {
            assert!(text.contains(part), "{part} missing from {text}");
        }
    }
}
