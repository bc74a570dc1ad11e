//! Kubernetes name rules used by validation (RFC 1123, as the API server applies them).

/// An RFC 1123 label (namespaces): 1-63 of `[a-z0-9-]`, alphanumeric at both ends.
pub fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// An RFC 1123 subdomain (custom resource names): up to 253 characters, dot-separated labels.
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
