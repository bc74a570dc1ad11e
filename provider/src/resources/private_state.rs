//! The resource's private state: opaque bytes Terraform stores beside a resource's state, hands to the provider with
//! every call on it (tfplugin5 `ReadResource.private`, `PlanResourceChange.prior_private`,
//! `ApplyResourceChange.planned_private`) and keeps what the provider returns. This provider keeps one JSON object
//! there; its keys belong to the modules that use them: `cluster_uid` ([`super::cluster_identity`]), `imported` and
//! `field_manager` ([`super::takeover`]).

use serde_json::{Map, Value as Json};

/// The private state as a JSON object; empty or unreadable bytes (an older provider's, or none) are an empty object.
pub fn object(private: &[u8]) -> Map<String, Json> {
    serde_json::from_slice::<Json>(private)
        .ok()
        .and_then(|v| match v {
            Json::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default()
}

/// `private` after `edit` on its JSON object (other keys kept). The same bytes come back when `edit` changes nothing,
/// so an unchanged private state never churns; unreadable bytes are replaced only when `edit` adds something.
pub fn edited(private: &[u8], edit: impl FnOnce(&mut Map<String, Json>)) -> Vec<u8> {
    let before = object(private);
    let mut after = before.clone();
    edit(&mut after);
    if after == before {
        return private.to_vec();
    }
    serde_json::to_vec(&Json::Object(after)).unwrap_or_else(|_| private.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_keep_other_keys_and_unchanged_bytes() {
        assert!(object(b"").is_empty());
        assert!(object(b"not json").is_empty());
        assert!(object(b"[1]").is_empty());
        let set = edited(br#"{"other": 1}"#, |m| {
            m.insert("k".into(), Json::from("v"));
        });
        assert_eq!(object(&set)["other"], Json::from(1));
        assert_eq!(object(&set)["k"], Json::from("v"));
        assert_eq!(edited(b"opaque", |_| {}), b"opaque".to_vec());
        assert_eq!(
            edited(&set, |m| {
                m.insert("k".into(), Json::from("v"));
            }),
            set
        );
    }
}
