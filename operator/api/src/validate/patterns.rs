//! What each `pattern` of the CRDs asks for, in words: the API server's message gives only the regex (`should match
//! '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'`), which [`crate::validate`] follows with this meaning in `render -f` and the
//! provider's diagnostics. A test holds every pattern of the three CRDs to having one. [`is_match`] checks a string
//! against a pattern, compiling each pattern once per process.

use std::collections::HashMap;
use std::sync::{LazyLock, PoisonError, RwLock};

use regex::Regex;

use crate::names;

/// Whether `s` matches the regex `pattern` (an OpenAPI `pattern`, unanchored as the API server reads it); `None` when
/// `pattern` is not a valid regex for the `regex` crate (the API server's RE2 and it agree on the CRDs' patterns).
///
/// Each pattern is compiled once per process and kept: compiling is most of the cost of a check (the vLLM example's
/// spec took 320 µs to validate with a compile per string, 28 µs with this cache: `make bench-pure`,
/// `validate/schema_vllm`); the provider validates every resource block of a configuration at each `terraform plan`,
/// and `render -f` every manifest it reads.
pub fn is_match(pattern: &str, s: &str) -> Option<bool> {
    static COMPILED: LazyLock<RwLock<HashMap<String, Option<Regex>>>> =
        LazyLock::new(Default::default);
    // Matched under the read lock: a clone of a `Regex` starts an empty cache pool, a shared one reuses its caches.
    if let Some(regex) = COMPILED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(pattern)
    {
        return regex.as_ref().map(|re| re.is_match(s));
    }
    let regex = Regex::new(pattern).ok();
    let answer = regex.as_ref().map(|re| re.is_match(s));
    COMPILED
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(pattern.to_owned(), regex);
    answer
}

/// The meaning of the CRD `pattern` `pattern` (exact text), `None` for one this table does not know.
pub fn meaning(pattern: &str) -> Option<&'static str> {
    Some(match pattern {
        names::DNS_SUBDOMAIN_PATTERN => {
            "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (a Kubernetes object \
             name)"
        }
        names::DNS_LABEL_PATTERN => {
            "lowercase letters, digits and '-', starting and ending with a letter or digit (a DNS label)"
        }
        names::LABEL_VALUE_PATTERN => {
            "letters, digits, '-', '_' and '.', starting and ending with a letter or digit (a label value)"
        }
        names::CONFIG_MAP_KEY_PATTERN => {
            "letters, digits, '-', '_' and '.', and not '.' or '..' (a Secret or ConfigMap key)"
        }
        names::IMAGE_PATTERN => "no whitespace at either end",
        names::ENV_NAME_PATTERN => {
            "letters, digits, '-', '_' and '.', not starting with a digit (an environment variable name)"
        }
        names::ABSOLUTE_PATH_PATTERN => "an absolute path, starting with '/'",
        names::EXTENDED_RESOURCE_PATTERN => {
            "a domain, '/', then up to 63 letters, digits, '-', '_' or '.' (an extended resource such as \
             nvidia.com/gpu)"
        }
        names::OPTIONAL_QUALIFIED_NAME_PATTERN => {
            "empty, or an optional DNS prefix and '/', then up to 63 letters, digits, '-', '_' or '.', starting and \
             ending with a letter or digit (a qualified name such as example.com/key)"
        }
        names::VERSION_PATTERN => {
            "letters, digits, '-', '_' and '.', starting and ending with a letter or digit, e.g. 3 or 2026-12.1"
        }
        names::PATH_PREFIX_PATTERN => "a URL path: '/', then path characters and %XX escapes",
        names::QUANTITY_PATTERN => {
            "a Kubernetes quantity, not negative: a number, then an optional suffix (Ki..Ei, m, k..E, e<n>), e.g. 500m, \
             2 or 16Gi"
        }
        names::DATE_TIME_PATTERN => {
            "an RFC 3339 date-time: YYYY-MM-DD, 'T', hh:mm:ss, an optional '.' and fraction, then 'Z' or +hh:mm with \
             hours up to 23"
        }
        names::HOSTNAME_PATTERN => "a DNS name in lowercase, optionally starting with '*.'",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use crate::validate::schema_of;

    fn patterns(schema: &Value, out: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::String(p)) = map.get("pattern") {
                    out.push(p.clone());
                }
                map.values().for_each(|v| patterns(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| patterns(v, out)),
            _ => {}
        }
    }

    #[test]
    fn is_match_compiles_once_and_answers_like_the_regex() {
        use crate::names::DNS_LABEL_PATTERN;
        for _ in 0..2 {
            assert_eq!(super::is_match(DNS_LABEL_PATTERN, "web-1"), Some(true));
            assert_eq!(super::is_match(DNS_LABEL_PATTERN, "Web"), Some(false));
            assert_eq!(super::is_match(DNS_LABEL_PATTERN, "-web"), Some(false));
        }
        assert_eq!(super::is_match("a", "cat"), Some(true), "unanchored");
        assert_eq!(super::is_match("(", "x"), None, "not a regex");
        assert_eq!(super::is_match("(", "x"), None, "the refusal is kept too");
    }

    #[test]
    fn every_pattern_of_the_crds_has_a_meaning() {
        let mut all = Vec::new();
        for kind in ["InferenceService", "TrainingRun", "Dataset"] {
            patterns(schema_of(kind).unwrap(), &mut all);
        }
        assert!(all.len() > 10, "{all:?}");
        let unknown: Vec<&String> = all.iter().filter(|p| super::meaning(p).is_none()).collect();
        assert!(
            unknown.is_empty(),
            "patterns without a meaning: {unknown:?}"
        );
    }
}
