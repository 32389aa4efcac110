//! What an HTTPS connection trusts and shows: the roots a server's certificate must chain to,
//! extra certificate authorities, and a client certificate for servers that ask for one.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The certificate authorities a server's certificate must chain to.
///
/// # Which roots
///
/// - [`TrustRoots::Bundled`]: Mozilla's root certificates, compiled into umcp. The same on every
///   machine, and blind to a company's own authority.
/// - [`TrustRoots::System`]: the operating system's trust store and its verification policy
///   (the Windows certificate store, the macOS keychain, the system bundle on Linux and the
///   BSDs). Where a company installs its root (a TLS-inspecting proxy's, an internal CA's), this
///   is where it is. Needs the `system-trust` feature.
///
/// Extra authorities ([`HttpConfig::add_ca_file`](super::HttpConfig::add_ca_file),
/// [`HttpConfig::add_ca_pem`](super::HttpConfig::add_ca_pem)) are trusted on top of either.
///
/// # The environment
///
/// When the roots are not chosen ([`HttpConfig::trust_roots`](super::HttpConfig::trust_roots)
/// not called), two variables are read, with the meaning OpenSSL, curl and Python give them:
///
/// - `SSL_CERT_FILE`: a PEM file whose certificates are the trusted roots, instead of the
///   bundled ones;
/// - `SSL_CERT_DIR`: a directory whose PEM files (every regular file in it; lists separated by
///   `:`) are trusted roots, instead of the bundled ones, together with `SSL_CERT_FILE`.
///
/// With neither set the roots are the bundled ones. A file named there that cannot be read, or
/// holds no certificate, fails the connection with [`Error::Config`](crate::Error::Config)
/// naming the variable, rather than silently trusting something else. Chosen roots ignore
/// both variables, except that on Linux and the BSDs the system store honours them itself.
///
/// Not read: `CURL_CA_BUNDLE`, `REQUESTS_CA_BUNDLE` and `NODE_EXTRA_CA_CERTS` (other programs'
/// settings), and no variable turns verification off: there is no such switch at all.
///
/// ```
/// use umcp::{HttpConfig, TrustRoots};
///
/// let config = HttpConfig::new("https://mcp.internal.corp/mcp")
///     .trust_roots(TrustRoots::System)
///     .add_ca_file("/etc/corp/root-ca.pem");
/// assert_eq!(config.get_trust_roots(), Some(TrustRoots::System));
/// assert_eq!(config.get_extra_cas().len(), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TrustRoots {
    /// Mozilla's roots, compiled in (the default when no environment variable says otherwise).
    #[default]
    Bundled,
    /// The operating system's trust store and verification (feature `system-trust`).
    System,
}

/// Certificates in PEM form, from a file read when connecting, or given as bytes.
///
/// See the example on [`TrustRoots`].
#[derive(Clone, PartialEq, Eq)]
pub enum PemSource {
    /// A file, read each time a connection is set up.
    File(PathBuf),
    /// The PEM text itself.
    Bytes(Arc<[u8]>),
}

#[cfg(feature = "http")]
impl PemSource {
    /// The file or the bytes' length, for messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            PemSource::File(path) => format!("`{}`", path.display()),
            PemSource::Bytes(bytes) => format!("the PEM given ({} bytes)", bytes.len()),
        }
    }

    /// The text, read from the file when it is one.
    pub(crate) fn read(&self) -> std::io::Result<Arc<[u8]>> {
        match self {
            PemSource::File(path) => std::fs::read(path).map(Arc::from),
            PemSource::Bytes(bytes) => Ok(Arc::clone(bytes)),
        }
    }
}

impl fmt::Debug for PemSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PemSource::File(path) => f.debug_tuple("File").field(path).finish(),
            PemSource::Bytes(bytes) => write!(f, "Bytes({} bytes)", bytes.len()),
        }
    }
}

/// A client certificate chain and its private key, shown to servers that ask for one (mutual
/// TLS, as internal gateways require).
///
/// The key is never logged and never in `Debug`: only where it comes from is shown.
///
/// ```
/// use umcp::{ClientIdentity, HttpConfig};
///
/// let identity = ClientIdentity::from_pem_files("/etc/mcp/client.pem", "/etc/mcp/client.key");
/// let config = HttpConfig::new("https://gateway.corp/mcp").client_identity(identity);
/// assert!(config.get_client_identity().is_some());
///
/// let inline = ClientIdentity::from_pem(b"-----BEGIN CERTIFICATE-----...".to_vec(), b"secret".to_vec());
/// assert!(!format!("{inline:?}").contains("secret"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    pub(crate) chain: PemSource,
    pub(crate) key: PemSource,
}

impl ClientIdentity {
    /// A certificate chain (the client's certificate first, then any intermediates) and its
    /// private key (PKCS#8, PKCS#1 or SEC1), each a PEM file read when connecting.
    ///
    /// See the example on [`ClientIdentity`].
    pub fn from_pem_files(chain: impl AsRef<Path>, key: impl AsRef<Path>) -> ClientIdentity {
        ClientIdentity {
            chain: PemSource::File(chain.as_ref().to_path_buf()),
            key: PemSource::File(key.as_ref().to_path_buf()),
        }
    }

    /// As [`from_pem_files`](Self::from_pem_files), from PEM text.
    ///
    /// See the example on [`ClientIdentity`].
    pub fn from_pem(chain: Vec<u8>, key: Vec<u8>) -> ClientIdentity {
        ClientIdentity {
            chain: PemSource::Bytes(chain.into()),
            key: PemSource::Bytes(key.into()),
        }
    }

    /// Where the certificate chain comes from.
    ///
    /// See the example on [`ClientIdentity`].
    pub fn chain(&self) -> &PemSource {
        &self.chain
    }
}

impl fmt::Debug for ClientIdentity {
    /// The key's source is shown as a file name or a length, never its content.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = match &self.key {
            PemSource::File(path) => format!("{}", path.display()),
            PemSource::Bytes(_) => crate::redact::REDACTED.to_owned(),
        };
        f.debug_struct("ClientIdentity")
            .field("chain", &self.chain)
            .field("key", &key)
            .finish()
    }
}

/// The TLS settings of one HTTP server, as [`HttpConfig`](super::HttpConfig) holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    /// `None`: the environment decides, else the bundled roots.
    pub roots: Option<TrustRoots>,
    pub extra: Vec<PemSource>,
    pub identity: Option<ClientIdentity>,
}

/// Where the roots come from once the environment is read.
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Roots {
    Bundled,
    System,
    /// `SSL_CERT_FILE` and `SSL_CERT_DIR`: each source with the variable that named it.
    Environment(Vec<(&'static str, PathBuf)>),
}

#[cfg(feature = "http")]
impl TlsSettings {
    /// The roots, reading `SSL_CERT_FILE` and `SSL_CERT_DIR` through `env` when none are
    /// chosen.
    pub fn roots(&self, env: &dyn Fn(&str) -> Option<String>) -> Roots {
        match self.roots {
            Some(TrustRoots::Bundled) => Roots::Bundled,
            Some(TrustRoots::System) => Roots::System,
            None => {
                let set = |name| env(name).filter(|v| !v.trim().is_empty());
                let mut sources = Vec::new();
                if let Some(file) = set("SSL_CERT_FILE") {
                    sources.push(("SSL_CERT_FILE", PathBuf::from(file)));
                }
                if let Some(dirs) = set("SSL_CERT_DIR") {
                    for dir in dirs.split(':').filter(|d| !d.is_empty()) {
                        sources.push(("SSL_CERT_DIR", PathBuf::from(dir)));
                    }
                }
                if sources.is_empty() {
                    Roots::Bundled
                } else {
                    Roots::Environment(sources)
                }
            }
        }
    }
}

#[cfg(feature = "http")]
impl Roots {
    /// The roots in a sentence, for messages: "the bundled Mozilla roots".
    pub fn describe(&self) -> String {
        match self {
            Roots::Bundled => "the bundled Mozilla roots".to_owned(),
            Roots::System => "the operating system's trust store".to_owned(),
            Roots::Environment(sources) => {
                let named: Vec<String> = sources
                    .iter()
                    .map(|(var, path)| format!("{var}={}", path.display()))
                    .collect();
                format!("the roots of {}", named.join(", "))
            }
        }
    }
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;

    #[test]
    fn the_environment_replaces_the_bundled_roots_only_when_none_are_chosen() {
        let env = |name: &str| match name {
            "SSL_CERT_FILE" => Some("/etc/ssl/corp.pem".to_owned()),
            "SSL_CERT_DIR" => Some("/a:/b".to_owned()),
            _ => None,
        };
        let default = TlsSettings::default();
        assert_eq!(
            default.roots(&env),
            Roots::Environment(vec![
                ("SSL_CERT_FILE", PathBuf::from("/etc/ssl/corp.pem")),
                ("SSL_CERT_DIR", PathBuf::from("/a")),
                ("SSL_CERT_DIR", PathBuf::from("/b")),
            ])
        );
        assert_eq!(default.roots(&|_| None), Roots::Bundled);
        assert_eq!(default.roots(&|_| Some(" ".into())), Roots::Bundled);
        let chosen = TlsSettings {
            roots: Some(TrustRoots::Bundled),
            ..TlsSettings::default()
        };
        assert_eq!(chosen.roots(&env), Roots::Bundled);
        assert!(default
            .roots(&env)
            .describe()
            .contains("SSL_CERT_FILE=/etc/ssl/corp.pem"));
    }

    #[test]
    fn keys_never_show() {
        let identity = ClientIdentity::from_pem(b"chain".to_vec(), b"PRIVATE KEY".to_vec());
        let shown = format!("{identity:?}");
        assert!(!shown.contains("PRIVATE"), "{shown}");
        let files = ClientIdentity::from_pem_files("c.pem", "k.pem");
        assert!(format!("{files:?}").contains("k.pem"));
    }
}
