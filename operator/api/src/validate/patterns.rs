//! What each `pattern` of the CRDs asks for, in words: the API server's message gives only the regex (`should match
//! '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'`), which [`crate::validate`] follows with this meaning in `render -f` and the
//! provider's diagnostics. A test holds every pattern of the three CRDs to having one.

use crate::names;

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
