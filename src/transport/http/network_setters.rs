//! The setters and getters of [`HttpConfig`]'s network settings: proxy, trust roots, extra
//! authorities, client certificate and Unix socket.

use std::path::{Path, PathBuf};

use super::proxy::Proxy;
use super::trust::{ClientIdentity, PemSource, TrustRoots};
use super::HttpConfig;

impl HttpConfig {
    /// Where the requests go: through the proxy the environment names (the default,
    /// [`Proxy::from_env`]), directly ([`Proxy::none`]), or through a proxy of this server's
    /// own ([`Proxy::url`]). See [`Proxy`] for the variables and the `no_proxy` rules.
    ///
    /// ```
    /// use umcp::{HttpConfig, Proxy};
    ///
    /// let config = HttpConfig::new("https://mcp.example.com/mcp")
    ///     .proxy(Proxy::url("socks5h://127.0.0.1:1080"));
    /// assert_eq!(
    ///     config.get_proxy().for_url(config.get_url()).unwrap().as_deref(),
    ///     Some("socks5h://127.0.0.1:1080")
    /// );
    /// ```
    pub fn proxy(mut self, proxy: Proxy) -> HttpConfig {
        self.network.proxy = proxy;
        self
    }

    /// The authorities a server certificate must chain to (default: `SSL_CERT_FILE` and
    /// `SSL_CERT_DIR` when set, else [`TrustRoots::Bundled`]); choosing them here makes the
    /// environment irrelevant. See [`TrustRoots`].
    ///
    /// See the example on [`TrustRoots`].
    pub fn trust_roots(mut self, roots: TrustRoots) -> HttpConfig {
        self.network.tls.roots = Some(roots);
        self
    }

    /// Trusts the certificate authorities in the PEM file at `path` too (any number of
    /// certificates), on top of the roots: a company's root, a TLS-inspecting proxy's, a
    /// self-signed server's own certificate. The file is read when connecting; a file that cannot
    /// be read or holds no certificate fails the connection with
    /// [`Error::Config`](crate::Error::Config).
    ///
    /// See the example on [`TrustRoots`].
    pub fn add_ca_file(mut self, path: impl AsRef<Path>) -> HttpConfig {
        self.network
            .tls
            .extra
            .push(PemSource::File(path.as_ref().to_path_buf()));
        self
    }

    /// As [`add_ca_file`](Self::add_ca_file), with the PEM text itself.
    ///
    /// See the example on [`TrustRoots`].
    pub fn add_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> HttpConfig {
        self.network
            .tls
            .extra
            .push(PemSource::Bytes(pem.into().into()));
        self
    }

    /// Shows this client certificate to the server when it asks for one (mutual TLS). Never
    /// shown to an authorization server, nor logged.
    ///
    /// See the example on [`ClientIdentity`].
    pub fn client_identity(mut self, identity: ClientIdentity) -> HttpConfig {
        self.network.tls.identity = Some(identity);
        self
    }

    /// Connects to the Unix domain socket at `path` instead of the URL's host and port, for a
    /// server that listens on one (`uvicorn --uds`, `curl --unix-socket`); the URL still gives
    /// the path and the `Host` header (`http://localhost/mcp`), and `https` URLs speak TLS over
    /// the socket. No proxy applies. Unix only: elsewhere connecting fails with
    /// [`Error::Io`](crate::Error::Io).
    ///
    /// ```
    /// use umcp::HttpConfig;
    ///
    /// let config = HttpConfig::new("http://localhost/mcp").unix_socket("/run/mcp/server.sock");
    /// assert_eq!(
    ///     config.get_unix_socket(),
    ///     Some(std::path::Path::new("/run/mcp/server.sock"))
    /// );
    /// ```
    pub fn unix_socket(mut self, path: impl Into<PathBuf>) -> HttpConfig {
        self.network.unix_socket = Some(path.into());
        self
    }

    /// The proxy setting.
    ///
    /// See the example on [`HttpConfig::proxy`].
    pub fn get_proxy(&self) -> &Proxy {
        &self.network.proxy
    }

    /// The trust roots chosen, `None` when the environment (or the default) decides.
    ///
    /// See the example on [`TrustRoots`].
    pub fn get_trust_roots(&self) -> Option<TrustRoots> {
        self.network.tls.roots
    }

    /// The extra certificate authorities, in the order added.
    ///
    /// See the example on [`TrustRoots`].
    pub fn get_extra_cas(&self) -> &[PemSource] {
        &self.network.tls.extra
    }

    /// The client certificate, when one is set.
    ///
    /// See the example on [`ClientIdentity`].
    pub fn get_client_identity(&self) -> Option<&ClientIdentity> {
        self.network.tls.identity.as_ref()
    }

    /// The Unix socket, when one is set.
    ///
    /// See the example on [`HttpConfig::unix_socket`].
    pub fn get_unix_socket(&self) -> Option<&Path> {
        self.network.unix_socket.as_deref()
    }
}
