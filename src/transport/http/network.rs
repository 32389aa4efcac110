//! The network settings of an HTTP server that its authorization requests share: the proxy, the
//! trust roots and extra authorities, the client certificate and a Unix domain socket.

use std::path::PathBuf;

use super::proxy::Proxy;
use super::trust::TlsSettings;

/// How a connection reaches its server, as [`HttpConfig`](super::HttpConfig) holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Network {
    pub proxy: Proxy,
    pub tls: TlsSettings,
    /// Connect to this socket instead of the URL's host and port.
    pub unix_socket: Option<PathBuf>,
}

impl Network {
    /// The settings an authorization server is reached with: the same proxy and trust, but
    /// neither the client certificate (which identifies the client to the MCP server only) nor
    /// the Unix socket (which leads to the MCP server only).
    #[cfg(feature = "oauth")]
    pub fn for_authorization(&self) -> Network {
        Network {
            proxy: self.proxy.clone(),
            tls: TlsSettings {
                identity: None,
                ..self.tls.clone()
            },
            unix_socket: None,
        }
    }
}
