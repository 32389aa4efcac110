//! Just enough URL handling for HTTP transports: splitting, origins and relative references.

/// The parts of an absolute `http`/`https` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parts<'a> {
    /// The scheme, as written.
    pub scheme: &'a str,
    /// `host[:port]` (user info included when present).
    pub authority: &'a str,
    /// The path, possibly empty.
    pub path: &'a str,
    /// The query with its `?`, or empty.
    pub query: &'a str,
}

/// Splits an absolute URL; `None` when it has no scheme or no authority.
pub(crate) fn parse(url: &str) -> Option<Parts<'_>> {
    let url = url.split('#').next().unwrap_or(url);
    let colon = url.find(':')?;
    let scheme = &url[..colon];
    if !is_scheme(scheme) {
        return None;
    }
    let rest = url[colon + 1..].strip_prefix("//")?;
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    if authority.is_empty() {
        return None;
    }
    let rest = &rest[authority_end..];
    let query_start = rest.find('?').unwrap_or(rest.len());
    Some(Parts {
        scheme,
        authority,
        path: &rest[..query_start],
        query: &rest[query_start..],
    })
}

/// True for `http://…` and `https://…` URLs with a host.
pub(crate) fn is_http(url: &str) -> bool {
    parse(url).is_some_and(|p| {
        let scheme = p.scheme.to_ascii_lowercase();
        let host = p.authority.rsplit('@').next().unwrap_or_default();
        (scheme == "http" || scheme == "https") && !host.is_empty() && !host.starts_with(':')
    })
}

/// The origin (`scheme://host:port`, lowercase, default ports made explicit) of a URL.
pub(crate) fn origin(url: &str) -> Option<String> {
    let parts = parse(url)?;
    let scheme = parts.scheme.to_ascii_lowercase();
    // `user@` alone names no host, and so no origin to compare.
    let host_port = parts
        .authority
        .rsplit('@')
        .next()
        .filter(|h| !h.is_empty())?
        .to_ascii_lowercase();
    // A port follows the last colon unless that colon is inside an IPv6 literal.
    let has_port = host_port
        .rfind(':')
        .is_some_and(|i| !host_port[i..].contains(']'));
    let default_port = match scheme.as_str() {
        "http" => "80",
        "https" => "443",
        _ => "",
    };
    Some(if has_port || default_port.is_empty() {
        format!("{scheme}://{host_port}")
    } else {
        format!("{scheme}://{host_port}:{default_port}")
    })
}

/// Resolves `reference` against the absolute URL `base` (RFC 3986 §5.2, for the forms
/// servers use: absolute URL, `//authority…`, absolute path, relative path, query only).
pub(crate) fn resolve(base: &str, reference: &str) -> Option<String> {
    let reference = reference.trim();
    if let Some(colon) = reference.find(':') {
        if is_scheme(&reference[..colon]) {
            return Some(reference.to_owned());
        }
    }
    let base = parse(base)?;
    if reference.starts_with("//") {
        return Some(format!("{}:{reference}", base.scheme));
    }
    let (reference, fragment) = match reference.find('#') {
        Some(i) => (&reference[..i], &reference[i..]),
        None => (reference, ""),
    };
    let prefix = format!("{}://{}", base.scheme, base.authority);
    if reference.is_empty() {
        return Some(format!("{prefix}{}{}{fragment}", base.path, base.query));
    }
    if reference.starts_with('?') {
        return Some(format!("{prefix}{}{reference}{fragment}", base.path));
    }
    let (path, query) = match reference.find('?') {
        Some(i) => (&reference[..i], &reference[i..]),
        None => (reference, ""),
    };
    let merged = if path.starts_with('/') {
        path.to_owned()
    } else {
        let dir = match base.path.rfind('/') {
            Some(i) => &base.path[..=i],
            None => "/",
        };
        format!("{dir}{path}")
    };
    Some(format!(
        "{prefix}{}{query}{fragment}",
        remove_dot_segments(&merged)
    ))
}

fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Removes `.` and `..` segments from an absolute path.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "http://127.0.0.1:8080/mcp/sse?token=1";

    #[test]
    fn resolves_each_reference_form() {
        let cases = [
            (
                "/messages?sessionId=abc",
                "http://127.0.0.1:8080/messages?sessionId=abc",
            ),
            ("messages?s=1", "http://127.0.0.1:8080/mcp/messages?s=1"),
            ("../messages", "http://127.0.0.1:8080/messages"),
            ("./a/./b/../c", "http://127.0.0.1:8080/mcp/a/c"),
            ("?sessionId=x", "http://127.0.0.1:8080/mcp/sse?sessionId=x"),
            ("", "http://127.0.0.1:8080/mcp/sse?token=1"),
            ("https://other.example/m", "https://other.example/m"),
            ("//other.example/m", "http://other.example/m"),
            ("/../../x", "http://127.0.0.1:8080/x"),
            ("  /padded  ", "http://127.0.0.1:8080/padded"),
        ];
        for (reference, want) in cases {
            assert_eq!(
                resolve(BASE, reference).as_deref(),
                Some(want),
                "{reference}"
            );
        }
        assert_eq!(resolve("http://h", "m").as_deref(), Some("http://h/m"));
        assert_eq!(resolve("not a url", "/m"), None);
    }

    #[test]
    fn origins_normalise_case_and_default_ports() {
        assert_eq!(
            origin("HTTP://Example.COM/a").as_deref(),
            Some("http://example.com:80")
        );
        assert_eq!(origin("https://e.com:443/a"), origin("https://e.com/b?c"));
        assert_ne!(origin("http://e.com:8080/"), origin("http://e.com/"));
        assert_ne!(origin("http://e.com/"), origin("https://e.com/"));
        assert_eq!(origin("http://[::1]/x").as_deref(), Some("http://[::1]:80"));
        assert_eq!(
            origin("http://[::1]:9/x").as_deref(),
            Some("http://[::1]:9")
        );
        assert_eq!(
            origin("http://u:p@e.com/x").as_deref(),
            Some("http://e.com:80")
        );
    }

    #[test]
    fn only_http_urls_with_a_host_are_accepted() {
        assert!(is_http("http://127.0.0.1:1/mcp"));
        assert!(is_http("https://example.com"));
        for bad in [
            "ftp://x/",
            "http:/x",
            "http://",
            "localhost:8080/mcp",
            "",
            "http://:80/",
        ] {
            assert!(!is_http(bad), "{bad}");
        }
    }

    #[test]
    fn parse_splits_path_and_query() {
        let p = parse("http://h:1/a/b?x=1#frag").unwrap();
        assert_eq!(
            (p.scheme, p.authority, p.path, p.query),
            ("http", "h:1", "/a/b", "?x=1")
        );
        let p = parse("http://h?x").unwrap();
        assert_eq!((p.path, p.query), ("", "?x"));
    }
}
