//! The client the mock sends with, to proxy downstreams and webhook targets: `http://` through
//! one pooled hyper client (keep-alive connections), `https://` over rustls, one connection per
//! request (ALPN `http/1.1`, SNI from the host; none for an IP address).
//!
//! An `https://` downstream is trusted when its certificate chains to the platform's roots
//! (rustls-native-certs, which also reads `SSL_CERT_FILE`) or to a certificate of the PEM file
//! given as `--proxy-cacert` (added to those roots: a private CA, or a self-signed server
//! certificate that is not itself a CA). WireMock 3.9.1 trusts any certificate there; the mock
//! checks, as curl does.
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use tokio_rustls::rustls::{self, RootCertStore};
use tokio_rustls::TlsConnector;

/// Sends requests to `http://` and `https://` servers. Cheap to clone (shared pools).
#[derive(Clone)]
pub(crate) struct ProxyClient {
    http: Client<HttpConnector, Full<Bytes>>,
    tls: Arc<OnceLock<Result<TlsConnector, String>>>,
    cacert: Option<Arc<Path>>,
}

impl std::fmt::Debug for ProxyClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProxyClient")
    }
}

/// A new client; `cacert`: the `--proxy-cacert` file.
pub(crate) fn client(cacert: Option<&Path>) -> ProxyClient {
    ProxyClient {
        http: Client::builder(TokioExecutor::new()).build_http(),
        tls: Arc::new(OnceLock::new()),
        cacert: cacert.map(Arc::from),
    }
}

/// Checks a `--proxy-cacert` file: `Err` is one line naming the file and why.
pub fn check_cacert(path: &Path) -> Result<(), String> {
    extra_roots(Some(path)).map(|_| ())
}

fn extra_roots(path: Option<&Path>) -> Result<Vec<CertificateDer<'static>>, String> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    let shown = path.display();
    let bad = |why: String| {
        format!("--proxy-cacert {shown}: {why}: give a PEM file of the certificates to trust")
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(format!("cannot read it ({e})")))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad(format!("not a PEM certificate file ({e})")))?;
    if certs.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    Ok(certs)
}

fn tls_connector(cacert: Option<&Path>) -> Result<TlsConnector, String> {
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    for cert in extra_roots(cacert)? {
        roots
            .add(cert)
            .map_err(|e| format!("--proxy-cacert: a certificate cannot be trusted: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsConnector::from(Arc::new(config)))
}

impl ProxyClient {
    /// Sends a request whose URI is absolute; `Err` says why it failed, in one line.
    pub async fn send(
        &self,
        request: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<Incoming>, String> {
        if request.uri().scheme_str() != Some("https") {
            // hyper-util says "client error (Connect)"; its sources say why.
            return self.http.request(request).await.map_err(|e| {
                let mut reasons = Vec::new();
                let mut source = std::error::Error::source(&e);
                while let Some(reason) = source {
                    reasons.push(reason.to_string());
                    source = reason.source();
                }
                if reasons.is_empty() {
                    e.to_string()
                } else {
                    reasons.join(": ")
                }
            });
        }
        let connector = self
            .tls
            .get_or_init(|| tls_connector(self.cacert.as_deref()))
            .as_ref()
            .map_err(Clone::clone)?
            .clone();
        let uri = request.uri().clone();
        let host = uri.host().unwrap_or_default();
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = uri.port_u16().unwrap_or(443);
        let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
        let name = ServerName::try_from(host.clone())
            .map_err(|_| format!("'{host}' is not a server name"))?;
        let stream = connector
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS handshake with {host}:{port} failed: {e}"))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        let (mut parts, body) = request.into_parts();
        parts.uri = uri
            .path_and_query()
            .map_or("/", |pq| pq.as_str())
            .parse()
            .map_err(|e: http::uri::InvalidUri| e.to_string())?;
        sender
            .send_request(http::Request::from_parts(parts, body))
            .await
            .map_err(|e| e.to_string())
    }
}
