//! How a client's connection is opened: plain TCP, or TCP then a TLS handshake (rustls through
//! tokio-rustls). The HTTP/1.1 exchange in `client` is the same over both: it is generic over
//! [`Connect::Stream`], so a plain run pays nothing for TLS.
//!
//! The TLS settings are built once per run ([`client_config`]): the platform's roots
//! (rustls-native-certs) or the certificates of `--cacert`, ALPN `http/1.1` (or `h2` then
//! `http/1.1` with `--http2`, the server's choice checked by `h2client`), SNI from the URL's
//! host (none for an IP address, as TLS wants), session resumption as rustls does by default
//! (as most HTTP clients do: a new connection after the first resumes the session). With
//! `--insecure` the server's certificate is not checked, but the handshake is otherwise real.
//!
//! A `--cacert` file may hold the server's own certificate, self-signed (as curl and wrk accept
//! it): `openssl req -x509` marks such a certificate `CA:TRUE`, which webpki refuses as a
//! server's (`CaUsedAsEndEntity`). [`CaFileVerifier`] accepts a server certificate that is
//! byte for byte one of the file's, still checking its name and validity dates; any other
//! certificate goes through webpki's chain check against the file's certificates as roots.
use crate::LoadError;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::rustls::{self, client::danger, ClientConfig, RootCertStore};
use tokio_rustls::TlsConnector;

/// Turns a connected TCP stream into the stream requests are exchanged on.
pub(crate) trait Connect: Send + Sync + 'static {
    /// The stream the exchange reads and writes.
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// Whether opening a connection includes a TLS handshake.
    const TLS: bool;
    /// Completes the connection (the TLS handshake, or nothing).
    fn open(&self, tcp: TcpStream) -> impl Future<Output = std::io::Result<Self::Stream>> + Send;
}

/// Plain HTTP: the TCP stream as it is.
pub(crate) struct Plain;

impl Connect for Plain {
    type Stream = TcpStream;
    const TLS: bool = false;

    async fn open(&self, tcp: TcpStream) -> std::io::Result<TcpStream> {
        Ok(tcp)
    }
}

/// HTTPS: a TLS handshake with the server named in the URL.
pub(crate) struct Tls {
    connector: TlsConnector,
    name: ServerName<'static>,
}

impl Tls {
    /// The connector of a run against `host`.
    pub(crate) fn new(config: Arc<ClientConfig>, host: &str) -> Result<Tls, LoadError> {
        let name = ServerName::try_from(host.to_string()).map_err(|_| {
            LoadError::Config(format!(
                "'{host}' cannot be a TLS server name: fix the URL's host"
            ))
        })?;
        Ok(Tls {
            connector: TlsConnector::from(config),
            name,
        })
    }
}

impl Connect for Tls {
    type Stream = tokio_rustls::client::TlsStream<TcpStream>;
    const TLS: bool = true;

    fn open(&self, tcp: TcpStream) -> impl Future<Output = std::io::Result<Self::Stream>> + Send {
        self.connector.connect(self.name.clone(), tcp)
    }
}

/// How the server's certificate is checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Trust {
    /// Against the platform's root certificates.
    #[default]
    Platform,
    /// Against the certificates in this PEM file (`--cacert`), instead of the platform's.
    CaFile(std::path::PathBuf),
    /// Not at all (`--insecure`): any certificate is accepted.
    Insecure,
}

/// The TLS settings of a run; a `--cacert` file that cannot be used is an error naming it.
pub(crate) fn client_config(trust: &Trust, alpn: &[&[u8]]) -> Result<Arc<ClientConfig>, LoadError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| LoadError::Engine(format!("TLS setup: {e}")))?;
    let mut config = match trust {
        Trust::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
            .with_no_client_auth(),
        Trust::Platform => builder
            .with_root_certificates(platform_roots())
            .with_no_client_auth(),
        Trust::CaFile(path) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(CaFileVerifier::new(path, provider)?))
            .with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// A TLS connection to `addr` offering ALPN `h2`, the server's certificate not checked (as
/// `--insecure`), once the server agreed to `h2`: for asking a downstream peer its HTTP/2
/// SETTINGS (chokepoint_experiment's `h2_peers`), on which nothing but the handshake, a PING
/// and GOAWAY is sent. An error in a few words otherwise.
pub async fn connect_h2_unverified(
    addr: std::net::SocketAddr,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, String> {
    let config = client_config(&Trust::Insecure, &[b"h2"]).map_err(|e| e.to_string())?;
    let tcp = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    let name = ServerName::IpAddress(addr.ip().into());
    let tls = TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(|e| format!("no TLS handshake: {e}"))?;
    match tls.get_ref().1.alpn_protocol() {
        Some(b"h2") => Ok(tls),
        _ => Err("TLS without ALPN h2".to_string()),
    }
}

/// The platform's trusted roots (those that cannot be read are left out: a server they would
/// have vouched for is then refused with the usual message).
fn platform_roots() -> RootCertStore {
    let mut roots = RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(found.certs);
    roots
}

/// `--cacert`: webpki's check against the file's certificates as roots, or a server
/// certificate that is exactly one of them (its name and dates checked here).
#[derive(Debug)]
struct CaFileVerifier {
    chain: Arc<rustls::client::WebPkiServerVerifier>,
    /// The file's certificates, DER.
    pinned: Vec<CertificateDer<'static>>,
}

impl CaFileVerifier {
    fn new(
        path: &Path,
        provider: Arc<rustls::crypto::CryptoProvider>,
    ) -> Result<CaFileVerifier, LoadError> {
        let (roots, pinned) = file_roots(path)?;
        let chain =
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| LoadError::Engine(format!("TLS setup: {e}")))?;
        Ok(CaFileVerifier { chain, pinned })
    }
}

/// A server certificate that is one of `--cacert`'s: valid for `server_name`, within its dates.
fn check_pinned(
    end_entity: &CertificateDer<'_>,
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Result<(), rustls::Error> {
    let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
    rustls::client::verify_server_name(&parsed, server_name)?;
    let (_, cert) = x509_parser::parse_x509_certificate(end_entity.as_ref())
        .map_err(|_| rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding))?;
    let validity = cert.validity();
    let now = now.as_secs() as i64;
    if now < validity.not_before.timestamp() {
        return Err(rustls::Error::InvalidCertificate(
            rustls::CertificateError::NotValidYet,
        ));
    }
    if now > validity.not_after.timestamp() {
        return Err(rustls::Error::InvalidCertificate(
            rustls::CertificateError::Expired,
        ));
    }
    Ok(())
}

impl danger::ServerCertVerifier for CaFileVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<danger::ServerCertVerified, rustls::Error> {
        if self.pinned.iter().any(|pinned| pinned == end_entity) {
            check_pinned(end_entity, server_name, now)?;
            return Ok(danger::ServerCertVerified::assertion());
        }
        self.chain
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<danger::HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<danger::HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.chain.supported_verify_schemes()
    }
}

/// The certificates of a `--cacert` file: as roots, and as they are (DER).
fn file_roots(path: &Path) -> Result<(RootCertStore, Vec<CertificateDer<'static>>), LoadError> {
    let bad = |why: String| {
        LoadError::Config(format!(
            "--cacert {}: {why}: give a PEM file with the certificate of the CA that signed the \
             server's certificate (or the server's own)",
            path.display()
        ))
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(format!("cannot read it ({e})")))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad(format!("not a PEM certificate file ({e})")))?;
    if certs.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    let mut roots = RootCertStore::empty();
    for cert in &certs {
        roots
            .add(cert.clone())
            .map_err(|e| bad(format!("a certificate in it is not usable ({e})")))?;
    }
    Ok((roots, certs))
}

/// The one-line explanation of a failed handshake with `server`, when the server's certificate
/// is what failed; `None` for other failures.
pub(crate) fn certificate_problem(
    error: &std::io::Error,
    server: &str,
    trust: &Trust,
) -> Option<String> {
    let rustls_error = error.get_ref()?.downcast_ref::<rustls::Error>()?;
    let why = match rustls_error {
        rustls::Error::InvalidCertificate(why) => why,
        _ => return None,
    };
    let reason = match why {
        rustls::CertificateError::UnknownIssuer => {
            "is signed by a CA not trusted here (self-signed, or a private CA)".to_string()
        }
        rustls::CertificateError::Expired | rustls::CertificateError::ExpiredContext { .. } => {
            "has expired".to_string()
        }
        rustls::CertificateError::NotValidForName
        | rustls::CertificateError::NotValidForNameContext { .. } => {
            "is not valid for the URL's host".to_string()
        }
        // webpki's error, boxed in rustls's `Other`: a self-signed certificate marked CA:TRUE.
        other if format!("{other:?}").contains("CaUsedAsEndEntity") => {
            "is self-signed (a CA certificate serving as the server's own)".to_string()
        }
        other => format!("cannot be verified ({other:?})"),
    };
    let against = match trust {
        Trust::CaFile(path) => format!("the CA certificates of --cacert {}", path.display()),
        _ => "this machine's trusted roots".to_string(),
    };
    Some(format!(
        "the TLS certificate of {server} {reason}, checked against {against}: give the CA that \
         signed it with --cacert FILE, or skip the check with --insecure (-k)"
    ))
}

/// `--insecure`: every certificate is accepted; signatures are still checked with the
/// provider's algorithms, so the handshake is the same work as a verified one, minus the chain.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl danger::ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<danger::ServerCertVerified, rustls::Error> {
        Ok(danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
