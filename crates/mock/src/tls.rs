//! HTTPS for the mock (`--https-port`), layered on the same accept loop and connections: a
//! connection accepted on the HTTPS listener does the TLS handshake (rustls) on the worker that
//! serves it, then is served as any other: HTTP/2 when the client chose `h2` by ALPN (the mock
//! offers `h2` and `http/1.1`), HTTP/1.1 otherwise. Faults are still played at the socket, under
//! TLS (on HTTP/2, at the stream: see [`crate::h2`]).
//!
//! The certificate is the user's (`--tls-cert`/`--tls-key`, PEM) or one made at start (rcgen)
//! for `127.0.0.1`, `::1` and `localhost`, whose PEM is written to a file so that a service under
//! test can trust it. An HTTPS connection is counted and capped like any other: the admin paths
//! are told apart only on the plain port (the first request line is not readable before the
//! handshake).
use crate::MockError;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::TlsAcceptor;

/// The mock's TLS settings: the acceptor every HTTPS connection goes through.
#[derive(Clone)]
pub struct MockTls {
    pub(crate) acceptor: TlsAcceptor,
    /// Where the certificate's PEM is (the user's file, or the one written at start).
    pub cert_path: PathBuf,
}

impl std::fmt::Debug for MockTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockTls")
            .field("cert_path", &self.cert_path)
            .finish()
    }
}

impl MockTls {
    /// The certificate chain and private key in these PEM files (`--tls-cert`, `--tls-key`).
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<MockTls, MockError> {
        let bad = |flag: &str, path: &Path, why: String| {
            MockError::Tls(format!("{flag} {}: {why}", path.display()))
        };
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
            .map_err(|e| bad("--tls-cert", cert, format!("cannot read it ({e})")))?
            .collect::<Result<_, _>>()
            .map_err(|e| bad("--tls-cert", cert, format!("not a PEM certificate ({e})")))?;
        if chain.is_empty() {
            return Err(bad("--tls-cert", cert, "no certificate in it".into()));
        }
        let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| {
            bad(
                "--tls-key",
                key,
                format!("no usable private key in it ({e})"),
            )
        })?;
        MockTls::new(chain, key_der, cert.to_path_buf())
    }

    /// A certificate made now for `127.0.0.1`, `::1` and `localhost`; its PEM is written to
    /// `cert_path` (the folder must exist), for the service under test to trust.
    pub fn self_signed(cert_path: &Path) -> Result<MockTls, MockError> {
        let names = ["127.0.0.1", "::1", "localhost"].map(String::from).to_vec();
        let made = rcgen::generate_simple_self_signed(names)
            .map_err(|e| MockError::Tls(format!("cannot make a certificate: {e}")))?;
        std::fs::write(cert_path, made.cert.pem()).map_err(|e| {
            MockError::Tls(format!(
                "cannot write the certificate to {}: {e}",
                cert_path.display()
            ))
        })?;
        let key = PrivateKeyDer::try_from(made.signing_key.serialize_der())
            .map_err(|e| MockError::Tls(format!("the key made cannot be used: {e}")))?;
        MockTls::new(vec![made.cert.der().clone()], key, cert_path.to_path_buf())
    }

    fn new(
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
        cert_path: PathBuf,
    ) -> Result<MockTls, MockError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .and_then(|builder| builder.with_no_client_auth().with_single_cert(chain, key))
            .map_err(|e| {
                MockError::Tls(format!(
                    "the certificate and key cannot be used together ({e}): check --tls-cert \
                     and --tls-key"
                ))
            })?;
        // h2 first: a client offering both gets HTTP/2, as from nginx with `http2 on`.
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(MockTls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            cert_path,
        })
    }
}
