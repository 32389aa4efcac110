//! Which proxy, if any, carries the requests to a URL: the environment's `http_proxy`,
//! `https_proxy`, `all_proxy` and `no_proxy` (read as curl reads them), or a proxy chosen for one
//! server.

use std::fmt;
use std::net::IpAddr;

use crate::error::{Error, Result};
use crate::redact;

/// Where the requests to an HTTP server go: through the proxy the environment names (the
/// default), directly, or through a proxy chosen for this server.
///
/// # The environment
///
/// With [`Proxy::from_env`] (the default) the proxy for a URL is, in order:
///
/// - for an `https://` URL, `https_proxy`, then `HTTPS_PROXY`;
/// - for an `http://` URL, `http_proxy`, then `HTTP_PROXY` (the upper-case name is ignored when
///   `REQUEST_METHOD` is set: in a CGI program a request's `Proxy:` header arrives as
///   `HTTP_PROXY`);
/// - then, for either, `all_proxy`, then `ALL_PROXY`.
///
/// The first variable that is set and not empty decides. A proxy is written as a URL:
/// `http://proxy:3128`, `https://proxy:443` (TLS to the proxy), `socks5://proxy:1080` (the proxy
/// is given the server's address, resolved here) or `socks5h://proxy:1080` (the proxy resolves
/// the name); without a scheme it is an HTTP proxy; the port defaults to 80, 443 or 1080.
/// Credentials go in the URL (`http://user:pass@proxy:3128`, percent-encoded); they are sent to
/// the proxy only, and never shown: messages and `Debug` output show the URL with its password
/// replaced by `<redacted>`.
///
/// `no_proxy` (or `NO_PROXY`) lists the hosts reached directly, separated by commas or spaces:
///
/// - `*` alone: every host;
/// - a name, `example.com`: that host and every host under it (`api.example.com`); a leading
///   `.` or `*.` changes nothing (`.example.com` matches `example.com` too);
/// - an IP address, `10.1.2.3` or `::1` (or `[::1]`): that address, written as an address in
///   the URL (names are never resolved to check);
/// - a CIDR block, `10.0.0.0/8` or `fd00::/8`: every address in it, likewise;
/// - any of these with `:port` (`example.com:8443`, `[::1]:8080`): only URLs with that port
///   (the scheme's default port when the URL has none).
///
/// HTTP proxies carry every request in a `CONNECT` tunnel, also to `http://` servers: a proxy
/// that allows `CONNECT` only to port 443 refuses those (list such hosts in `no_proxy`, or give
/// them a SOCKS5 proxy).
///
/// Matching ignores case and a trailing dot. Nothing is bypassed unless listed: `localhost` and
/// `127.0.0.1` go through the proxy too, as with curl. A proxy set for one server with
/// [`Proxy::url`] is used for every request to it; `no_proxy` does not apply to it.
///
/// Other settings are not read: the Windows and macOS system proxy settings, PAC files and
/// `WPAD`, and the variables of other programs (`npm_config_proxy`, `REQUESTS_CA_BUNDLE`).
///
/// ```
/// use umcp::transport::http::Proxy;
///
/// let proxy = Proxy::url("http://alice:s3cret@proxy.corp:3128");
/// assert_eq!(
///     proxy.for_url("https://mcp.example.com/mcp").unwrap().as_deref(),
///     Some("http://alice:<redacted>@proxy.corp:3128")
/// );
/// assert!(!format!("{proxy:?}").contains("s3cret"));
/// assert_eq!(Proxy::none().for_url("https://mcp.example.com/mcp").unwrap(), None);
/// ```
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Proxy {
    choice: Choice,
}

#[derive(Clone, PartialEq, Eq, Default)]
enum Choice {
    #[default]
    Environment,
    None,
    Url(String),
}

impl Proxy {
    /// The proxy the environment names for each URL, as described on [`Proxy`] (the default).
    ///
    /// See the example on [`Proxy`].
    pub fn from_env() -> Proxy {
        Proxy {
            choice: Choice::Environment,
        }
    }

    /// No proxy: every request goes straight to the server, whatever the environment says.
    ///
    /// See the example on [`Proxy`].
    pub fn none() -> Proxy {
        Proxy {
            choice: Choice::None,
        }
    }

    /// This proxy for every request to the server (`http://`, `https://`, `socks5://` or
    /// `socks5h://`, with credentials in the URL when it needs them); the environment is not
    /// read. The URL is checked when connecting: a malformed one fails with
    /// [`Error::Config`].
    ///
    /// See the example on [`Proxy`].
    pub fn url(url: impl Into<String>) -> Proxy {
        Proxy {
            choice: Choice::Url(url.into()),
        }
    }

    /// Whether this is [`Proxy::from_env`].
    ///
    /// See the example on [`Proxy`].
    pub fn is_from_env(&self) -> bool {
        self.choice == Choice::Environment
    }

    /// The proxy that requests to `url` go through, its password redacted; `None` when they go
    /// directly (including when `no_proxy` lists the host).
    ///
    /// See the example on [`Proxy`].
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the proxy URL (configured or from the
    /// environment) is malformed, or `url` is not an `http(s)` URL; the message names the
    /// variable it came from.
    pub fn for_url(&self, url: &str) -> Result<Option<String>> {
        Ok(self
            .select(url, &|name| std::env::var(name).ok())?
            .map(|selected| selected.shown()))
    }

    /// The proxy for `url`, reading variables through `env`.
    pub(crate) fn select(
        &self,
        url: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<ProxyUrl>> {
        let target = Target::parse(url)?;
        match &self.choice {
            Choice::None => Ok(None),
            Choice::Url(proxy) => ProxyUrl::parse(proxy, "the configured proxy").map(Some),
            Choice::Environment => {
                let Some((name, value)) = from_environment(target.https, env) else {
                    return Ok(None);
                };
                let bypass = ["no_proxy", "NO_PROXY"]
                    .iter()
                    .find_map(|n| env(n).filter(|v| !v.trim().is_empty()));
                if bypass.is_some_and(|list| bypasses(&list, &target)) {
                    return Ok(None);
                }
                ProxyUrl::parse(&value, name).map(Some)
            }
        }
    }
}

impl fmt::Debug for Proxy {
    /// A configured proxy's password is not shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.choice {
            Choice::Environment => f.write_str("Proxy::from_env()"),
            Choice::None => f.write_str("Proxy::none()"),
            Choice::Url(url) => write!(f, "Proxy::url({:?})", redact::url(url)),
        }
    }
}

/// The variable naming the proxy for an `http(s)` URL, and its value.
fn from_environment(
    https: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<(&'static str, String)> {
    let cgi = env("REQUEST_METHOD").is_some();
    let names: &[&'static str] = match (https, cgi) {
        (true, _) => &["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"],
        (false, false) => &["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"],
        (false, true) => &["http_proxy", "all_proxy", "ALL_PROXY"],
    };
    names.iter().find_map(|name| {
        env(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .map(|v| (*name, v))
    })
}

/// The kind of proxy a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProxyKind {
    /// `CONNECT` over plain HTTP.
    Http,
    /// `CONNECT` over TLS to the proxy.
    Https,
    /// SOCKS5, the server's name resolved here.
    Socks5,
    /// SOCKS5, the name resolved by the proxy.
    Socks5h,
}

/// A proxy URL taken apart.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ProxyUrl {
    pub kind: ProxyKind,
    pub host: String,
    pub port: u16,
    pub user: Option<String>,
    pub password: Option<String>,
    /// Where it came from: an environment variable's name or "the configured proxy".
    pub source: &'static str,
}

impl fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

impl ProxyUrl {
    /// Parses `[scheme://][user[:password]@]host[:port][/]`.
    pub fn parse(text: &str, source: &'static str) -> Result<ProxyUrl> {
        let bad = |why: &str| {
            Error::Config(format!(
                "{source}: `{}` is not a proxy URL: {why}",
                redact::clip(&redact::url(text))
            ))
        };
        let (scheme, rest) = match text.split_once("://") {
            Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
            None => ("http".to_owned(), text),
        };
        let kind = match scheme.as_str() {
            "http" => ProxyKind::Http,
            "https" => ProxyKind::Https,
            "socks5" | "socks" => ProxyKind::Socks5,
            "socks5h" => ProxyKind::Socks5h,
            other => {
                return Err(bad(&format!(
                    "the scheme `{}` is not one of http, https, socks5, socks5h",
                    redact::clip(other)
                )))
            }
        };
        let authority = rest.trim_end_matches('/');
        if authority.contains(['/', '?', '#']) {
            return Err(bad("a proxy URL has no path"));
        }
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((userinfo, hostport)) => (Some(userinfo), hostport),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            Some(info) => {
                let (user, password) = match info.split_once(':') {
                    Some((user, password)) => (user, Some(password)),
                    None => (info, None),
                };
                let decode = |s: &str| percent_decode(s).ok_or_else(|| bad("bad %-encoding"));
                (Some(decode(user)?), password.map(decode).transpose()?)
            }
            None => (None, None),
        };
        let (host, port) = split_host_port(hostport).ok_or_else(|| bad("bad host or port"))?;
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = port.unwrap_or(match kind {
            ProxyKind::Http => 80,
            ProxyKind::Https => 443,
            ProxyKind::Socks5 | ProxyKind::Socks5h => 1080,
        });
        Ok(ProxyUrl {
            kind,
            host: host.to_owned(),
            port,
            user,
            password,
            source,
        })
    }

    /// The URL as shown to people: scheme, user, host and port, the password redacted.
    pub fn shown(&self) -> String {
        let scheme = match self.kind {
            ProxyKind::Http => "http",
            ProxyKind::Https => "https",
            ProxyKind::Socks5 => "socks5",
            ProxyKind::Socks5h => "socks5h",
        };
        let user = match (&self.user, &self.password) {
            (Some(user), Some(_)) => format!("{user}:{}@", redact::REDACTED),
            (Some(user), None) => format!("{user}@"),
            _ => String::new(),
        };
        let host = if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{scheme}://{user}{host}:{}", self.port)
    }
}

/// The parts of a server URL that proxy selection looks at.
#[derive(Debug)]
struct Target {
    https: bool,
    host: String,
    port: u16,
}

impl Target {
    fn parse(url: &str) -> Result<Target> {
        let bad = || {
            Error::Config(format!(
                "not an http(s) URL: `{}`",
                redact::clip(&redact::url(url))
            ))
        };
        let (scheme, rest) = url.split_once("://").ok_or_else(bad)?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            _ => return Err(bad()),
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (host, port) = split_host_port(hostport).ok_or_else(bad)?;
        Ok(Target {
            https,
            host: normalize_host(host),
            port: port.unwrap_or(if https { 443 } else { 80 }),
        })
    }
}

/// `host[:port]` or `[v6][:port]` into the host (without brackets) and the port.
fn split_host_port(text: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(port) => Some((host, Some(port.parse().ok()?))),
            None if after.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match text.rsplit_once(':') {
        // Two colons or more: a bare IPv6 address, which has no port.
        Some((host, _)) if host.contains(':') => Some((text, None)),
        Some((host, port)) => Some((host, Some(port.parse().ok()?))),
        None => Some((text, None)),
    }
}

fn normalize_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether the `no_proxy` list `list` names `target`.
fn bypasses(list: &str, target: &Target) -> bool {
    list.split([',', ' ', '\t'])
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .any(|entry| entry_matches(entry, target))
}

fn entry_matches(entry: &str, target: &Target) -> bool {
    if entry == "*" {
        return true;
    }
    // A CIDR block holds a `/`; its prefix may be an IPv6 address with colons.
    if let Some((net, bits)) = entry.split_once('/') {
        let net = net.trim_start_matches('[').trim_end_matches(']');
        return match (net.parse::<IpAddr>(), bits.parse::<u8>(), ip_of(target)) {
            (Ok(net), Ok(bits), Some(ip)) => in_block(ip, net, bits),
            _ => false,
        };
    }
    let Some((host, port)) = split_host_port(entry) else {
        return false;
    };
    if port.is_some_and(|port| port != target.port) {
        return false;
    }
    let host = normalize_host(host);
    if let Ok(ip) = host.parse::<IpAddr>() {
        return ip_of(target) == Some(ip);
    }
    let name = host.trim_start_matches('*').trim_start_matches('.');
    !name.is_empty()
        && (target.host == name
            || target
                .host
                .strip_suffix(name)
                .is_some_and(|head| head.ends_with('.')))
}

/// The target's host when it is an IP address.
fn ip_of(target: &Target) -> Option<IpAddr> {
    target.host.parse().ok()
}

/// Whether `ip` lies in the block `net/bits`.
fn in_block(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    let (ip, net, width) = match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            (u128::from(u32::from(ip)), u128::from(u32::from(net)), 32u32)
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => (u128::from(ip), u128::from(net), 128),
        (IpAddr::V6(ip), IpAddr::V4(net)) => match ip.to_ipv4_mapped() {
            Some(ip) => (u128::from(u32::from(ip)), u128::from(u32::from(net)), 32),
            None => return false,
        },
        (IpAddr::V4(_), IpAddr::V6(_)) => return false,
    };
    let bits = u32::from(bits);
    if bits > width {
        return false;
    }
    let shift = width - bits;
    shift >= 128 || (ip >> shift) == (net >> shift)
}

/// Decodes `%XX` escapes; `None` for a bad escape or text that is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn chosen(url: &str, vars: &[(&str, &str)]) -> Option<String> {
        Proxy::from_env()
            .select(url, &env(vars))
            .expect("selects")
            .map(|p| p.shown())
    }

    #[test]
    fn the_scheme_picks_the_variable_and_all_proxy_is_the_fallback() {
        let vars = [
            ("http_proxy", "http://plain:1"),
            ("HTTPS_PROXY", "http://secure:2"),
            ("ALL_PROXY", "socks5h://all:3"),
        ];
        assert_eq!(
            chosen("http://a.test/mcp", &vars).as_deref(),
            Some("http://plain:1")
        );
        assert_eq!(
            chosen("https://a.test/mcp", &vars).as_deref(),
            Some("http://secure:2")
        );
        assert_eq!(
            chosen("https://a.test/", &[("ALL_PROXY", "socks5h://all:3")]).as_deref(),
            Some("socks5h://all:3")
        );
        assert_eq!(chosen("https://a.test/", &[]), None);
        assert_eq!(chosen("https://a.test/", &[("https_proxy", "  ")]), None);
        // Lower case wins when both are set.
        let both = [("http_proxy", "lower:1"), ("HTTP_PROXY", "upper:2")];
        assert_eq!(
            chosen("http://a.test/", &both).as_deref(),
            Some("http://lower:1")
        );
    }

    #[test]
    fn a_cgi_request_cannot_set_the_proxy_through_a_header() {
        let vars = [("HTTP_PROXY", "http://evil:1"), ("REQUEST_METHOD", "GET")];
        assert_eq!(chosen("http://a.test/", &vars), None);
        let vars = [("HTTP_PROXY", "http://fine:1")];
        assert_eq!(
            chosen("http://a.test/", &vars).as_deref(),
            Some("http://fine:1")
        );
    }

    #[test]
    fn no_proxy_names_hosts_domains_addresses_blocks_and_ports() {
        let direct = |url: &str, list: &str| {
            let vars = [
                ("https_proxy", "http://p:1"),
                ("http_proxy", "http://p:1"),
                ("no_proxy", list),
            ];
            chosen(url, &vars).is_none()
        };
        assert!(direct("http://example.com/", "example.com"));
        assert!(!direct("http://example.com/", "other.com"));
        assert!(direct("https://anything.test/", "*"));
        assert!(direct("https://example.com/", "example.com"));
        assert!(direct("https://api.example.com/", "example.com"));
        assert!(direct("https://api.example.com/", ".example.com"));
        assert!(direct("https://example.com/", "*.example.com"));
        assert!(direct("https://EXAMPLE.com./", "example.COM"));
        assert!(!direct("https://notexample.com/", "example.com"));
        assert!(!direct("https://example.com.evil.test/", "example.com"));
        assert!(direct("https://10.1.2.3/", "10.1.2.3"));
        assert!(direct("https://10.1.2.3/", "10.0.0.0/8"));
        assert!(!direct("https://11.1.2.3/", "10.0.0.0/8"));
        assert!(direct("https://[::1]:8080/", "::1"));
        assert!(direct("https://[fd00::5]/", "fd00::/8"));
        assert!(!direct("https://[fe80::5]/", "fd00::/8"));
        assert!(direct("https://[::ffff:10.0.0.1]/", "10.0.0.0/8"));
        assert!(direct("https://example.com:8443/", "example.com:8443"));
        assert!(!direct("https://example.com/", "example.com:8443"));
        assert!(direct("https://example.com/", "example.com:443"));
        assert!(direct("https://[::1]:8080/", "[::1]:8080"));
        assert!(!direct("https://[::1]:9090/", "[::1]:8080"));
        assert!(direct("https://b.test/", "a.test, b.test"));
        assert!(direct("https://b.test/", "a.test b.test"));
        // Names are not resolved, and localhost is not special.
        assert!(!direct("https://localhost/", "127.0.0.1"));
        assert!(!direct("https://127.0.0.1/", "localhost"));
        assert!(!direct("https://localhost/", "0.0.0.0/0x"));
        assert!(direct("https://127.0.0.1/", "0.0.0.0/0"));
    }

    #[test]
    fn a_configured_proxy_ignores_the_environment_and_none_means_none() {
        let vars = [("https_proxy", "http://env:1"), ("no_proxy", "*")];
        let configured = Proxy::url("socks5://c:9")
            .select("https://a.test/", &env(&vars))
            .expect("selects");
        assert_eq!(
            configured.map(|p| p.shown()).as_deref(),
            Some("socks5://c:9")
        );
        let none = Proxy::none().select("https://a.test/", &env(&vars));
        assert_eq!(none.expect("selects"), None);
    }

    #[test]
    fn proxy_urls_parse_with_defaults_and_credentials() {
        let p = ProxyUrl::parse("proxy.corp", "x").expect("parses");
        assert_eq!(
            (p.kind, p.host.as_str(), p.port),
            (ProxyKind::Http, "proxy.corp", 80)
        );
        let p = ProxyUrl::parse("HTTPS://u%40x:p%3Ass@[::1]:8443/", "x").expect("parses");
        assert_eq!(
            (p.kind, p.host.as_str(), p.port),
            (ProxyKind::Https, "::1", 8443)
        );
        assert_eq!(p.user.as_deref(), Some("u@x"));
        assert_eq!(p.password.as_deref(), Some("p:ss"));
        assert_eq!(p.shown(), "https://u@x:<redacted>@[::1]:8443");
        assert!(!format!("{p:?}").contains("p:ss"));
        let p = ProxyUrl::parse("socks5h://s", "x").expect("parses");
        assert_eq!((p.kind, p.port), (ProxyKind::Socks5h, 1080));
        for bad in [
            "ftp://p:1",
            "http://p:notaport",
            "http://",
            "http://p:1/path",
            "http://u:%zz@p",
        ] {
            let err = ProxyUrl::parse(bad, "HTTPS_PROXY")
                .expect_err(bad)
                .to_string();
            assert!(err.contains("HTTPS_PROXY"), "{err}");
        }
        let err = ProxyUrl::parse("http://u:hunter2@p:x", "HTTPS_PROXY")
            .expect_err("bad port")
            .to_string();
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn cidr_edges() {
        let v4 = |a: &str| a.parse::<IpAddr>().expect("address");
        assert!(in_block(v4("1.2.3.4"), v4("0.0.0.0"), 0));
        assert!(in_block(v4("1.2.3.4"), v4("1.2.3.4"), 32));
        assert!(!in_block(v4("1.2.3.5"), v4("1.2.3.4"), 32));
        assert!(!in_block(v4("1.2.3.5"), v4("1.2.3.4"), 33));
        assert!(in_block(v4("::1"), v4("::"), 0));
        assert!(!in_block(v4("1.2.3.4"), v4("::"), 0));
    }
}
