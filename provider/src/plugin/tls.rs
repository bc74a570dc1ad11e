//! go-plugin AutoMTLS on the plugin side.
//!
//! Terraform generates a fresh self-signed ECDSA P-521 client certificate per plugin launch and
//! passes it (PEM) in `PLUGIN_CLIENT_CERT`; it expects our own self-signed server certificate (DER,
//! base64) in the handshake line and trusts exactly that certificate, for server name `localhost`.
//!
//! Choice of client verification: the expected client certificate is known exactly, so chain
//! building is pointless (and webpki would reject Terraform's CA-flagged self-signed certificate as
//! an end entity). [`PinnedClientCert`] instead accepts only a certificate byte-for-byte equal to
//! `PLUGIN_CLIENT_CERT`, and still verifies the handshake signature with that certificate's key, so
//! the peer proves it holds the private key. `ring` (the provider used by the rest of the tree)
//! cannot verify P-521, so P-521/SHA-512 signatures are checked with the pure-Rust `p521` crate
//! ([`EcdsaP521Sha512`]); every other scheme goes to ring. This keeps one TLS crypto provider and
//! avoids building aws-lc for one curve.

use std::sync::{Arc, LazyLock};

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{
    AlgorithmIdentifier, CertificateDer, InvalidSignature, PrivateKeyDer, PrivatePkcs8KeyDer,
    SignatureVerificationAlgorithm, UnixTime, alg_id,
};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// `PLUGIN_CLIENT_CERT` is not a PEM certificate.
    #[error("PLUGIN_CLIENT_CERT is not a PEM certificate: {0}")]
    ClientCert(String),
    /// Generating our certificate failed.
    #[error("generating the server certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
}

/// Our server identity: a self-signed certificate (SAN `localhost`, CA flag like go-plugin's own,
/// ECDSA P-256) and its PKCS#8 key.
pub struct ServerIdentity {
    /// Certificate DER (also what goes into the handshake line).
    pub cert_der: CertificateDer<'static>,
    key_der: Vec<u8>,
}

impl ServerIdentity {
    /// Generates a fresh identity (a few milliseconds).
    ///
    /// # Errors
    /// [`TlsError::Generate`] if key or certificate generation fails.
    pub fn generate() -> Result<ServerIdentity, TlsError> {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
            KeyUsagePurpose,
        };
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
        params
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        params
            .distinguished_name
            .push(DnType::OrganizationName, "terraform-provider-modelfleet");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
            KeyUsagePurpose::KeyCertSign,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let cert = params.self_signed(&key)?;
        Ok(ServerIdentity {
            cert_der: cert.der().clone(),
            key_der: key.serialize_der(),
        })
    }
}

/// Builds the rustls server configuration: our identity, client certificate pinned to
/// `client_cert_pem`, ALPN `h2` (grpc-go refuses TLS connections that do not negotiate it).
///
/// # Errors
/// [`TlsError::ClientCert`] for an unparsable PEM, [`TlsError::Rustls`] otherwise.
pub fn server_config(
    identity: &ServerIdentity,
    client_cert_pem: &str,
) -> Result<rustls::ServerConfig, TlsError> {
    let expected = CertificateDer::from_pem_slice(client_cert_pem.as_bytes())
        .map_err(|e| TlsError::ClientCert(e.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(Arc::new(PinnedClientCert { expected }))
        .with_single_cert(
            vec![identity.cert_der.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(identity.key_der.clone())),
        )?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}

/// Accepts exactly one client certificate (see the module docs).
#[derive(Debug)]
pub struct PinnedClientCert {
    expected: CertificateDer<'static>,
}

impl PinnedClientCert {
    /// A verifier pinned to `expected`.
    pub fn new(expected: CertificateDer<'static>) -> PinnedClientCert {
        PinnedClientCert { expected }
    }
}

impl ClientCertVerifier for PinnedClientCert {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.expected.as_ref() {
            Ok(ClientCertVerified::assertion())
        } else {
            Err(rustls::Error::General(
                "client certificate is not the one announced in PLUGIN_CLIENT_CERT".into(),
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &ALGORITHMS)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &ALGORITHMS)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        ALGORITHMS.supported_schemes()
    }
}

/// ECDSA over P-521 with SHA-512 (TLS scheme `ecdsa_secp521r1_sha512`), verified by `p521`.
#[derive(Debug)]
pub struct EcdsaP521Sha512;

impl SignatureVerificationAlgorithm for EcdsaP521Sha512 {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        use p521::ecdsa::signature::Verifier as _;
        let key =
            p521::ecdsa::VerifyingKey::from_sec1_bytes(public_key).map_err(|_| InvalidSignature)?;
        let signature =
            p521::ecdsa::Signature::from_der(signature).map_err(|_| InvalidSignature)?;
        key.verify(message, &signature)
            .map_err(|_| InvalidSignature)
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        alg_id::ECDSA_P521
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        alg_id::ECDSA_SHA512
    }
}

static P521: EcdsaP521Sha512 = EcdsaP521Sha512;

/// The TLS scheme table entry for [`P521`].
static P521_ONLY: [&dyn SignatureVerificationAlgorithm; 1] = [&P521];

/// ring's algorithms plus [`EcdsaP521Sha512`] (preferred first, it is what Terraform uses).
/// Built once; the slices are leaked because rustls wants `'static` tables.
static ALGORITHMS: LazyLock<WebPkiSupportedAlgorithms> = LazyLock::new(|| {
    let ring = rustls::crypto::ring::default_provider().signature_verification_algorithms;
    let mut all: Vec<&'static dyn SignatureVerificationAlgorithm> = vec![&P521];
    all.extend_from_slice(ring.all);
    let mut mapping = vec![(SignatureScheme::ECDSA_NISTP521_SHA512, &P521_ONLY[..])];
    mapping.extend_from_slice(ring.mapping);
    WebPkiSupportedAlgorithms {
        all: Vec::leak(all),
        mapping: Vec::leak(mapping),
    }
});

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;

    fn pem(der: &[u8]) -> String {
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
            lines.join("\n")
        )
    }

    #[test]
    fn identity_has_localhost_san_and_is_accepted_by_rustls() {
        let identity = ServerIdentity::generate().unwrap();
        // The DER carries the SAN dNSName "localhost".
        assert!(
            identity
                .cert_der
                .windows(b"localhost".len())
                .any(|w| w == b"localhost")
        );
        // Any PEM certificate works as the pinned client cert for building the config.
        let client = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let config = server_config(&identity, &pem(client.cert.der())).unwrap();
        assert_eq!(config.alpn_protocols, vec![b"h2".to_vec()]);
        assert!(matches!(
            server_config(&identity, "not pem"),
            Err(TlsError::ClientCert(_))
        ));
    }

    #[test]
    fn pinned_verifier_accepts_only_the_announced_cert() {
        let a = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let b = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let verifier = PinnedClientCert::new(a.cert.der().clone());
        let now = UnixTime::now();
        assert!(verifier.verify_client_cert(a.cert.der(), &[], now).is_ok());
        assert!(verifier.verify_client_cert(b.cert.der(), &[], now).is_err());
        assert!(
            verifier
                .supported_verify_schemes()
                .contains(&SignatureScheme::ECDSA_NISTP521_SHA512)
        );
    }

    #[test]
    fn p521_signatures_verify_and_forgeries_fail() {
        use p521::ecdsa::signature::Signer as _;
        let mut scalar = [0x11u8; 66];
        scalar[0] = 0;
        let signing = p521::ecdsa::SigningKey::from_slice(&scalar).unwrap();
        let public = p521::ecdsa::VerifyingKey::from(&signing).to_encoded_point(false);
        let signature: p521::ecdsa::Signature = signing.sign(b"handshake transcript");
        let der = signature.to_der();
        assert!(
            P521.verify_signature(public.as_bytes(), b"handshake transcript", der.as_bytes())
                .is_ok()
        );
        assert!(
            P521.verify_signature(public.as_bytes(), b"another transcript", der.as_bytes())
                .is_err()
        );
        assert!(
            P521.verify_signature(b"junk", b"x", der.as_bytes())
                .is_err()
        );
    }
}
