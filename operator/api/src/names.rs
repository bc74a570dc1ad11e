//! Child names and label values (DESIGN.md section 3, "Names"; case O-01): an object name may be
//! up to 253 characters, but children need names valid for their own kind. The same name is used
//! when it is valid; otherwise a truncated name with a stable hash suffix. One utility, used for
//! every child and label value, plus the RFC 1123 rules the API server applies to object names.

use sha2::{Digest, Sha256};

/// Longest child name and label value we produce (DNS-1123 / DNS-1035 label, label value).
pub const MAX_LEN: usize = 63;

/// Length of the hash suffix (hex characters of SHA-256 of the full input).
const HASH_LEN: usize = 10;

/// What a name must satisfy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// DNS-1123 label: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 (Deployment, Job, ScaledObject,
    /// HTTPRoute: kept to a label so pod names and `job-name` labels stay valid).
    Dns1123Label,
    /// DNS-1035 label: like DNS-1123 but starting with a letter (Service).
    Dns1035Label,
    /// Label value: `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63.
    LabelValue,
}

impl NameRule {
    /// Whether `name` is already valid.
    pub fn is_valid(self, name: &str) -> bool {
        let bytes = name.as_bytes();
        if name.len() > MAX_LEN {
            return false;
        }
        if name.is_empty() {
            return self == NameRule::LabelValue;
        }
        let first = bytes[0];
        let last = bytes[bytes.len() - 1];
        match self {
            NameRule::Dns1123Label | NameRule::Dns1035Label => {
                let body_ok = bytes
                    .iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-');
                let first_ok = if self == NameRule::Dns1035Label {
                    first.is_ascii_lowercase()
                } else {
                    first.is_ascii_alphanumeric()
                };
                body_ok && first_ok && last.is_ascii_alphanumeric()
            }
            NameRule::LabelValue => {
                bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
                    && first.is_ascii_alphanumeric()
                    && last.is_ascii_alphanumeric()
            }
        }
    }
}

/// First `HASH_LEN` hex characters of SHA-256 of `input`: stable across runs and versions.
pub fn stable_hash(input: &str) -> String {
    let digest = Sha256::digest(input.as_bytes());
    digest
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()[..HASH_LEN]
        .to_string()
}

/// `name` when valid under `rule`, else a valid name: the sanitized prefix (lower-cased, other
/// characters turned into `-`, an `x` in front when a letter must come first), cut so that `-`
/// plus a hash of the full original name fits in 63 characters. Distinct inputs get distinct
/// results (the hash covers the whole input), and the result never changes for the same input.
pub fn child_name(name: &str, rule: NameRule) -> String {
    child_name_within(name, rule, MAX_LEN)
}

/// Like [`child_name`] with a tighter length limit `max_len` (at most 63, at least 16), for
/// names the cluster extends (an Indexed Job's pods are named `<job>-<index>`).
pub fn child_name_within(name: &str, rule: NameRule, max_len: usize) -> String {
    let max_len = max_len.clamp(HASH_LEN + 6, MAX_LEN);
    if rule.is_valid(name) && name.len() <= max_len {
        return name.to_string();
    }
    let mut prefix: String = name
        .chars()
        .map(|c| match rule {
            NameRule::LabelValue if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') => c,
            _ if c.is_ascii_alphanumeric() => c.to_ascii_lowercase(),
            _ => '-',
        })
        .collect();
    if rule == NameRule::Dns1035Label && !prefix.starts_with(|c: char| c.is_ascii_lowercase()) {
        prefix.insert(0, 'x');
    }
    prefix.truncate(max_len - HASH_LEN - 1);
    let prefix = prefix.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    let prefix = prefix.trim_start_matches(|c: char| !c.is_ascii_alphanumeric());
    let hash = stable_hash(name);
    if prefix.is_empty() {
        if rule == NameRule::Dns1035Label {
            format!("x{hash}")
        } else {
            hash
        }
    } else {
        format!("{prefix}-{hash}")
    }
}

/// An RFC 1123 label (namespaces, DNS-1123 child names): 1-63 of `[a-z0-9-]`, alphanumeric at both ends.
pub fn is_dns_label(s: &str) -> bool {
    NameRule::Dns1123Label.is_valid(s) && !s.is_empty()
}

/// Longest DNS-1123 subdomain (`validation.DNS1123SubdomainMaxLength`).
pub const MAX_SUBDOMAIN_LEN: usize = 253;

/// The CRD schema's `pattern` of an object-name field ([`is_dns_subdomain`]'s regex, anchored; the length is the
/// field's own `maxLength`): Kubernetes' `dns1123SubdomainFmt`.
pub const DNS_SUBDOMAIN_PATTERN: &str =
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

/// The CRD schema's `pattern` of a label value (`gpu.products[]`, a toleration's `value`): Kubernetes'
/// `IsValidLabelValue`, empty or `[-A-Za-z0-9_.]` alphanumeric at both ends; the length (at most 63) is the field's
/// own `maxLength`.
pub const LABEL_VALUE_PATTERN: &str = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";

/// The CRD schema's `pattern` of a container `image`: no whitespace at either end, which Kubernetes refuses on the
/// pod (`validateContainerOnlyForPod`: "must not have leading or trailing whitespace"), after the Deployment or Job
/// that carries it was accepted, so the workload never got a pod. Whitespace is Go's `unicode.IsSpace`, which
/// `strings.TrimSpace` there uses: Unicode's `White_Space`, spelled out because the API server's RE2 `\s` is ASCII
/// only and has no `\v` (it is `\t-\r`, U+0085 and the separators `\p{Z}`, which take in the no-break space).
pub const IMAGE_PATTERN: &str = r"^[^\t-\r\x{85}\p{Z}](.*[^\t-\r\x{85}\p{Z}])?$";

/// The CRD schema's `pattern` of an env variable name (`env[].name`): Kubernetes' `IsEnvVarName` before 1.32 (the strict
/// rule, kept so one spec works on every supported cluster).
pub const ENV_NAME_PATTERN: &str = r"^[-._a-zA-Z][-._a-zA-Z0-9]*$";

/// The CRD schema's `pattern` of a mount path or an HTTP path: absolute, starting with `/`.
pub const ABSOLUTE_PATH_PATTERN: &str = r"^/";

/// The CRD schema's `pattern` of `gpu.resourceName`: a qualified name with a DNS prefix (`example.com/device`), as
/// Kubernetes' `IsExtendedResourceName` requires.
pub const EXTENDED_RESOURCE_PATTERN: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";

/// The CRD schema's `pattern` of a toleration `key`: empty or a qualified name (Kubernetes' `IsQualifiedName`).
pub const OPTIONAL_QUALIFIED_NAME_PATTERN: &str = r"^(([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$";

/// The CRD schema's `pattern` of a Dataset `version` (also a label value's characters).
pub const VERSION_PATTERN: &str = r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$";

/// The CRD schema's `pattern` of `gateway.pathPrefix`: Gateway API's `HTTPPathMatch` path characters and `%XX` escapes.
pub const PATH_PREFIX_PATTERN: &str = r"^/([-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})*$";

/// The CRD schema's `pattern` of every quantity (`resources.requests`/`.limits` values, `emptyDir.sizeLimit`): a
/// Kubernetes quantity as `k8s.io/apimachinery` parses it ([`crate::quantity`]: a number of digits with at most one
/// `.`, which may be empty, then one suffix `Ki`..`Ei`, `n`..`E` or `e<integer>`, not both empty; spaces around are
/// trimmed), not negative (Kubernetes refuses a negative amount on the pod): a `-` only before zeros. Looser than
/// [`crate::quantity::check`] (an exponent's range, digits before a small exponent), which `render -f` and the
/// provider apply.
pub const QUANTITY_PATTERN: &str = r"^[\t-\r\x{85}\p{Z}]*((\+|-|\+?[0-9]+(\.[0-9]*)?|\+?\.[0-9]*|-0+(\.0*)?|-\.0*)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?|[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)[\t-\r\x{85}\p{Z}]*$";

/// The CRD schema's `pattern` of `schedule.expiresAt`, beside `format: date-time`: RFC 3339's `date-time` (digits in
/// place, a `.` before the fraction, an offset within 23:59). The API server's `date-time` check (kube-openapi
/// `strfmt.IsDateTime`) alone also takes any character in place of the `.` and offsets such as `+99:99`, which no RFC
/// 3339 parser reads, so the operator would ignore such a schedule.
pub const DATE_TIME_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$";

/// The CRD schema's `pattern` of `gateway.hostnames[]`: Gateway API's `Hostname`, a DNS name with an optional `*.`.
pub const HOSTNAME_PATTERN: &str =
    r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

/// The CRD schema's `pattern` of a namespace or another DNS-1123 label field (container and volume names; the length,
/// at most 63, is the field's own `maxLength`): Kubernetes' `dns1123LabelFmt`, anchored.
pub const DNS_LABEL_PATTERN: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

/// The CRD schema's `pattern` of a Secret or ConfigMap key (`secretKeyRef.key`, `configMapKeyRef.key`): Kubernetes'
/// `IsConfigMapKey` (`k8s.io/apimachinery/pkg/util/validation`): characters `[-._a-zA-Z0-9]`, and not `.`, `..` or a
/// name starting with `..`. The length (at most 253) is the field's own `maxLength`.
pub const CONFIG_MAP_KEY_PATTERN: &str = r"^\.?[-_a-zA-Z0-9][-._a-zA-Z0-9]*$";

/// An RFC 1123 subdomain (object names: custom resources, Gateways, ServiceAccounts, PriorityClasses): 1-253
/// characters matching `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`. Exactly Kubernetes'
/// `IsDNS1123Subdomain` (`k8s.io/apimachinery/pkg/util/validation`): only the total length is limited, not each
/// dot-separated part, so a 70-character name without dots is valid (its children get hashed names,
/// [`child_name`]). Where a name must also be a label (at most 63: a Service, a namespace) use [`is_dns_label`].
pub fn is_dns_subdomain(s: &str) -> bool {
    (1..=MAX_SUBDOMAIN_LEN).contains(&s.len()) && s.split('.').all(is_label_shaped)
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` of any length: one dot-separated part of a subdomain.
fn is_label_shaped(s: &str) -> bool {
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        }
        _ => false,
    }
}

/// A label value for `value` (used for `app.kubernetes.io/instance` and selector labels).
pub fn label_value(value: &str) -> String {
    child_name(value, NameRule::LabelValue)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_are_kept() {
        assert_eq!(child_name("llama", NameRule::Dns1035Label), "llama");
        assert_eq!(child_name("7b-chat", NameRule::Dns1123Label), "7b-chat");
        assert_eq!(label_value("My.Model_1"), "My.Model_1");
    }

    // Case O-01: names sharing the first 63 characters stay distinct, valid and stable.
    #[test]
    fn long_names_are_distinct_valid_and_stable() {
        let a = "a".repeat(70);
        let b = format!("{}{}", "a".repeat(63), "b".repeat(17));
        for rule in [
            NameRule::Dns1123Label,
            NameRule::Dns1035Label,
            NameRule::LabelValue,
        ] {
            let (na, nb) = (child_name(&a, rule), child_name(&b, rule));
            assert_ne!(na, nb);
            assert!(rule.is_valid(&na) && rule.is_valid(&nb), "{na} / {nb}");
            assert_eq!(na, child_name(&a, rule));
            assert_eq!(na.len(), MAX_LEN);
        }
        assert_eq!(
            child_name(&a, NameRule::Dns1123Label),
            format!("{}-{}", "a".repeat(52), stable_hash(&a))
        );
    }

    #[test]
    fn digit_leading_service_names_start_with_a_letter() {
        let n = child_name("7b-chat", NameRule::Dns1035Label);
        assert!(NameRule::Dns1035Label.is_valid(&n), "{n}");
        assert!(n.starts_with("x7b-chat-"));
        assert_ne!(n, child_name("7b-chat2", NameRule::Dns1035Label));
    }

    #[test]
    fn tighter_limits_are_honoured() {
        let n = child_name_within(&"a".repeat(63), NameRule::Dns1123Label, 60);
        assert_eq!(n.len(), 60);
        assert!(NameRule::Dns1123Label.is_valid(&n));
        assert_eq!(
            child_name_within("short", NameRule::Dns1123Label, 60),
            "short"
        );
    }

    #[test]
    fn labels_and_subdomains() {
        assert!(is_dns_label("ml-team"));
        assert!(!is_dns_label("ML"));
        assert!(!is_dns_label("-a"));
        assert!(!is_dns_label(""));
        assert!(!is_dns_label(&"a".repeat(64)));
        assert!(is_dns_subdomain("corpus.v3"));
        assert!(!is_dns_subdomain("a..b"));
        assert!(is_dns_subdomain(&format!(
            "{}.{}",
            "a".repeat(63),
            "b".repeat(63)
        )));
    }

    #[test]
    fn config_map_keys_follow_is_config_map_key() {
        let pattern = regex::Regex::new(CONFIG_MAP_KEY_PATTERN).unwrap();
        // Each case checked against IsConfigMapKey of apimachinery v0.36.1.
        for key in ["a", ".env", "tls.crt", "-x", "_x", "a..b", "A_B-1"] {
            assert!(pattern.is_match(key), "{key:?} is a valid key");
        }
        for key in ["", ".", "..", "..a", "a b", "a/b", "é"] {
            assert!(!pattern.is_match(key), "{key:?} is not a valid key");
        }
    }

    // Each case checked against IsValidLabelValue and validateContainerOnlyForPod's TrimSpace check (Kubernetes
    // v1.35.4). The API server runs the pattern with RE2, whose `\s` is ASCII-only: the pattern names Unicode's
    // spaces itself, so a non-breaking space at an end is refused on the CRD (the invalid corpus runs it there).
    #[test]
    fn label_value_and_image_patterns_follow_kubernetes() {
        let label = regex::Regex::new(LABEL_VALUE_PATTERN).unwrap();
        for good in ["", "a", "NVIDIA-A100-SXM4-80GB", "a.b_c-d", "0"] {
            assert!(label.is_match(good), "{good:?}");
        }
        for bad in ["NVIDIA A100", "a/b", "-a", "a-", "_a", "a."] {
            assert!(!label.is_match(bad), "{bad:?}");
        }
        let image = regex::Regex::new(IMAGE_PATTERN).unwrap();
        for good in ["a", "python:3.12-slim", "ghcr.io/org/img@sha256:abc"] {
            assert!(image.is_match(good), "{good:?}");
        }
        for bad in [
            " img",
            "img ",
            "img\t",
            "\nimg",
            " ",
            "img\u{a0}",
            "\u{b}img",
            "img\u{85}",
            "\u{3000}img",
            "img\u{2028}",
        ] {
            assert!(!image.is_match(bad), "{bad:?}");
        }
        // Every character Go's unicode.IsSpace calls a space (Unicode's White_Space) is refused at either end.
        let white_space = regex::Regex::new(r"^\p{White_Space}$").unwrap();
        for c in (0..=0x3000u32).filter_map(char::from_u32) {
            let space = white_space.is_match(&c.to_string());
            assert_eq!(image.is_match(&format!("img{c}")), !space, "{c:?}");
        }
    }

    // A new-user trial: a 70-character name without dots is valid for the API server (IsDNS1123Subdomain limits
    // only the total), so the provider must take it too; each case checked against apimachinery v0.35.4.
    #[test]
    fn subdomains_limit_the_total_not_each_part() {
        // The CRD's pattern and the function agree (the length is the schema's maxLength, not the pattern's).
        let pattern = regex::Regex::new(DNS_SUBDOMAIN_PATTERN).unwrap();
        for name in [
            "a",
            "a.b-c",
            "llama-3.1",
            "-a",
            "a.",
            "A",
            "a..b",
            "a_b",
            "",
        ] {
            assert_eq!(pattern.is_match(name), is_dns_subdomain(name), "{name:?}");
        }
        assert!(is_dns_subdomain(&"a".repeat(70)));
        assert!(is_dns_subdomain(&"a".repeat(253)));
        assert!(is_dns_subdomain(&format!(
            "{}.{}",
            "a".repeat(100),
            "b".repeat(100)
        )));
        assert!(!is_dns_subdomain(&"a".repeat(254)));
        for bad in [
            "", ".", "a.", ".a", "a..b", "A", "a_b", "-a", "a-", "a.-b", "a-.b", "a b", "\u{e9}",
        ] {
            assert!(!is_dns_subdomain(bad), "{bad:?}");
        }
        for good in ["a", "0", "a-b.c-d", "7b.chat", "a--b"] {
            assert!(is_dns_subdomain(good), "{good:?}");
        }
        // The label pattern and the function agree too.
        let label = regex::Regex::new(DNS_LABEL_PATTERN).unwrap();
        for name in ["a", "a-b", "0a", "a.b", "-a", "a-", "A", "a_b", ""] {
            assert_eq!(label.is_match(name), is_dns_label(name), "{name:?}");
        }
        // A label still stops at 63.
        assert!(!is_dns_label(&"a".repeat(70)));
    }

    #[test]
    fn dotted_names_become_labels() {
        let n = child_name("model.v1", NameRule::Dns1123Label);
        assert!(NameRule::Dns1123Label.is_valid(&n));
        assert!(n.starts_with("model-v1-"));
        assert_eq!(child_name("model.v1", NameRule::LabelValue), "model.v1");
    }
}
