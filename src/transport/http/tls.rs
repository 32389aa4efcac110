//! umcp's own TLS connections, on rustls: the trust roots chosen ([`TlsSettings`]), extra
//! authorities, a client certificate, and failures turned into a [`NetworkError`] that names the
//! certificate refused.
//!
//! The verifier is rustls's (or the operating system's), wrapped only to keep the chain it
//! refused, on the handshaking thread, so that the error can say who issued it.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ResolvesClientCert, WebPkiServerVerifier};
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls::{
    AlertDescription, CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct,
    RootCertStore, SignatureScheme, StreamOwned,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, LazyBuffers, NextTimeout, Transport, TransportAdapter,
};

use super::certificate::CertificateSummary;
use super::trust::{PemSource, Roots, TlsSettings};
use crate::error::{Error, Result};
use crate::error::{NetworkError, NetworkProblem};

thread_local! {
    /// The chain the verifier last refused on this thread, end entity first.
    static REFUSED: RefCell<Option<Vec<CertificateDer<'static>>>> = const { RefCell::new(None) };
    /// Whether the server of the handshake on this thread asked for a client certificate.
    static ASKED: Cell<bool> = const { Cell::new(false) };
    /// The chains of the handshakes on this thread while [`recording`] runs.
    static SEEN: RefCell<Option<Vec<Seen>>> = const { RefCell::new(None) };
}

/// What one handshake showed: the host, its certificate chain (end entity first), the roots
/// trusted, and whether a client certificate was asked for.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub host: String,
    pub chain: Vec<CertificateSummary>,
    pub roots: String,
    pub client_certificate_asked: bool,
}

/// Runs `f`, keeping what every TLS handshake on this thread showed meanwhile.
pub(crate) fn recording<T>(f: impl FnOnce() -> T) -> (T, Vec<Seen>) {
    SEEN.with(|seen| *seen.borrow_mut() = Some(Vec::new()));
    let out = f();
    let seen = SEEN
        .with(|seen| seen.borrow_mut().take())
        .unwrap_or_default();
    (out, seen)
}

/// What a connection trusts and shows, built once per transport (or authorization client).
pub(crate) struct TlsSetup {
    config: Arc<ClientConfig>,
    /// The roots in words, for errors.
    roots: String,
}

impl fmt::Debug for TlsSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSetup")
            .field("roots", &self.roots)
            .finish()
    }
}

/// How long a built [`TlsSetup`] is reused for the same settings: reading `SSL_CERT_DIR` (or
/// the system store) means hundreds of files, too many for every connection, and a file
/// replaced on disk is read again once this has passed.
const SETUP_TTL: Duration = Duration::from_secs(60);

/// The most setups kept (when full, the oldest goes).
const SETUPS_KEPT: usize = 16;

/// A setup's key: the settings and the environment variables they read.
type SetupKey = (TlsSettings, Option<String>, Option<String>);

/// The setups kept, with when each was built.
type Setups = Mutex<Vec<(SetupKey, Instant, Arc<TlsSetup>)>>;

impl TlsSetup {
    /// [`TlsSetup::new`], reusing one built for the same settings and environment in the last
    /// [`SETUP_TTL`].
    pub fn shared(
        settings: &TlsSettings,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Arc<TlsSetup>> {
        static SETUPS: OnceLock<Setups> = OnceLock::new();
        let setups = SETUPS.get_or_init(Mutex::default);
        let key = (settings.clone(), env("SSL_CERT_FILE"), env("SSL_CERT_DIR"));
        {
            let kept = setups.lock().unwrap_or_else(PoisonError::into_inner);
            let found = kept
                .iter()
                .find(|(k, at, _)| *k == key && at.elapsed() < SETUP_TTL);
            if let Some((_, _, setup)) = found {
                return Ok(Arc::clone(setup));
            }
        }
        let setup = Arc::new(TlsSetup::new(settings, env)?);
        let mut kept = setups.lock().unwrap_or_else(PoisonError::into_inner);
        kept.retain(|(k, at, _)| *k != key && at.elapsed() < SETUP_TTL);
        if kept.len() >= SETUPS_KEPT {
            kept.remove(0);
        }
        kept.push((key, Instant::now(), Arc::clone(&setup)));
        Ok(setup)
    }

    /// Reads the files `settings` names (and `SSL_CERT_FILE`/`SSL_CERT_DIR` through `env` when no
    /// roots are chosen) and builds the rustls configuration.
    pub fn new(settings: &TlsSettings, env: &dyn Fn(&str) -> Option<String>) -> Result<TlsSetup> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = settings.roots(env);
        let mut extra = Vec::new();
        for source in &settings.extra {
            extra.extend(certificates(source, "extra CA")?);
        }
        let verifier = verifier(&roots, extra, &provider)?;
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(rustls::ALL_VERSIONS)
            .map_err(|e| Error::Config(format!("TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Remembering(verifier)));
        let mut config = match &settings.identity {
            Some(identity) => {
                let chain = certificates(&identity.chain, "client certificate")?;
                let key = private_key(&identity.key)?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    Error::Config(format!(
                        "client certificate {} and its key cannot be used together: {e}",
                        identity.chain.describe()
                    ))
                })?
            }
            None => builder.with_no_client_auth(),
        };
        config.client_auth_cert_resolver =
            Arc::new(Asked(Arc::clone(&config.client_auth_cert_resolver)));
        let mut described = roots.describe();
        if !settings.extra.is_empty() {
            let extra: Vec<String> = settings.extra.iter().map(PemSource::describe).collect();
            described.push_str(&format!(" and the extra CAs of {}", extra.join(", ")));
        }
        Ok(TlsSetup {
            config: Arc::new(config),
            roots: described,
        })
    }
}

/// The verifier for `roots`, trusting `extra` too.
fn verifier(
    roots: &Roots,
    extra: Vec<CertificateDer<'static>>,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::Bundled => store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        Roots::Environment(sources) => {
            for (variable, path) in sources {
                for file in environment_files(variable, path)? {
                    let source = PemSource::File(file);
                    let certs = certificates(&source, variable)?;
                    store.add_parsable_certificates(certs);
                }
            }
        }
        Roots::System => return system_verifier(extra, provider),
    }
    let (_, ignored) = store.add_parsable_certificates(extra);
    if ignored > 0 {
        log::debug!("{ignored} extra CA certificates could not be used as roots");
    }
    if store.is_empty() {
        return Err(Error::Config(format!(
            "TLS: {} hold no usable certificate",
            roots.describe()
        )));
    }
    WebPkiServerVerifier::builder_with_provider(Arc::new(store), Arc::clone(provider))
        .build()
        .map(|v| v as Arc<dyn ServerCertVerifier>)
        .map_err(|e| Error::Config(format!("TLS: {e}")))
}

#[cfg(all(feature = "system-trust", not(target_os = "android")))]
fn system_verifier(
    extra: Vec<CertificateDer<'static>>,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>> {
    rustls_platform_verifier::Verifier::new_with_extra_roots(extra, Arc::clone(provider))
        .map(|v| Arc::new(v) as Arc<dyn ServerCertVerifier>)
        .map_err(|e| Error::Config(format!("TLS: the operating system's trust store: {e}")))
}

#[cfg(not(all(feature = "system-trust", not(target_os = "android"))))]
fn system_verifier(
    _extra: Vec<CertificateDer<'static>>,
    _provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>> {
    Err(Error::Unsupported(crate::error::Unsupported::Feature(
        "TrustRoots::System: umcp was built without the `system-trust` feature".into(),
    )))
}

/// The files an `SSL_CERT_FILE` or `SSL_CERT_DIR` entry stands for.
fn environment_files(variable: &str, path: &Path) -> Result<Vec<std::path::PathBuf>> {
    if variable != "SSL_CERT_DIR" {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path).map_err(|e| {
        Error::Config(format!(
            "TLS: SSL_CERT_DIR names `{}`, which cannot be read: {e}",
            path.display()
        ))
    })?;
    let mut files: Vec<_> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// The certificates in `source`, read for `what` (named in errors).
fn certificates(source: &PemSource, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let text = source
        .read()
        .map_err(|e| Error::Config(format!("TLS: {what} {}: {e}", source.describe())))?;
    let certs: Vec<_> = CertificateDer::pem_slice_iter(&text)
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::Config(format!("TLS: {what} {}: {e}", source.describe())))?;
    if certs.is_empty() {
        return Err(Error::Config(format!(
            "TLS: {what} {} holds no PEM certificate",
            source.describe()
        )));
    }
    Ok(certs)
}

/// The private key in `source`; errors never quote it.
fn private_key(source: &PemSource) -> Result<PrivateKeyDer<'static>> {
    let text = source.read().map_err(|e| {
        Error::Config(format!(
            "TLS: client key {}: {}",
            source.describe(),
            e.kind()
        ))
    })?;
    PrivateKeyDer::from_pem_slice(&text).map_err(|_| {
        Error::Config(format!(
            "TLS: client key {} holds no PEM private key (PKCS#8, PKCS#1 or SEC1)",
            source.describe()
        ))
    })
}

/// A verifier that remembers, on this thread, the chain it refused.
#[derive(Debug)]
struct Remembering(Arc<dyn ServerCertVerifier>);

impl ServerCertVerifier for Remembering {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let verdict =
            self.0
                .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now);
        if verdict.is_err() {
            let chain = std::iter::once(end_entity)
                .chain(intermediates)
                .map(|c| c.clone().into_owned())
                .collect();
            REFUSED.with(|r| *r.borrow_mut() = Some(chain));
        }
        verdict
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }

    fn requires_raw_public_keys(&self) -> bool {
        self.0.requires_raw_public_keys()
    }

    fn root_hint_subjects(&self) -> Option<&[rustls::DistinguishedName]> {
        self.0.root_hint_subjects()
    }
}

/// The client certificate resolver, noting on this thread that the server asked for one.
#[derive(Debug)]
struct Asked(Arc<dyn ResolvesClientCert>);

impl ResolvesClientCert for Asked {
    fn resolve(
        &self,
        root_hint_subjects: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        ASKED.with(|asked| asked.set(true));
        self.0.resolve(root_hint_subjects, sigschemes)
    }

    fn only_raw_public_keys(&self) -> bool {
        self.0.only_raw_public_keys()
    }

    fn has_certs(&self) -> bool {
        self.0.has_certs()
    }
}

/// Wraps connections to `https` URLs in TLS with a [`TlsSetup`].
pub(crate) struct TlsConnector {
    /// `None` when nothing on the route was to speak TLS.
    pub setup: Option<Arc<TlsSetup>>,
    /// The proxy on the way, shown in errors.
    pub proxy: Option<String>,
}

impl fmt::Debug for TlsConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConnector")
            .field("setup", &self.setup)
            .finish()
    }
}

impl<In: Transport> Connector<In> for TlsConnector {
    type Out = Box<dyn Transport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> std::result::Result<Option<Self::Out>, ureq::Error> {
        let Some(transport) = chained else {
            return Ok(None);
        };
        // Every `https` connection is wrapped, also one arriving through a tunnel over TLS to an
        // `https://` proxy (TLS inside TLS), which reports itself as TLS already.
        if !details.needs_tls() {
            return Ok(Some(Box::new(transport)));
        }
        // A redirect or a legacy endpoint is never followed to another scheme; this is a bug.
        let Some(setup) = &self.setup else {
            return Err(ureq::Error::TlsRequired);
        };
        let authority = details
            .uri
            .authority()
            .ok_or_else(|| ureq::Error::BadUri(details.uri.to_string()))?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let port = authority.port_u16().unwrap_or(443);
        let shown = format!("{}:{port}", authority.host());
        let name = ServerName::try_from(host.to_owned())
            .map_err(|_| ureq::Error::BadUri(details.uri.to_string()))?;
        let mut conn = ClientConnection::new(Arc::clone(&setup.config), name).map_err(|e| {
            self.failure(setup, &shown, io::Error::new(io::ErrorKind::InvalidData, e))
        })?;
        let mut sock = TransportAdapter::new(transport.boxed(), Arc::clone(&details.current_time));
        sock.set_timeout(details.timeout);
        REFUSED.with(|r| r.borrow_mut().take());
        ASKED.with(|asked| asked.set(false));
        while conn.is_handshaking() {
            if let Err(e) = conn.complete_io(&mut sock) {
                return Err(self.failure(setup, &shown, e));
            }
        }
        let buffers = LazyBuffers::new(
            details.config.input_buffer_size(),
            details.config.output_buffer_size(),
        );
        let asked = ASKED
            .with(Cell::get)
            .then_some(setup.config.client_auth_cert_resolver.has_certs());
        SEEN.with(|seen| {
            if let Some(seen) = seen.borrow_mut().as_mut() {
                let chain = conn.peer_certificates().unwrap_or_default();
                seen.push(Seen {
                    host: shown.clone(),
                    chain: chain.iter().map(|c| CertificateSummary::read(c)).collect(),
                    roots: setup.roots.clone(),
                    client_certificate_asked: asked.is_some(),
                });
            }
        });
        Ok(Some(Box::new(TlsTransport {
            buffers,
            stream: StreamOwned { conn, sock },
            host: shown,
            proxy: self.proxy.clone(),
            asked,
            answered: false,
        })))
    }
}

impl TlsConnector {
    /// The error for `error` on the way to `host`: a [`NetworkError`] inside an I/O error when it
    /// is a TLS failure, else the error as it is.
    fn failure(&self, setup: &TlsSetup, host: &str, error: io::Error) -> ureq::Error {
        match network_error(host, &error, Some(&setup.roots), self.proxy.as_deref()) {
            Some(network) => ureq::Error::Io(io::Error::new(error.kind(), Failure(network))),
            // ureq's own errors (a timeout) travel inside I/O errors: `from` gives them back.
            None => ureq::Error::from(error),
        }
    }
}

/// A [`NetworkError`] carried inside an `io::Error` through ureq, unwrapped by the error mapping.
#[derive(Debug)]
pub(crate) struct Failure(pub NetworkError);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Failure {}

/// The [`NetworkError`] inside `error`, if it carries one.
pub(crate) fn carried(error: &io::Error) -> Option<NetworkError> {
    error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<Failure>())
        .map(|failure| failure.0.clone())
}

/// Reads the TLS failure in `error` (a rustls error inside an I/O error) as a [`NetworkError`].
fn network_error(
    host: &str,
    error: &io::Error,
    roots: Option<&str>,
    proxy: Option<&str>,
) -> Option<NetworkError> {
    let tls = error.get_ref()?.downcast_ref::<rustls::Error>()?;
    let problem = match tls {
        rustls::Error::InvalidCertificate(cert) => match cert {
            CertificateError::UnknownIssuer => NetworkProblem::UnknownIssuer,
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                NetworkProblem::Expired
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                NetworkProblem::NotYetValid
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                NetworkProblem::WrongName
            }
            CertificateError::Revoked => NetworkProblem::Revoked,
            _ => NetworkProblem::BadCertificate,
        },
        rustls::Error::AlertReceived(AlertDescription::CertificateRequired) => {
            NetworkProblem::ClientCertificateRequired
        }
        rustls::Error::AlertReceived(
            AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateUnknown
            | AlertDescription::AccessDenied
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::CertificateRevoked,
        ) => NetworkProblem::ClientCertificateRejected,
        _ => NetworkProblem::Handshake,
    };
    let mut network = NetworkError::new(problem, host, tls.to_string());
    network.proxy = proxy.map(str::to_owned);
    if matches!(
        problem,
        NetworkProblem::ClientCertificateRequired
            | NetworkProblem::ClientCertificateRejected
            | NetworkProblem::Handshake
    ) {
        return Some(network);
    }
    network.roots = roots.map(str::to_owned);
    if let Some(chain) = REFUSED.with(|r| r.borrow_mut().take()) {
        if let Some(end_entity) = chain.first() {
            let summary = CertificateSummary::read(end_entity);
            network.certificate_names = summary.names.clone();
            // The issuer of the chain's last certificate is the authority it needs trusted.
            let top = chain.last().map(|c| CertificateSummary::read(c));
            let mut shown = summary.to_string();
            if let Some(top) = top.filter(|_| chain.len() > 1) {
                if let Some(issuer) = top.issuer {
                    shown.push_str(&format!(", chained up to `{issuer}`"));
                }
            }
            network.certificate = Some(shown);
        }
    }
    Some(network)
}

/// A TLS connection; its read errors that are TLS alerts (a client certificate refused after the
/// handshake, as TLS 1.3 servers do) become [`NetworkError`]s too.
struct TlsTransport {
    buffers: LazyBuffers,
    stream: StreamOwned<ClientConnection, TransportAdapter>,
    host: String,
    proxy: Option<String>,
    /// When the server asked for a client certificate: whether one was shown.
    asked: Option<bool>,
    /// Whether the server has sent anything since the handshake.
    answered: bool,
}

impl fmt::Debug for TlsTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsTransport")
            .field("host", &self.host)
            .finish()
    }
}

impl TlsTransport {
    fn failure(&self, error: io::Error) -> ureq::Error {
        let network = network_error(&self.host, &error, None, self.proxy.as_deref())
            .or_else(|| self.refused_certificate(&error));
        match network {
            Some(network) => ureq::Error::Io(io::Error::new(error.kind(), Failure(network))),
            None => ureq::Error::from(error),
        }
    }

    /// A connection the server drops before its first answer, after asking for a client
    /// certificate: it refused the client for its certificate (or the lack of one), even when
    /// its alert saying so was lost to the reset.
    fn refused_certificate(&self, error: &io::Error) -> Option<NetworkError> {
        let dropped = matches!(
            error.kind(),
            io::ErrorKind::BrokenPipe
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::UnexpectedEof
        );
        let shown = self.asked.filter(|_| dropped && !self.answered)?;
        let problem = if shown {
            NetworkProblem::ClientCertificateRejected
        } else {
            NetworkProblem::ClientCertificateRequired
        };
        Some(NetworkError {
            proxy: self.proxy.clone(),
            ..NetworkError::new(problem, &self.host, error.to_string())
        })
    }
}

impl Transport for TlsTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(
        &mut self,
        amount: usize,
        timeout: NextTimeout,
    ) -> std::result::Result<(), ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let output = &self.buffers.output()[..amount];
        match self.stream.write_all(output) {
            Ok(()) => Ok(()),
            Err(e) => {
                // A TLS 1.3 server checks the client's certificate after the handshake, and
                // closes with an alert that a write finds only as a broken pipe: read it.
                let mut probe = [0u8; 1];
                match self.stream.read(&mut probe) {
                    Err(alert) if network_error(&self.host, &alert, None, None).is_some() => {
                        Err(self.failure(alert))
                    }
                    _ => Err(self.failure(e)),
                }
            }
        }
    }

    fn await_input(&mut self, timeout: NextTimeout) -> std::result::Result<bool, ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let input = self.buffers.input_append_buf();
        match self.stream.read(input) {
            Ok(amount) => {
                self.buffers.input_appended(amount);
                self.answered |= amount > 0;
                Ok(amount > 0)
            }
            Err(e) => Err(self.failure(e)),
        }
    }

    fn is_open(&mut self) -> bool {
        self.stream.get_mut().get_mut().is_open()
    }

    fn is_tls(&self) -> bool {
        true
    }
}
