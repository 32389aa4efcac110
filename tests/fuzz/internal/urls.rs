//! URL handling (the HTTP transport's and the authorization spec's): splitting loses nothing,
//! origins and canonical resource URIs are fixed points, relative references stay on their
//! base's origin without dot segments, endpoint checks let only https or loopback http by.

use super::*;
use crate::transport::http::url;

use crate::fuzz_engine::{Rng, Target};

const DICTIONARY: &[&[u8]] = &[
    b"http://",
    b"https://",
    b"HTTPS://",
    b"//",
    b"/../",
    b"/./",
    b"..",
    b"?",
    b"#",
    b"@",
    b":",
    b":443",
    b":80",
    b"[::1]",
    b"127.0.0.1",
    b"localhost",
    b"%2e%2e",
    b"/.well-known/oauth-protected-resource",
    b"\n",
];

#[test]
fn urls_split_resolve_and_normalise_consistently() {
    Target {
        name: "urls",
        dictionary: DICTIONARY,
        default_cases: 3000,
    }
    .run(check);
}

#[test]
fn a_default_port_is_dropped_only_where_origin_sees_it() {
    // In `h:443:443` the port `origin` sees is `443:443`: the canonical URI keeps it all.
    let u = "https://h:443:443/mcp";
    let c = canonical_resource(u).expect("an http URL");
    assert_eq!(canonical_resource(&c).as_ref(), Some(&c));
    assert!(resource_matches(&c, u), "{c}");
    let ipv6 = canonical_resource("https://[::1]:443/mcp");
    assert_eq!(ipv6.as_deref(), Some("https://[::1]/mcp"));
}

#[test]
fn user_info_without_a_host_has_no_origin() {
    assert_eq!(url::origin("https://user@/mcp"), None);
    assert_eq!(url::origin("x://mcp.example.com@/."), None);
    assert!(!resource_matches("https://a@/mcp", "https://b@/mcp"));
    assert_eq!(
        url::origin("https://user@h/mcp").as_deref(),
        Some("https://h:443")
    );
}

fn check(input: &[u8], rng: &mut Rng) {
    let text = String::from_utf8_lossy(input);
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return;
    }
    for _ in 0..lines.len().min(4) {
        let target = *rng.pick(&lines);
        one(target);
        let base = *rng.pick(&lines);
        resolved(base, target);
    }
}

fn one(u: &str) {
    if let Some(p) = url::parse(u) {
        let whole = format!("{}://{}{}{}", p.scheme, p.authority, p.path, p.query);
        assert_eq!(
            whole,
            u.split('#').next().unwrap_or(u),
            "split lost something"
        );
    }
    if let Some(o) = url::origin(u) {
        assert_eq!(url::origin(&o).as_ref(), Some(&o), "origin of {u}");
    }
    if let Some(c) = canonical_resource(u) {
        assert!(url::is_http(&c), "canonical {c} of {u}");
        assert_eq!(
            canonical_resource(&c).as_ref(),
            Some(&c),
            "canonical of {u}"
        );
        assert!(resource_matches(&c, u), "{c:?} does not match {u:?}");
        assert!(!c.contains(['?', '#']), "query or fragment left in {c}");
    }
    if url::is_http(u) {
        for m in protected_resource_metadata_urls(u) {
            assert_eq!(
                url::origin(&m),
                url::origin(u),
                "{m} leaves the origin of {u}"
            );
        }
    }
    if let Some(h) = host(u) {
        assert!(!h.contains('@'), "user info in host {h} of {u}");
    }
    if check_endpoint(crate::error::AuthStep::Discovery, "endpoint", u).is_ok() {
        let scheme = url::parse(u).map(|p| p.scheme.to_ascii_lowercase());
        let loopback = host(u).is_some_and(|h| is_loopback_host(&h));
        assert!(
            scheme.as_deref() == Some("https") || (scheme.as_deref() == Some("http") && loopback),
            "{u} passed the endpoint check"
        );
    }
    if url::parse(u).is_some() && !u.contains('#') {
        let added = with_query(u, &[("state", "a b&c"), ("x", "")]);
        let form = super::form(&[("state", "a b&c"), ("x", "")]);
        assert!(
            query(&added).ends_with(&form),
            "parameters lost in {added:?}"
        );
    }
}

/// `reference` against `base`: a relative reference stays on the base's origin and its
/// path has no dot segments.
fn resolved(base: &str, reference: &str) {
    let Some(out) = url::resolve(base, reference) else {
        return;
    };
    let r = reference.trim();
    let absolute = r.split_once(':').is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if absolute || r.starts_with("//") || !url::is_http(base) {
        return;
    }
    let parts = url::parse(&out).unwrap_or_else(|| panic!("{out} from {base} + {reference}"));
    assert_eq!(
        url::origin(&out),
        url::origin(base),
        "{out} from {base} + {reference}"
    );
    if !r.is_empty() && !r.starts_with(['?', '#']) {
        assert!(
            !parts.path.split('/').any(|s| s == "." || s == ".."),
            "dot segments left in {out} from {base} + {reference}"
        );
    }
}
