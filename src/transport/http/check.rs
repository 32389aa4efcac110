//! Checking the way to an HTTP server step by step, for a person diagnosing it (`umcp doctor`):
//! which proxy applies, the name lookup, the TCP connection, the tunnel and TLS, and an HTTP
//! answer; each step with what it found and, when it failed, what to do.

use std::fmt;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crossbeam_channel::RecvTimeoutError;
use ureq::Agent;

use super::route::Route;
use super::tls::{self, Seen};
use super::HttpConfig;
use crate::error::Error;

/// A step of [`HttpConfig::check_network`].
///
/// See the example on [`HttpConfig::check_network`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NetworkStep {
    /// Which proxy the URL takes, if any (or the Unix socket).
    Proxy,
    /// Looking up the first hop's name: the proxy's, or the server's.
    Dns,
    /// A TCP connection to the first hop (or connecting to the Unix socket).
    Tcp,
    /// The tunnel through the proxy, and TLS: the certificate chain, its issuer and expiry, the
    /// roots trusted, a client certificate asked for.
    Tls,
    /// An HTTP answer from the URL (any status: the endpoint answers `GET` as it likes).
    Http,
}

impl NetworkStep {
    /// The step's name: `proxy`, `dns`, `tcp`, `tls`, `http`.
    ///
    /// See the example on [`HttpConfig::check_network`].
    pub fn as_str(&self) -> &'static str {
        match self {
            NetworkStep::Proxy => "proxy",
            NetworkStep::Dns => "dns",
            NetworkStep::Tcp => "tcp",
            NetworkStep::Tls => "tls",
            NetworkStep::Http => "http",
        }
    }
}

impl fmt::Display for NetworkStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one step of [`HttpConfig::check_network`] found.
///
/// See the example on [`HttpConfig::check_network`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NetworkCheck {
    /// The step.
    pub step: NetworkStep,
    /// Whether it passed.
    pub ok: bool,
    /// What it found, in a line or a few (a TLS step lists the chain).
    pub detail: String,
    /// What to do about a failure, when something can be said.
    pub fix: Option<String>,
}

impl NetworkCheck {
    fn pass(step: NetworkStep, detail: impl Into<String>) -> NetworkCheck {
        NetworkCheck {
            step,
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }

    fn fail(step: NetworkStep, detail: impl Into<String>, fix: Option<String>) -> NetworkCheck {
        NetworkCheck {
            step,
            ok: false,
            detail: detail.into(),
            fix: fix.filter(|f| !f.is_empty()),
        }
    }
}

impl HttpConfig {
    /// Checks the way to the server in order — [`NetworkStep::Proxy`], `Dns`, `Tcp`, `Tls` (for
    /// `https` URLs and `https` proxies) and `Http` — and returns what each found, stopping
    /// after the first that fails. Each step ends within `timeout`. Nothing MCP is sent: the
    /// `Http` step is a `GET` of the URL whose status is reported, whatever it is.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use umcp::{HttpConfig, NetworkStep};
    ///
    /// let checks = HttpConfig::new("https://mcp.example.com/mcp").check_network(Duration::from_secs(5));
    /// for check in &checks {
    ///     let mark = if check.ok { "ok  " } else { "FAIL" };
    ///     println!("{mark} {:5} {}", check.step.as_str(), check.detail);
    ///     if let Some(fix) = &check.fix {
    ///         println!("     fix: {fix}");
    ///     }
    /// }
    /// let usable = checks.iter().all(|c| c.ok) && checks.iter().any(|c| c.step == NetworkStep::Http);
    /// # let _ = usable;
    /// ```
    pub fn check_network(&self, timeout: Duration) -> Vec<NetworkCheck> {
        let mut checks = Vec::new();
        let route = match Route::new(&self.network, &self.url) {
            Ok(route) => route,
            Err(e) => {
                checks.push(NetworkCheck::fail(NetworkStep::Proxy, e.to_string(), None));
                return checks;
            }
        };
        checks.push(NetworkCheck::pass(
            NetworkStep::Proxy,
            describe_route(&route),
        ));
        if let Some(path) = &route.unix_socket {
            let connected = unix_connect(path);
            let ok = connected.is_ok();
            checks.push(match connected {
                Ok(()) => {
                    NetworkCheck::pass(NetworkStep::Tcp, format!("Unix socket {}", path.display()))
                }
                Err(e) => NetworkCheck::fail(
                    NetworkStep::Tcp,
                    format!("Unix socket {}: {e}", path.display()),
                    Some("start the server, or check the socket's path and permissions".into()),
                ),
            });
            if !ok {
                return checks;
            }
        } else if !first_hop(self, &route, timeout, &mut checks) {
            return checks;
        }
        exchange(self, &route, timeout, &mut checks);
        checks
    }
}

/// The route in words.
fn describe_route(route: &Route) -> String {
    match (&route.unix_socket, &route.proxy) {
        (Some(path), _) => format!("none: the Unix socket {}", path.display()),
        (None, Some(proxy)) => format!("{} (from {})", proxy.shown(), proxy.source),
        (None, None) => "none: a direct connection".to_owned(),
    }
}

/// The DNS and TCP steps to the first hop; whether both passed.
fn first_hop(
    config: &HttpConfig,
    route: &Route,
    timeout: Duration,
    checks: &mut Vec<NetworkCheck>,
) -> bool {
    let (host, port, what) = match &route.proxy {
        Some(proxy) => (proxy.host.clone(), proxy.port, "the proxy"),
        None => match host_port(&config.url) {
            Some((host, port)) => (host, port, "the server"),
            None => {
                let detail = format!(
                    "cannot read the host of {}",
                    crate::redact::url(&config.url)
                );
                checks.push(NetworkCheck::fail(NetworkStep::Dns, detail, None));
                return false;
            }
        },
    };
    let addrs = match resolve(&host, port, timeout) {
        Ok(addrs) if !addrs.is_empty() => addrs,
        Ok(_) | Err(_) => {
            checks.push(NetworkCheck::fail(
                NetworkStep::Dns,
                format!("{host} ({what}) does not resolve"),
                Some(format!(
                    "check the name of {what}, and this machine's DNS settings"
                )),
            ));
            return false;
        }
    };
    let shown: Vec<String> = addrs.iter().take(4).map(|a| a.ip().to_string()).collect();
    checks.push(NetworkCheck::pass(
        NetworkStep::Dns,
        format!("{host} ({what}) is {}", shown.join(", ")),
    ));
    let mut last = String::new();
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, timeout) {
            Ok(_) => {
                checks.push(NetworkCheck::pass(
                    NetworkStep::Tcp,
                    format!("connected to {addr} ({what})"),
                ));
                return true;
            }
            Err(e) => last = format!("{addr}: {e}"),
        }
    }
    checks.push(NetworkCheck::fail(
        NetworkStep::Tcp,
        format!("no connection to {what}: {last}"),
        Some(format!(
            "check that {what} runs and listens on port {port}, and that no firewall blocks it"
        )),
    ));
    false
}

/// The TLS and HTTP steps: a `GET` through the route's own connector chain.
fn exchange(config: &HttpConfig, route: &Route, timeout: Duration, checks: &mut Vec<NetworkCheck>) {
    let agent = super::socket::agent(
        Agent::config_builder()
            .proxy(route.ureq_proxy())
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(timeout))
            .user_agent(concat!("umcp/", env!("CARGO_PKG_VERSION")))
            .build(),
        route,
    );
    let started = Instant::now();
    let (answer, seen) = tls::recording(|| {
        agent
            .get(&config.url)
            .header("accept", "text/event-stream, application/json")
            .call()
    });
    let tls_used = !seen.is_empty() || config.url.starts_with("https:");
    match answer {
        Ok(response) => {
            if tls_used {
                checks.push(NetworkCheck::pass(NetworkStep::Tls, describe_tls(&seen)));
            }
            let status = response.status();
            checks.push(NetworkCheck::pass(
                NetworkStep::Http,
                format!(
                    "GET answered {} {} in {:.0?}",
                    status.as_u16(),
                    status.canonical_reason().unwrap_or(""),
                    started.elapsed()
                ),
            ));
            // The body of an event stream would never end: the agent is dropped unread.
        }
        Err(e) => {
            let error = super::wire::map_error(e, "GET", started, super::wire::Phase::Headers);
            let step = match &error {
                Error::Network(_) => NetworkStep::Tls,
                _ if tls_used && seen.is_empty() => NetworkStep::Tls,
                _ => NetworkStep::Http,
            };
            if step == NetworkStep::Http && tls_used {
                checks.push(NetworkCheck::pass(NetworkStep::Tls, describe_tls(&seen)));
            }
            let fix = match &error {
                Error::Network(network) => Some(network.remedy().to_owned()),
                Error::Timeout { .. } if route.proxy.is_some() => Some(
                    "the proxy holds the answer back, or cannot reach the server: ask its \
                     administrators, or list the host in no_proxy if it can be reached directly"
                        .to_owned(),
                ),
                _ => None,
            };
            // The remedy is the check's fix, not repeated in its detail.
            let mut detail = error.to_string();
            if let Some(remedy) = fix.as_deref().filter(|f| !f.is_empty()) {
                if let Some(kept) = detail.strip_suffix(&format!("; {remedy}")) {
                    detail = kept.to_owned();
                }
            }
            checks.push(NetworkCheck::fail(step, detail, fix));
        }
    }
}

/// The chains seen, in lines: each certificate's subject, issuer and validity, then the roots.
fn describe_tls(seen: &[Seen]) -> String {
    let mut lines = Vec::new();
    for handshake in seen {
        lines.push(format!(
            "{}: verified against {}",
            handshake.host, handshake.roots
        ));
        for (i, certificate) in handshake.chain.iter().enumerate() {
            lines.push(format!("  [{i}] {certificate}"));
        }
        if handshake.client_certificate_asked {
            lines.push("  the server asked for a client certificate".to_owned());
        }
    }
    if lines.is_empty() {
        lines.push("a connection reused: no new handshake".to_owned());
    }
    lines.join("\n")
}

/// The host and port of an `http(s)` URL.
fn host_port(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let default = if scheme.eq_ignore_ascii_case("https") {
        443
    } else {
        80
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = after
            .strip_prefix(':')
            .map_or(Some(default), |p| p.parse().ok())?;
        return Some((host.to_owned(), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host.to_owned(), port.parse().ok()?)),
        None => Some((authority.to_owned(), default)),
    }
}

/// Looks `host` up within `timeout`. The system resolver cannot be interrupted: a lookup that
/// outlives the timeout is left to finish on its own thread, which then ends.
fn resolve(host: &str, port: u16, timeout: Duration) -> Result<Vec<SocketAddr>, String> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let (tx, rx) = crossbeam_channel::bounded(1);
    let name = host.to_owned();
    std::thread::Builder::new()
        .name("umcp-check-dns".into())
        .spawn(move || {
            let found = (name.as_str(), port)
                .to_socket_addrs()
                .map(Iterator::collect::<Vec<_>>)
                .map_err(|e| e.to_string());
            let _ = tx.send(found);
        })
        .map_err(|e| e.to_string())?;
    match rx.recv_timeout(timeout) {
        Ok(found) => found,
        Err(RecvTimeoutError::Timeout) => Err(format!("no answer within {timeout:?}")),
        Err(RecvTimeoutError::Disconnected) => Err("the lookup failed".to_owned()),
    }
}

#[cfg(unix)]
fn unix_connect(path: &std::path::Path) -> std::io::Result<()> {
    std::os::unix::net::UnixStream::connect(path).map(drop)
}

#[cfg(not(unix))]
fn unix_connect(_path: &std::path::Path) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "Unix domain sockets are not supported on this platform",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_of_urls() {
        assert_eq!(
            host_port("https://h.test/mcp"),
            Some(("h.test".into(), 443))
        );
        assert_eq!(
            host_port("http://u:p@h.test:8080/x?y"),
            Some(("h.test".into(), 8080))
        );
        assert_eq!(host_port("http://[::1]:9/"), Some(("::1".into(), 9)));
        assert_eq!(host_port("https://[::1]/"), Some(("::1".into(), 443)));
        assert_eq!(host_port("nonsense"), None);
    }

    #[test]
    fn a_refused_port_fails_at_tcp_and_an_unknown_name_at_dns() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let checks = HttpConfig::new(format!("http://127.0.0.1:{port}/mcp"))
            .proxy(super::super::Proxy::none())
            .check_network(Duration::from_secs(5));
        let steps: Vec<_> = checks.iter().map(|c| (c.step, c.ok)).collect();
        assert_eq!(
            steps,
            [
                (NetworkStep::Proxy, true),
                (NetworkStep::Dns, true),
                (NetworkStep::Tcp, false)
            ],
            "{checks:?}"
        );
        let checks = HttpConfig::new("http://no-such-host.invalid/mcp")
            .proxy(super::super::Proxy::none())
            .check_network(Duration::from_secs(5));
        assert_eq!(
            checks.last().map(|c| (c.step, c.ok)),
            Some((NetworkStep::Dns, false))
        );
        let bad = HttpConfig::new("http://h.test/mcp")
            .proxy(super::super::Proxy::url("ftp://p"))
            .check_network(Duration::from_secs(1));
        assert_eq!(bad.len(), 1);
        assert!(!bad[0].ok && bad[0].detail.contains("ftp"), "{bad:?}");
    }
}
