//! go-plugin handshake rules: the magic cookie, protocol version negotiation and the stdout line
//! that tells Terraform where to connect (go-plugin `server.go`; Terraform's `plugin.Handshake`).

use std::net::SocketAddr;

use base64::Engine as _;

/// Environment variable Terraform sets to prove the binary is launched as a plugin.
pub const MAGIC_COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";

/// The value Terraform's `plugin.Handshake` uses for [`MAGIC_COOKIE_KEY`].
pub const MAGIC_COOKIE_VALUE: &str =
    "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";

/// go-plugin's own protocol version (first field of the handshake line).
pub const CORE_PROTOCOL_VERSION: u32 = 1;

/// The only Terraform plugin protocol major version this binary serves.
pub const APP_PROTOCOL_VERSION: u32 = 5;

/// Why the handshake cannot start.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HandshakeError {
    /// Run by hand, or by something that is not Terraform.
    #[error(
        "This binary is a plugin. These are not meant to be executed directly.\n\
         Please execute the program that consumes these plugins (terraform), which will\n\
         load any plugins automatically. Run it with --debug to serve a debuggable instance."
    )]
    MissingCookie,
    /// Terraform offered no protocol version we speak.
    #[error(
        "Terraform offered plugin protocol versions {offered:?}, but this provider speaks only \
         version {APP_PROTOCOL_VERSION}: use Terraform 0.12 or newer (1.11 is tested)"
    )]
    NoCommonVersion {
        /// The `PLUGIN_PROTOCOL_VERSIONS` value.
        offered: String,
    },
}

/// Checks the magic cookie (`TF_PLUGIN_MAGIC_COOKIE`).
///
/// # Errors
/// [`HandshakeError::MissingCookie`] when it is absent or wrong.
pub fn check_cookie(value: Option<&str>) -> Result<(), HandshakeError> {
    match value {
        Some(v) if v == MAGIC_COOKIE_VALUE => Ok(()),
        _ => Err(HandshakeError::MissingCookie),
    }
}

/// Picks protocol 5 from `PLUGIN_PROTOCOL_VERSIONS` (a comma list in any order, e.g. `6,5`).
/// An absent or empty variable means an old client that only knows its default: 5.
///
/// # Errors
/// [`HandshakeError::NoCommonVersion`] when the list does not contain 5.
pub fn negotiate_version(offered: Option<&str>) -> Result<u32, HandshakeError> {
    let Some(list) = offered.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(APP_PROTOCOL_VERSION);
    };
    let speaks_five = list
        .split(',')
        .any(|v| v.trim().parse::<u32>() == Ok(APP_PROTOCOL_VERSION));
    if speaks_five {
        Ok(APP_PROTOCOL_VERSION)
    } else {
        Err(HandshakeError::NoCommonVersion {
            offered: list.to_string(),
        })
    }
}

/// The handshake line: `CORE|APP|tcp|ADDR|grpc|CERT` where CERT is our server certificate DER in
/// standard base64 without padding (empty when serving plaintext). No trailing newline.
pub fn handshake_line(version: u32, addr: SocketAddr, server_cert_der: Option<&[u8]>) -> String {
    let cert = server_cert_der
        .map(|der| base64::engine::general_purpose::STANDARD_NO_PAD.encode(der))
        .unwrap_or_default();
    format!("{CORE_PROTOCOL_VERSION}|{version}|tcp|{addr}|grpc|{cert}")
}

/// The `TF_REATTACH_PROVIDERS` JSON for debug mode: Terraform connects to an already running
/// plugin at `addr` (plaintext) instead of starting one. One entry per address in
/// `provider_addresses`, all naming this process: Terraform reads `modelfleet/modelfleet` as
/// `registry.terraform.io/...`, OpenTofu as `registry.opentofu.org/...`, and each ignores the
/// entry its configuration does not use.
pub fn reattach_json(provider_addresses: &[&str], addr: SocketAddr, pid: u32) -> String {
    let entry = serde_json::json!({
        "Protocol": "grpc",
        "ProtocolVersion": APP_PROTOCOL_VERSION,
        "Pid": pid,
        "Test": true,
        "Addr": { "Network": "tcp", "String": addr.to_string() },
    });
    let map: serde_json::Map<String, serde_json::Value> = provider_addresses
        .iter()
        .map(|address| ((*address).to_owned(), entry.clone()))
        .collect();
    serde_json::Value::Object(map).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_must_match_exactly() {
        assert_eq!(check_cookie(Some(MAGIC_COOKIE_VALUE)), Ok(()));
        assert_eq!(check_cookie(None), Err(HandshakeError::MissingCookie));
        assert_eq!(
            check_cookie(Some("nope")),
            Err(HandshakeError::MissingCookie)
        );
    }

    #[test]
    fn picks_five_in_any_order() {
        assert_eq!(negotiate_version(Some("6,5")), Ok(5));
        assert_eq!(negotiate_version(Some("5,6")), Ok(5));
        assert_eq!(negotiate_version(Some(" 5 ")), Ok(5));
        assert_eq!(negotiate_version(None), Ok(5));
        assert!(matches!(
            negotiate_version(Some("6")),
            Err(HandshakeError::NoCommonVersion { .. })
        ));
        assert!(negotiate_version(Some("55,4")).is_err());
    }

    #[test]
    fn line_format() {
        let addr: SocketAddr = "127.0.0.1:41234".parse().unwrap();
        // 0xff 0xfe 0xfd -> "//79" in standard base64; 2 bytes would need padding, which is cut.
        assert_eq!(
            handshake_line(5, addr, Some(&[0xff, 0xfe, 0xfd])),
            "1|5|tcp|127.0.0.1:41234|grpc|//79"
        );
        assert_eq!(
            handshake_line(5, addr, Some(&[1, 2])),
            "1|5|tcp|127.0.0.1:41234|grpc|AQI"
        );
        assert_eq!(
            handshake_line(5, addr, None),
            "1|5|tcp|127.0.0.1:41234|grpc|"
        );
        let fields: Vec<_> = handshake_line(5, addr, Some(&[7; 100]))
            .split('|')
            .map(String::from)
            .collect();
        assert_eq!(fields.len(), 6);
        assert!(!fields[5].contains('='));
    }

    #[test]
    fn reattach_names_the_provider_for_both_clis() {
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let json: serde_json::Value = serde_json::from_str(&reattach_json(
            &[
                "registry.terraform.io/modelfleet/modelfleet",
                "registry.opentofu.org/modelfleet/modelfleet",
            ],
            addr,
            9,
        ))
        .unwrap();
        assert_eq!(json.as_object().unwrap().len(), 2);
        for host in ["registry.terraform.io", "registry.opentofu.org"] {
            let entry = &json[format!("{host}/modelfleet/modelfleet")];
            assert_eq!(entry["ProtocolVersion"], 5);
            assert_eq!(entry["Addr"]["String"], "127.0.0.1:1");
            assert_eq!(entry["Pid"], 9);
        }
    }
}
