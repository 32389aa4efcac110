//! Failures of the network between umcp and a server, said so that a person can act: which
//! certificate was refused and why, which proxy refused or could not be reached, and what to do.

use std::fmt;

/// A TLS or proxy failure on the way to an HTTP server ([`Error::Network`](crate::Error::Network)).
///
/// `Display` names the problem, the certificate or proxy concerned and the remedy, e.g.:
///
/// ```text
/// network: TLS: the certificate of mcp.example.com:443 (`mcp.example.com` issued by `mitmproxy`,
/// valid …) is not issued by a trusted authority (trusted: the bundled Mozilla roots); if that
/// authority is your organisation's (a TLS-inspecting proxy, an internal CA), trust it: add its
/// certificate (HttpConfig::add_ca_file, umcp --cacert FILE) or use the operating system's
/// store (TrustRoots::System, umcp --system-trust)
/// ```
///
/// ```
/// use umcp::{Error, NetworkProblem};
///
/// fn advice(error: &Error) -> &'static str {
///     match error {
///         Error::Network(e) if e.problem == NetworkProblem::UnknownIssuer => "add your CA",
///         Error::Network(e) if e.proxy.is_some() => "check the proxy",
///         _ => "",
///     }
/// }
/// # let _ = advice;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NetworkError {
    /// What went wrong.
    pub problem: NetworkProblem,
    /// The `host:port` concerned: the server's, or the proxy's for a TLS connection to the proxy.
    pub host: String,
    /// The proxy on the way, its password redacted, when there was one.
    pub proxy: Option<String>,
    /// The certificate concerned, summarised: its subject, issuer and validity.
    pub certificate: Option<String>,
    /// The host names the certificate covers, for [`NetworkProblem::WrongName`].
    pub certificate_names: Vec<String>,
    /// The trusted roots, in words ("the bundled Mozilla roots"), for certificate problems.
    pub roots: Option<String>,
    /// The underlying error, as the TLS library or the proxy said it.
    pub detail: String,
}

/// What a [`NetworkError`] is about.
///
/// See the example on [`NetworkError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NetworkProblem {
    /// The server's certificate does not chain to a trusted root: a self-signed or internal
    /// certificate, or a TLS-inspecting proxy's.
    UnknownIssuer,
    /// The certificate has expired.
    Expired,
    /// The certificate is not valid yet (or the clock is wrong).
    NotYetValid,
    /// The certificate is for other host names.
    WrongName,
    /// The certificate has been revoked.
    Revoked,
    /// The certificate was refused for another reason (`detail` says which).
    BadCertificate,
    /// The server requires a client certificate and none was configured.
    ClientCertificateRequired,
    /// The server refused the client certificate.
    ClientCertificateRejected,
    /// The TLS handshake failed otherwise (no common protocol version or cipher, a reset).
    Handshake,
    /// The proxy could not be reached (refused, no such host, no answer in time).
    ProxyUnreachable,
    /// The proxy wants credentials, or refused the ones given (HTTP 407, SOCKS authentication).
    ProxyAuthentication,
    /// The proxy refused to connect to the server (its HTTP status or SOCKS reply in `detail`).
    ProxyRefused,
}

impl NetworkError {
    /// A failure of `problem` at `host`, with the underlying `detail`.
    #[cfg(any(test, feature = "http"))]
    pub(crate) fn new(problem: NetworkProblem, host: &str, detail: impl Into<String>) -> Self {
        NetworkError {
            problem,
            host: host.to_owned(),
            proxy: None,
            certificate: None,
            certificate_names: Vec::new(),
            roots: None,
            detail: detail.into(),
        }
    }

    /// What can be done about it, in a sentence (empty when nothing general can be said).
    ///
    /// See the example on [`NetworkError`].
    pub fn remedy(&self) -> &'static str {
        match self.problem {
            NetworkProblem::UnknownIssuer => {
                "if that authority is your organisation's (a TLS-inspecting proxy, an internal \
                 CA), trust it: add its certificate (HttpConfig::add_ca_file, umcp --cacert FILE) \
                 or use the operating system's store (TrustRoots::System, umcp --system-trust)"
            }
            NetworkProblem::Expired | NetworkProblem::NotYetValid => {
                "check this machine's clock; otherwise the server's certificate must be renewed"
            }
            NetworkProblem::WrongName => {
                "connect with a host name the certificate covers, or have the certificate \
                 reissued for this one"
            }
            NetworkProblem::ClientCertificateRequired => {
                "configure a client certificate and key (HttpConfig::client_identity, umcp \
                 --cert FILE --key FILE)"
            }
            NetworkProblem::ClientCertificateRejected => {
                "the server does not accept this client certificate: check that it is the one \
                 issued for this server, and not expired"
            }
            NetworkProblem::ProxyUnreachable => {
                "check the proxy's address (https_proxy, http_proxy, all_proxy; or the configured \
                 proxy), or list this host in no_proxy to connect directly"
            }
            NetworkProblem::ProxyAuthentication => {
                "put the proxy's user and password in its URL: http://user:password@proxy:port"
            }
            NetworkProblem::ProxyRefused => {
                "the proxy does not allow this destination; ask its administrators, or list \
                 the host in no_proxy if it can be reached directly"
            }
            NetworkProblem::Revoked
            | NetworkProblem::BadCertificate
            | NetworkProblem::Handshake => "",
        }
    }
}

impl fmt::Display for NetworkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.what(f)?;
        self.context(f)
    }
}

impl NetworkError {
    /// What happened, in a sentence.
    fn what(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let certificate = match &self.certificate {
            Some(summary) => format!(" ({summary})"),
            None => String::new(),
        };
        let host = &self.host;
        match self.problem {
            NetworkProblem::UnknownIssuer => write!(
                f,
                "TLS: the certificate of {host}{certificate} is not issued by a trusted authority"
            )?,
            NetworkProblem::Expired => {
                write!(f, "TLS: the certificate of {host}{certificate} has expired")?
            }
            NetworkProblem::NotYetValid => write!(
                f,
                "TLS: the certificate of {host}{certificate} is not valid yet"
            )?,
            NetworkProblem::WrongName => {
                write!(
                    f,
                    "TLS: the certificate of {host}{certificate} is not for this host"
                )?;
                if !self.certificate_names.is_empty() {
                    write!(f, "; it names {}", self.certificate_names.join(", "))?;
                }
            }
            NetworkProblem::Revoked => write!(
                f,
                "TLS: the certificate of {host}{certificate} has been revoked"
            )?,
            NetworkProblem::BadCertificate => write!(
                f,
                "TLS: the certificate of {host}{certificate} was refused: {}",
                self.detail
            )?,
            NetworkProblem::ClientCertificateRequired => write!(
                f,
                "TLS: {host} requires a client certificate, and none is configured"
            )?,
            NetworkProblem::ClientCertificateRejected => write!(
                f,
                "TLS: {host} refused the client certificate ({})",
                self.detail
            )?,
            NetworkProblem::Handshake => {
                write!(f, "TLS: the handshake with {host} failed: {}", self.detail)?
            }
            NetworkProblem::ProxyUnreachable => write!(
                f,
                "proxy {} could not be reached: {}",
                self.proxy.as_deref().unwrap_or(host),
                self.detail
            )?,
            NetworkProblem::ProxyAuthentication => write!(
                f,
                "proxy {} refused to authenticate umcp: {}",
                self.proxy.as_deref().unwrap_or(host),
                self.detail
            )?,
            NetworkProblem::ProxyRefused => write!(
                f,
                "proxy {} refused the connection to {host}: {}",
                self.proxy.as_deref().unwrap_or("(unknown)"),
                self.detail
            )?,
        }
        Ok(())
    }

    /// The roots trusted, the proxy on the way, and the remedy.
    fn context(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let certificate_problem = !matches!(
            self.problem,
            NetworkProblem::ProxyUnreachable
                | NetworkProblem::ProxyAuthentication
                | NetworkProblem::ProxyRefused
                | NetworkProblem::ClientCertificateRequired
                | NetworkProblem::ClientCertificateRejected
                | NetworkProblem::Handshake
        );
        if certificate_problem {
            if let Some(roots) = &self.roots {
                write!(f, " (trusted: {roots})")?;
            }
        }
        let through_proxy = !matches!(
            self.problem,
            NetworkProblem::ProxyUnreachable
                | NetworkProblem::ProxyAuthentication
                | NetworkProblem::ProxyRefused
        );
        if let (true, Some(proxy)) = (through_proxy, &self.proxy) {
            write!(f, " (through proxy {proxy})")?;
        }
        let remedy = self.remedy();
        if !remedy.is_empty() {
            write!(f, "; {remedy}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_what_what_and_what_to_do() {
        let mut error = NetworkError::new(NetworkProblem::UnknownIssuer, "mcp.test:443", "x");
        error.certificate = Some("`mcp.test` issued by `mitmproxy`".into());
        error.roots = Some("the bundled Mozilla roots".into());
        error.proxy = Some("http://127.0.0.1:8080".into());
        let text = error.to_string();
        for part in [
            "mcp.test:443",
            "issued by `mitmproxy`",
            "trusted: the bundled Mozilla roots",
            "through proxy http://127.0.0.1:8080",
            "--cacert",
            "TrustRoots::System",
        ] {
            assert!(text.contains(part), "{part} in {text}");
        }
        let refused = NetworkError {
            proxy: Some("http://u:<redacted>@p:3128".into()),
            ..NetworkError::new(
                NetworkProblem::ProxyRefused,
                "mcp.test:443",
                "403 Forbidden",
            )
        };
        let text = refused.to_string();
        assert!(text.starts_with("proxy http://u:<redacted>@p:3128 refused the connection to mcp.test:443: 403 Forbidden"), "{text}");
        assert!(!text.contains("through proxy"), "{text}");
    }
}
