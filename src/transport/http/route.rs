//! The way to one server, settled when a transport (or an authorization request) starts: the
//! proxy that applies, the TLS setup, or a Unix domain socket; and the ureq connector chain that
//! follows it.
//!
//! The chain is ureq's own parts with umcp's at both ends: a Unix socket or, through a SOCKS5
//! proxy or an HTTP `CONNECT` tunnel (whose failures become [`NetworkError`]s naming the
//! proxy), a TCP connection; then umcp's TLS ([`super::tls`]).

use std::fmt;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use ureq::unversioned::transport::{
    Buffers, ConnectProxyConnector, ConnectionDetails, Connector, LazyBuffers, NextTimeout,
    ShutdownHandle, SocksConnector, TcpConnector, Transport,
};

use super::network::Network;
use super::proxy::{ProxyKind, ProxyUrl};
use super::tls::{carried, Failure, TlsConnector, TlsSetup};
use crate::error::Result;
use crate::error::{NetworkError, NetworkProblem};

/// How requests to one server travel.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    /// The proxy that applies, when one does.
    pub proxy: Option<ProxyUrl>,
    /// Only when something on the way speaks TLS: a broken TLS setting (an unreadable
    /// `SSL_CERT_FILE`) must not stop a plain `http` server.
    tls: Option<Arc<TlsSetup>>,
    /// The socket to connect to instead of the URL's host.
    pub unix_socket: Option<PathBuf>,
    /// The longest a request has waited for its response headers on this route, in
    /// microseconds: what a server (and whatever is between) takes to answer.
    slowest: Arc<AtomicU64>,
}

/// The least [`Route::stream_answer_wait`] gives a stream's first answer.
pub(crate) const STREAM_ANSWER_FLOOR: Duration = Duration::from_millis(500);

/// A route's connector chain, its types erased.
#[derive(Debug)]
pub(crate) struct BoxedConnector(Box<dyn Connector<(), Out = Box<dyn Transport>>>);

impl Connector<()> for BoxedConnector {
    type Out = Box<dyn Transport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<()>,
    ) -> std::result::Result<Option<Self::Out>, ureq::Error> {
        self.0.connect(details, chained)
    }
}

impl Route {
    /// The route to `url` with `network`'s settings, reading the environment (proxy variables,
    /// `SSL_CERT_FILE`, `SSL_CERT_DIR`) and the certificate files now.
    pub fn new(network: &Network, url: &str) -> Result<Route> {
        let env = |name: &str| std::env::var(name).ok();
        // A Unix socket leads straight to the server: no proxy is on that way.
        let proxy = match network.unix_socket {
            Some(_) => None,
            None => network.proxy.select(url, &env)?,
        };
        if let Some(proxy) = &proxy {
            log::debug!(
                "{} goes through proxy {} (from {})",
                crate::redact::url(url),
                proxy.shown(),
                proxy.source
            );
        }
        let tls = if uses_tls(url, proxy.as_ref()) {
            Some(TlsSetup::shared(&network.tls, &env)?)
        } else {
            None
        };
        Ok(Route {
            proxy,
            tls,
            unix_socket: network.unix_socket.clone(),
            slowest: Arc::default(),
        })
    }

    /// Notes that a request got its response headers after `took`.
    pub fn note_exchange(&self, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.slowest.fetch_max(micros, Ordering::Relaxed);
    }

    /// How long to wait for the first answer of a stream the server keeps open (the standalone
    /// GET stream) before going on without it: a few times what answers took so far, at least
    /// [`STREAM_ANSWER_FLOOR`]. A server answers such a request as fast as any other, but a
    /// proxy may hold the answer back until the stream's first event, which may never come;
    /// waiting the whole connect timeout then stalls every start by that much.
    pub fn stream_answer_wait(&self) -> Duration {
        let slowest = Duration::from_micros(self.slowest.load(Ordering::Relaxed));
        slowest.saturating_mul(4).max(STREAM_ANSWER_FLOOR)
    }

    /// The proxy for ureq's configuration: this route's, never the one ureq would read from the
    /// environment on its own (by other rules).
    pub fn ureq_proxy(&self) -> Option<ureq::Proxy> {
        self.proxy.as_ref().and_then(ureq_proxy)
    }

    /// The connector chain for this route.
    pub fn connector(&self) -> BoxedConnector {
        let shown = self.proxy.as_ref().map(ProxyUrl::shown);
        let chain = ()
            .chain(UnixConnector(self.unix_socket.clone()))
            .chain(ProxyStage {
                inner: SocksConnector::default().chain(ConnectProxyConnector::default()),
                proxy: shown.clone(),
            })
            .chain(TcpConnector::default())
            .chain(TlsConnector {
                setup: self.tls.clone(),
                proxy: shown,
            });
        BoxedConnector(Box::new(chain))
    }
}

/// Whether a connection to `url` through `proxy` speaks TLS anywhere.
fn uses_tls(url: &str, proxy: Option<&ProxyUrl>) -> bool {
    let https = url
        .get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"));
    https || proxy.is_some_and(|p| p.kind == ProxyKind::Https)
}

/// ureq's form of `proxy`.
fn ureq_proxy(proxy: &ProxyUrl) -> Option<ureq::Proxy> {
    let protocol = match proxy.kind {
        ProxyKind::Http => ureq::ProxyProtocol::Http,
        ProxyKind::Https => ureq::ProxyProtocol::Https,
        ProxyKind::Socks5 => ureq::ProxyProtocol::Socks5,
        ProxyKind::Socks5h => ureq::ProxyProtocol::Socks5h,
    };
    let host = if proxy.host.contains(':') {
        format!("[{}]", proxy.host)
    } else {
        proxy.host.clone()
    };
    let mut builder = ureq::Proxy::builder(protocol).host(&host).port(proxy.port);
    if let Some(user) = &proxy.user {
        builder = builder.username(user);
    }
    if let Some(password) = &proxy.password {
        builder = builder.password(password);
    }
    match builder.build() {
        Ok(built) => Some(built),
        Err(e) => {
            // Parsed by umcp already: ureq refusing it is a bug, not the user's input.
            log::debug!("proxy {} not usable: {e}", proxy.shown());
            None
        }
    }
}

/// The proxy connectors, whose failures become [`NetworkError`]s naming the proxy.
struct ProxyStage<C> {
    inner: C,
    proxy: Option<String>,
}

impl<C> fmt::Debug for ProxyStage<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyStage")
            .field("proxy", &self.proxy)
            .finish()
    }
}

impl<In: Transport, C: Connector<In>> Connector<In> for ProxyStage<C> {
    type Out = C::Out;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> std::result::Result<Option<Self::Out>, ureq::Error> {
        let Some(proxy) = &self.proxy else {
            return self.inner.connect(details, chained);
        };
        // Connecting to the proxy itself (an `https://` proxy's TLS) has no proxy configured.
        if details.config.proxy().is_none() {
            return self.inner.connect(details, chained);
        }
        self.inner
            .connect(details, chained)
            .map_err(|e| proxy_failure(e, proxy, details))
    }
}

/// `error`, from connecting through `proxy`, as a [`NetworkError`] when it is the proxy's doing.
fn proxy_failure(error: ureq::Error, proxy: &str, details: &ConnectionDetails) -> ureq::Error {
    let host = details.uri.authority().map_or_else(String::new, |a| {
        let port = a
            .port_u16()
            .unwrap_or(if details.needs_tls() { 443 } else { 80 });
        format!("{}:{port}", a.host())
    });
    let (problem, detail) = match &error {
        ureq::Error::Io(e) if carried(e).is_some() => return error,
        ureq::Error::ConnectProxyFailed(reason) if reason.contains("407") => {
            (NetworkProblem::ProxyAuthentication, reason.clone())
        }
        ureq::Error::ConnectProxyFailed(reason) => (NetworkProblem::ProxyRefused, reason.clone()),
        ureq::Error::HostNotFound => (
            NetworkProblem::ProxyUnreachable,
            "its host name does not resolve".to_owned(),
        ),
        ureq::Error::Io(e) => match e.kind() {
            io::ErrorKind::PermissionDenied => (NetworkProblem::ProxyAuthentication, e.to_string()),
            io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::HostUnreachable
            | io::ErrorKind::NetworkUnreachable
            | io::ErrorKind::NotFound
            | io::ErrorKind::UnexpectedEof
            | io::ErrorKind::AddrNotAvailable => (NetworkProblem::ProxyUnreachable, e.to_string()),
            _ => (NetworkProblem::ProxyRefused, e.to_string()),
        },
        // A deadline stays a timeout: callers act on those.
        _ => return error,
    };
    let network = NetworkError {
        proxy: Some(proxy.to_owned()),
        ..NetworkError::new(problem, &host, detail)
    };
    ureq::Error::Io(io::Error::other(Failure(network)))
}

/// Connects to a Unix domain socket when the route has one, else passes.
#[derive(Debug)]
struct UnixConnector(Option<PathBuf>);

impl Connector<()> for UnixConnector {
    type Out = Box<dyn Transport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        _chained: Option<()>,
    ) -> std::result::Result<Option<Self::Out>, ureq::Error> {
        let Some(path) = &self.0 else {
            return Ok(None);
        };
        unix::connect(path, details)
    }
}

#[cfg(unix)]
mod unix {
    use super::*;
    use std::os::unix::net::UnixStream;

    /// A Unix socket, shut down from another thread through its handle.
    struct Socket(UnixStream);

    impl ShutdownHandle for Socket {
        fn shutdown(&self) {
            let _ = self.0.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Connects to `path`. A connect to a Unix socket completes or fails at once, unless the
    /// server's backlog of connections waiting to be accepted is full; the reads and writes that
    /// follow keep every deadline.
    pub(super) fn connect(
        path: &std::path::Path,
        details: &ConnectionDetails,
    ) -> std::result::Result<Option<Box<dyn Transport>>, ureq::Error> {
        let stream = UnixStream::connect(path).map_err(|e| {
            ureq::Error::Io(io::Error::new(
                e.kind(),
                format!("Unix socket {}: {e}", path.display()),
            ))
        })?;
        let socket = Arc::new(Socket(stream));
        (details.register_shutdown)(Arc::downgrade(&socket) as Weak<dyn ShutdownHandle>)?;
        log::debug!("connected to Unix socket {}", path.display());
        Ok(Some(Box::new(UnixTransport {
            socket,
            buffers: LazyBuffers::new(
                details.config.input_buffer_size(),
                details.config.output_buffer_size(),
            ),
        })))
    }

    struct UnixTransport {
        socket: Arc<Socket>,
        buffers: LazyBuffers,
    }

    impl fmt::Debug for UnixTransport {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("UnixTransport")
        }
    }

    /// The socket timeout for `timeout`: `None` for no limit, an error once it has passed.
    fn limit(timeout: NextTimeout) -> std::result::Result<Option<Duration>, ureq::Error> {
        if timeout.after.is_not_happening() {
            return Ok(None);
        }
        if timeout.after.is_zero() {
            return Err(ureq::Error::Timeout(timeout.reason));
        }
        Ok(Some(*timeout.after))
    }

    /// An I/O error, a timed-out wait reported as ureq's timeout.
    fn failed(e: io::Error, timeout: NextTimeout) -> ureq::Error {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                ureq::Error::Timeout(timeout.reason)
            }
            _ => ureq::Error::Io(e),
        }
    }

    impl Transport for UnixTransport {
        fn buffers(&mut self) -> &mut dyn Buffers {
            &mut self.buffers
        }

        fn transmit_output(
            &mut self,
            amount: usize,
            timeout: NextTimeout,
        ) -> std::result::Result<(), ureq::Error> {
            let timeout = timeout.for_write();
            self.socket.0.set_write_timeout(limit(timeout)?)?;
            let output = &self.buffers.output()[..amount];
            (&self.socket.0)
                .write_all(output)
                .map_err(|e| failed(e, timeout))
        }

        fn await_input(&mut self, timeout: NextTimeout) -> std::result::Result<bool, ureq::Error> {
            let timeout = timeout.for_read();
            self.socket.0.set_read_timeout(limit(timeout)?)?;
            let input = self.buffers.input_append_buf();
            let amount = (&self.socket.0)
                .read(input)
                .map_err(|e| failed(e, timeout))?;
            self.buffers.input_appended(amount);
            Ok(amount > 0)
        }

        fn is_open(&mut self) -> bool {
            // A pooled connection the server has closed fails at its next use, and is replaced.
            true
        }
    }
}

#[cfg(not(unix))]
mod unix {
    use super::*;

    pub(super) fn connect(
        path: &std::path::Path,
        _details: &ConnectionDetails,
    ) -> std::result::Result<Option<Box<dyn Transport>>, ureq::Error> {
        Err(ureq::Error::Io(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "Unix socket {}: Unix domain sockets are not supported on this platform",
                path.display()
            ),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::trust::PemSource;

    #[test]
    fn tls_settings_are_read_only_where_tls_is_spoken() {
        let mut network = Network {
            proxy: crate::Proxy::none(),
            ..Network::default()
        };
        network
            .tls
            .extra
            .push(PemSource::File("/no/such/ca.pem".into()));
        assert!(Route::new(&network, "http://127.0.0.1:1/mcp").is_ok());
        let error = Route::new(&network, "https://127.0.0.1:1/mcp").expect_err("unreadable");
        assert!(error.to_string().contains("/no/such/ca.pem"), "{error}");
        network.proxy = crate::Proxy::url("https://127.0.0.1:3128");
        assert!(Route::new(&network, "http://127.0.0.1:1/mcp").is_err());
    }

    #[test]
    fn the_stream_answer_wait_follows_the_slowest_answer() {
        let route = Route::new(&Network::default(), "http://127.0.0.1:1/mcp").expect("a route");
        assert_eq!(route.stream_answer_wait(), STREAM_ANSWER_FLOOR);
        route.note_exchange(Duration::from_millis(50));
        assert_eq!(route.stream_answer_wait(), STREAM_ANSWER_FLOOR);
        route.note_exchange(Duration::from_millis(400));
        route.note_exchange(Duration::from_millis(10));
        assert_eq!(route.stream_answer_wait(), Duration::from_millis(1600));
    }
}
