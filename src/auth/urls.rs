//! The URLs of the authorization spec: canonical resource identifiers, well-known metadata
//! locations, and which endpoints may be trusted with credentials.

use super::encoding::form;
use crate::error::{AuthError, AuthStep};
use crate::transport::http::url::{self, Parts};

/// The canonical URI of an MCP server (MCP authorization, "Canonical Server URI"): scheme
/// and host lowercased, default port dropped, no query or fragment, no trailing slash.
pub(crate) fn canonical_resource(server_url: &str) -> Option<String> {
    if !url::is_http(server_url) {
        return None;
    }
    let parts = url::parse(server_url)?;
    let scheme = parts.scheme.to_ascii_lowercase();
    let host = host_port(&parts).to_ascii_lowercase();
    let host = match (scheme.as_str(), host.rsplit_once(':')) {
        // Only after a plain host or an IPv6 literal: in a malformed `h:443:443` the port is
        // not what `origin` sees, and dropping it would make the two disagree.
        ("http", Some((h, "80"))) | ("https", Some((h, "443")))
            if !h.contains(':') || (h.starts_with('[') && h.ends_with(']')) =>
        {
            h.to_owned()
        }
        _ => host,
    };
    let path = parts.path.trim_end_matches('/');
    Some(format!("{scheme}://{host}{path}"))
}

/// Whether the `resource` of protected resource metadata may stand for the server at
/// `server_url`: same origin, and its path is the server's path or a parent of it on a
/// segment boundary (RFC 9728 §3.3, as MCP servers publish it at the origin or the endpoint).
pub(crate) fn resource_matches(resource: &str, server_url: &str) -> bool {
    let (Some(resource_parts), Some(server_parts)) = (url::parse(resource), url::parse(server_url))
    else {
        return false;
    };
    if url::origin(resource) != url::origin(server_url) || url::origin(resource).is_none() {
        return false;
    }
    let prefix = resource_parts.path.trim_end_matches('/');
    let path = server_parts.path.trim_end_matches('/');
    path == prefix || path.starts_with(&format!("{prefix}/"))
}

/// Where the protected resource metadata of `server_url` may be, in the order to try: the
/// path-based well-known URL (when the server URL has a path), then the root one.
pub(crate) fn protected_resource_metadata_urls(server_url: &str) -> Vec<String> {
    let Some(parts) = url::parse(server_url) else {
        return Vec::new();
    };
    let base = format!("{}://{}", parts.scheme, parts.authority);
    let root = format!("{base}/.well-known/oauth-protected-resource");
    let path = parts.path.trim_end_matches('/');
    if path.is_empty() {
        vec![root]
    } else {
        vec![format!("{root}{path}"), root]
    }
}

/// Where the metadata of the authorization server `issuer` may be, in the spec's order:
/// with a path, RFC 8414 path insertion, OpenID Connect path insertion, then OpenID Connect
/// path appending; without one, RFC 8414 then OpenID Connect.
pub(crate) fn authorization_server_metadata_urls(issuer: &str) -> Vec<String> {
    let Some(parts) = url::parse(issuer) else {
        return Vec::new();
    };
    let base = format!("{}://{}", parts.scheme, parts.authority);
    let path = parts.path.trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{base}/.well-known/oauth-authorization-server"),
            format!("{base}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{base}/.well-known/oauth-authorization-server{path}"),
            format!("{base}/.well-known/openid-configuration{path}"),
            format!("{base}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// The origin of `server_url` as a URL (`scheme://authority`), the authorization base URL of
/// the 2025-03-26 revision.
pub(crate) fn base_url(server_url: &str) -> Option<String> {
    let parts = url::parse(server_url)?;
    Some(format!("{}://{}", parts.scheme, parts.authority))
}

/// True for `localhost` and loopback IP literals (127.0.0.0/8, `[::1]`).
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    if host == "localhost" || host == "[::1]" {
        return true;
    }
    host.parse::<std::net::Ipv4Addr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// True for hosts that may reach this machine: `localhost`, `*.localhost`, loopback and
/// unspecified addresses in any form the resolver takes (`127.1`, `2130706433`, IPv4-mapped).
/// Broader than [`is_loopback_host`] on purpose: here a false "no" would be the mistake.
pub(crate) fn is_local_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    if let Some(literal) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        // A zone (`%eth0`) does not change which address it is.
        let address = literal.split('%').next().unwrap_or_default();
        return address.parse::<std::net::Ipv6Addr>().is_ok_and(|ip| {
            ip.is_loopback() || ip.is_unspecified() || ip.to_ipv4_mapped().is_some_and(local_ipv4)
        });
    }
    inet_aton(&host).is_some_and(local_ipv4)
}

fn local_ipv4(ip: std::net::Ipv4Addr) -> bool {
    ip.is_loopback() || ip.is_unspecified()
}

/// An IPv4 address in the forms `inet_aton(3)` reads (one to four parts, each decimal,
/// octal with a leading `0` or hex with `0x`; the last part fills the remaining bytes), as
/// resolvers take a host name that looks like one.
fn inet_aton(host: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut numbers = Vec::with_capacity(parts.len());
    for part in &parts {
        let (digits, radix) =
            if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
                (hex, 16)
            } else if part.len() > 1 && part.starts_with('0') {
                (&part[1..], 8)
            } else {
                (*part, 10)
            };
        if digits.is_empty() && radix != 16 {
            return None;
        }
        let value = if digits.is_empty() {
            0
        } else {
            u32::from_str_radix(digits, radix).ok()?
        };
        numbers.push(value);
    }
    let (last, leading) = numbers.split_last()?;
    if leading.iter().any(|&n| n > 255) {
        return None;
    }
    let rest_bits = 8 * (4 - leading.len() as u32);
    if rest_bits < 32 && *last >= 1 << rest_bits {
        return None;
    }
    let mut address: u32 = 0;
    for (i, &n) in leading.iter().enumerate() {
        address |= n << (24 - 8 * i as u32);
    }
    Some(std::net::Ipv4Addr::from(address | last))
}

/// Refuses a local endpoint named for a server that is not local: a remote server must not make
/// the client post grant forms and registrations to local services. A local server may.
pub(crate) fn check_not_local(
    server_url: &str,
    step: AuthStep,
    what: &str,
    endpoint: &str,
) -> Result<(), AuthError> {
    let local = |url: &str| host(url).is_some_and(|h| is_local_host(&h));
    if !local(endpoint) || local(server_url) {
        return Ok(());
    }
    Err(AuthError {
        url: Some(endpoint.to_owned()),
        ..AuthError::new(
            step,
            format!(
                "refusing the {what} `{}`: it is on this machine, and the server {} is not",
                crate::redact::url(endpoint),
                crate::redact::url(server_url)
            ),
        )
    })
}

/// Whether two issuers name the same server: equal but for scheme and host case, a default port
/// and a trailing slash, as a person configuring one may vary. Metadata still needs the exact one.
pub(crate) fn same_issuer(configured: &str, discovered: &str) -> bool {
    if configured == discovered {
        return true;
    }
    // An issuer has no query or fragment (RFC 8414 §2), which the canonical form would drop.
    let plain = |issuer: &str| !issuer.contains(['?', '#']);
    plain(configured)
        && plain(discovered)
        && matches!(
            (canonical_resource(configured), canonical_resource(discovered)),
            (Some(a), Some(b)) if a == b
        )
}

/// The host of an absolute URL, without port or user info.
pub(crate) fn host(target: &str) -> Option<String> {
    let parts = url::parse(target)?;
    let host_port = host_port(&parts);
    let host = if host_port.starts_with('[') {
        match host_port.find(']') {
            Some(end) => &host_port[..=end],
            None => host_port,
        }
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    Some(host.to_owned())
}

/// Refuses an endpoint that credentials would be sent to, or a user sent to, unless it is
/// `https`, or plain `http` on a loopback host (for development).
pub(crate) fn check_endpoint(step: AuthStep, what: &str, endpoint: &str) -> Result<(), AuthError> {
    let scheme = url::parse(endpoint).map(|p| p.scheme.to_ascii_lowercase());
    let allowed = match scheme.as_deref() {
        Some("https") => url::is_http(endpoint),
        Some("http") => {
            url::is_http(endpoint) && host(endpoint).is_some_and(|h| is_loopback_host(&h))
        }
        _ => false,
    };
    if allowed {
        Ok(())
    } else {
        Err(AuthError::new(
            step,
            format!(
                "refusing the {what} `{endpoint}`: it must be https (or http on a loopback host)"
            ),
        ))
    }
}

/// Refuses a redirect URI that is not `http` on a loopback host (RFC 8252 §7.3).
pub(crate) fn check_redirect_uri(redirect_uri: &str) -> Result<(), AuthError> {
    let is_http = url::parse(redirect_uri).is_some_and(|p| p.scheme.eq_ignore_ascii_case("http"));
    if is_http
        && url::is_http(redirect_uri)
        && host(redirect_uri).is_some_and(|h| is_loopback_host(&h))
    {
        Ok(())
    } else {
        Err(AuthError::new(
            AuthStep::Authorization,
            format!("the redirect URI `{redirect_uri}` is not an http URI on a loopback host"),
        ))
    }
}

/// `endpoint` with `params` added to its query.
pub(crate) fn with_query(endpoint: &str, params: &[(&str, &str)]) -> String {
    let (base, fragment) = match endpoint.find('#') {
        Some(i) => (&endpoint[..i], &endpoint[i..]),
        None => (endpoint, ""),
    };
    let separator = if !base.contains('?') {
        "?"
    } else if base.ends_with('?') || base.ends_with('&') {
        ""
    } else {
        "&"
    };
    format!("{base}{separator}{}{fragment}", form(params))
}

/// The query of an absolute URL, without the `?`.
pub(crate) fn query(target: &str) -> &str {
    url::parse(target)
        .map(|p| p.query.trim_start_matches('?'))
        .unwrap_or_default()
}

/// Resolves a reference (a redirect `Location`) against an absolute URL.
pub(crate) fn resolve(base: &str, reference: &str) -> Option<String> {
    url::resolve(base, reference)
}

/// `host[:port]` of a URL's authority, without user info.
fn host_port<'a>(parts: &Parts<'a>) -> &'a str {
    parts.authority.rsplit('@').next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_resource_normalises_case_port_and_slash() {
        let cases = [
            (
                "HTTPS://MCP.Example.com:443/mcp/",
                "https://mcp.example.com/mcp",
            ),
            (
                "http://localhost:3000/mcp?x=1#f",
                "http://localhost:3000/mcp",
            ),
            ("http://h:80", "http://h"),
            ("http://[::1]:8080/a", "http://[::1]:8080/a"),
        ];
        for (input, want) in cases {
            assert_eq!(canonical_resource(input).as_deref(), Some(want), "{input}");
        }
        assert_eq!(canonical_resource("ftp://h/x"), None);
    }

    #[test]
    fn resource_matches_same_origin_and_parent_paths_only() {
        let server = "http://localhost:3000/mcp";
        assert!(resource_matches("http://localhost:3000/mcp", server));
        assert!(resource_matches("http://localhost:3000", server));
        assert!(resource_matches("http://LOCALHOST:3000/", server));
        assert!(!resource_matches("http://localhost:3000/mc", server));
        assert!(!resource_matches("http://localhost:3000/mcp/v2", server));
        assert!(!resource_matches("https://evil.example.com/mcp", server));
        assert!(!resource_matches("http://localhost:3001/mcp", server));
        assert!(!resource_matches("not a url", server));
    }

    #[test]
    fn protected_resource_metadata_is_tried_path_first() {
        assert_eq!(
            protected_resource_metadata_urls("http://h:1/mcp/"),
            [
                "http://h:1/.well-known/oauth-protected-resource/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            protected_resource_metadata_urls("http://h:1"),
            ["http://h:1/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn authorization_server_metadata_follows_the_spec_order() {
        assert_eq!(
            authorization_server_metadata_urls("https://as.example/tenant1"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            authorization_server_metadata_urls("https://as.example/"),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn endpoints_need_https_except_on_loopback() {
        let ok = |u| check_endpoint(AuthStep::Discovery, "endpoint", u).is_ok();
        assert!(ok("https://as.example/authorize"));
        assert!(ok("http://localhost:9/authorize"));
        assert!(ok("http://127.0.0.1/authorize"));
        assert!(ok("http://[::1]:8/authorize"));
        assert!(!ok("http://as.example/authorize"));
        assert!(!ok("http://localhost.evil.example/authorize"));
        assert!(!ok("javascript:alert(1)"));
        assert!(!ok("file:///etc/passwd"));
    }

    #[test]
    fn local_hosts_are_recognised_in_every_spelling() {
        for host in [
            "localhost",
            "LOCALHOST.",
            "app.localhost",
            "127.0.0.1",
            "127.9.9.9",
            "127.1",
            "0x7f.0.0.1",
            "0177.0.0.1",
            "2130706433",
            "0.0.0.0",
            "0",
            "[::1]",
            "[0:0:0:0:0:0:0:1]",
            "[::]",
            "[::ffff:127.0.0.1]",
            "[::1%25lo]",
        ] {
            assert!(is_local_host(host), "{host} is local");
        }
        for host in [
            "example.com",
            "localhost.example.com",
            "128.0.0.1",
            "10.0.0.1",
            "1.2.3.4.5",
            "127.0.0.256",
            "[2001:db8::1]",
            "[::ffff:10.0.0.1]",
        ] {
            assert!(!is_local_host(host), "{host} is not local");
        }
    }

    #[test]
    fn a_remote_server_may_not_name_local_endpoints() {
        let check = |server, endpoint| {
            check_not_local(server, AuthStep::Discovery, "token endpoint", endpoint)
        };
        let refused = check("https://mcp.example.com/mcp", "http://127.0.0.1:8080/token")
            .expect_err("a remote server naming a local endpoint");
        assert!(
            refused.message.contains("token endpoint"),
            "{}",
            refused.message
        );
        assert_eq!(refused.url.as_deref(), Some("http://127.0.0.1:8080/token"));
        assert!(check("https://mcp.example.com/mcp", "https://localhost/token").is_err());
        assert!(check("https://mcp.example.com/mcp", "https://[::1]/token").is_err());
        assert!(check(
            "https://mcp.example.com/mcp",
            "https://as.example.com/token"
        )
        .is_ok());
        assert!(check("http://127.0.0.1:3000/mcp", "http://localhost:4000/token").is_ok());
        assert!(check("http://localhost:3000/mcp", "https://as.example.com/token").is_ok());
    }

    #[test]
    fn issuers_compare_as_written_in_a_configuration() {
        assert!(same_issuer("https://as.example/t", "https://as.example/t"));
        assert!(same_issuer(
            "https://AS.example:443/t/",
            "https://as.example/t"
        ));
        assert!(same_issuer("http://127.0.0.1:9", "http://127.0.0.1:9/"));
        assert!(!same_issuer("https://as.example/t", "https://as.example/u"));
        assert!(!same_issuer("https://as.example", "https://evil.example"));
        assert!(!same_issuer("https://as.example", "http://as.example"));
        assert!(!same_issuer(
            "https://as.example:8443",
            "https://as.example"
        ));
        assert!(!same_issuer("https://as.example?x=1", "https://as.example"));
        assert!(!same_issuer("", "https://as.example"));
    }

    #[test]
    fn redirect_uris_must_be_loopback_http() {
        assert!(check_redirect_uri("http://127.0.0.1:8123/callback").is_ok());
        assert!(check_redirect_uri("http://localhost/cb").is_ok());
        assert!(check_redirect_uri("https://app.example/cb").is_err());
        assert!(check_redirect_uri("http://app.example/cb").is_err());
        assert!(check_redirect_uri("myapp:/cb").is_err());
    }

    #[test]
    fn queries_are_appended_with_the_right_separator() {
        let params = [("a", "1 2")];
        assert_eq!(with_query("http://h/x", &params), "http://h/x?a=1%202");
        assert_eq!(
            with_query("http://h/x?b=2", &params),
            "http://h/x?b=2&a=1%202"
        );
        assert_eq!(with_query("http://h/x?", &params), "http://h/x?a=1%202");
        assert_eq!(query("http://h/cb?code=1&state=2"), "code=1&state=2");
        assert_eq!(host("http://u@[::1]:9/").as_deref(), Some("[::1]"));
    }
}

#[cfg(test)]
#[path = "../../tests/fuzz/internal/urls.rs"]
mod fuzz;
