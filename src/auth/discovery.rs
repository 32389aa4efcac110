//! Discovery: from a server URL (and its 401 challenge) to the authorization server that
//! protects it, with the resource check of RFC 8707 / RFC 9728.
//!
//! What is followed, and nothing else (redirects never are):
//! - the `resource_metadata` URL of the challenge, when it is https or http on a loopback
//!   host (the rule for every URL credentials or users are sent to); otherwise it is
//!   ignored and the well-known URLs are used;
//! - the path-based, then the root well-known protected resource metadata URL on the
//!   server's own origin;
//! - the first authorization server the metadata names (the first the configuration's
//!   binding allows, when it has one), under the same scheme rule, and its well-known
//!   metadata URLs; the metadata's `issuer` must be identical to that server's
//!   identifier, and is the issuer recorded;
//! - for servers of the 2025-03-26 revision (no resource metadata), the metadata at the
//!   server's own origin, whose `issuer` must be that origin, else the default endpoints
//!   there.
//!
//! A server that is not on this machine may name nothing that is (`localhost`, loopback or
//! unspecified addresses): not its resource metadata URL, nor its authorization server, nor
//! that server's authorization, token or registration endpoint.

use serde::de::DeserializeOwned;

use super::http::{Answer, Http};
use super::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
use super::urls;
use crate::error::{AuthError, AuthStep, WwwAuthenticate};
use crate::redact;

/// What discovery found out about a server.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// The `resource` to send (RFC 8707): the identifier exactly as the protected resource
    /// metadata publishes it (a pathless `http://host` stays without a `/`), else the
    /// canonical URI of the MCP server.
    pub resource: String,
    /// The protected resource metadata, absent for servers of the 2025-03-26 revision.
    pub resource_metadata: Option<ProtectedResourceMetadata>,
    /// The authorization server's issuer as its validated metadata names it (the origin for
    /// the default endpoints); an `iss` in the authorization response is compared with it
    /// exactly, and credentials are bound to it.
    pub issuer: String,
    /// The authorization server metadata, or the default endpoints when none is published.
    pub metadata: AuthorizationServerMetadata,
    /// Whether the metadata was published (false for the default endpoints).
    pub published: bool,
}

/// Finds the authorization server of the MCP server at `server_url`: of several, the first
/// `allowed` accepts, else the first (which the caller then refuses, naming it).
pub(crate) fn discover(
    http: &Http,
    server_url: &str,
    resource: &str,
    challenge: Option<&WwwAuthenticate>,
    protocol_version: Option<&str>,
    allowed: impl Fn(&str) -> bool,
) -> Result<Discovered, AuthError> {
    let Some((prm_url, prm)) = protected_resource(http, server_url, challenge)? else {
        log::debug!(
            "oauth: {} publishes no protected resource metadata; using the 2025-03-26 discovery",
            redact::url(server_url)
        );
        return legacy(http, server_url, resource, protocol_version);
    };
    let declared = declared_resource(server_url, &prm_url, &prm)?.to_owned();
    let servers = &prm.authorization_servers;
    let chosen = servers.iter().find(|s| allowed(s)).or(servers.first());
    let Some(issuer) = chosen.cloned() else {
        return Err(AuthError {
            url: Some(prm_url),
            ..AuthError::new(
                AuthStep::Discovery,
                "the protected resource metadata names no authorization server",
            )
        });
    };
    let (issuer, metadata) = authorization_server(http, server_url, &issuer)?;
    log::debug!(
        "oauth: {} is protected by {}",
        redact::url(server_url),
        redact::url(&issuer)
    );
    Ok(Discovered {
        resource: declared,
        resource_metadata: Some(prm),
        issuer,
        metadata,
        published: true,
    })
}

/// The protected resource metadata of `server_url` and where it was found: at the challenge's
/// `resource_metadata` when that may be followed, else at the well-known URLs.
fn protected_resource(
    http: &Http,
    server_url: &str,
    challenge: Option<&WwwAuthenticate>,
) -> Result<Option<(String, ProtectedResourceMetadata)>, AuthError> {
    let mut candidates = Vec::new();
    if let Some(advertised) = challenge.and_then(|c| c.resource_metadata.as_deref()) {
        match urls::resolve(server_url, advertised).map(|url| followable(server_url, url)) {
            Some(Ok(url)) => candidates.push(url),
            Some(Err(error)) => log::debug!("oauth: not following resource_metadata: {error}"),
            None => log::debug!(
                "oauth: not following the resource_metadata `{}` of {}: not a URL",
                redact::url(advertised),
                redact::url(server_url)
            ),
        }
    }
    for url in urls::protected_resource_metadata_urls(server_url) {
        if !candidates.contains(&url) {
            candidates.push(url);
        }
    }
    first_document(http, &candidates, "protected resource metadata", &[])
}

/// The metadata's `resource`, which must name the server at `server_url` (RFC 9728 §3.3).
fn declared_resource<'a>(
    server_url: &str,
    prm_url: &str,
    prm: &'a ProtectedResourceMetadata,
) -> Result<&'a str, AuthError> {
    let refuse = |message: String| AuthError {
        url: Some(prm_url.to_owned()),
        ..AuthError::new(AuthStep::Discovery, message)
    };
    let Some(declared) = prm.resource.as_deref() else {
        return Err(refuse(
            "the protected resource metadata has no `resource`".into(),
        ));
    };
    if !urls::resource_matches(declared, server_url) {
        return Err(refuse(format!(
            "the protected resource metadata is for `{declared}`, not for `{}`; refusing to \
             authorize",
            redact::url(server_url)
        )));
    }
    Ok(declared)
}

/// The validated issuer and metadata of the authorization server `issuer` that the metadata of
/// the MCP server at `server_url` named.
fn authorization_server(
    http: &Http,
    server_url: &str,
    issuer: &str,
) -> Result<(String, AuthorizationServerMetadata), AuthError> {
    const WHAT: &str = "authorization server";
    urls::check_endpoint(AuthStep::Discovery, WHAT, issuer)?;
    urls::check_not_local(server_url, AuthStep::Discovery, WHAT, issuer)?;
    let metadata_urls = urls::authorization_server_metadata_urls(issuer);
    let found = first_document::<AuthorizationServerMetadata>(
        http,
        &metadata_urls,
        "authorization server metadata",
        &[],
    )?;
    let Some((metadata_url, metadata)) = found else {
        return Err(AuthError::new(
            AuthStep::Discovery,
            format!(
                "no metadata for the authorization server `{issuer}` (tried {})",
                metadata_urls.join(", ")
            ),
        ));
    };
    let issuer = validated_issuer(issuer, &metadata, &metadata_url)?;
    check_endpoints(server_url, &metadata)?;
    Ok((issuer, metadata))
}

/// The discovery of the 2025-03-26 revision: RFC 8414 metadata at the server's origin, else
/// the default endpoints there. The metadata request names the MCP protocol version when it
/// is known, as that revision asks, so the server can answer for it.
fn legacy(
    http: &Http,
    server_url: &str,
    resource: &str,
    protocol_version: Option<&str>,
) -> Result<Discovered, AuthError> {
    let Some(base) = urls::base_url(server_url) else {
        return Err(AuthError::new(
            AuthStep::Discovery,
            format!("not an http(s) URL: `{}`", redact::url(server_url)),
        ));
    };
    let url = format!("{base}/.well-known/oauth-authorization-server");
    let headers: Vec<(&str, &str)> = protocol_version
        .map(|version| ("mcp-protocol-version", version))
        .into_iter()
        .collect();
    let found = first_document::<AuthorizationServerMetadata>(
        http,
        &[url],
        "authorization server metadata",
        &headers,
    )?;
    let (metadata, published) = match found {
        Some((_, metadata)) => (metadata, true),
        None => {
            log::debug!(
                "oauth: no authorization server metadata at {}; using /authorize, /token and \
                 /register",
                redact::url(&base)
            );
            (AuthorizationServerMetadata::fallback(&base), false)
        }
    };
    // RFC 8414 §3.3: the metadata is for the issuer whose well-known URL served it.
    // (A document without `issuer` stands for the origin it was served from.) The URL was
    // built from the MCP server's origin, not from an issuer identifier the server named, so
    // the two are compared as URLs; the exact issuer is still what the `iss` check uses.
    let published_issuer = published && !metadata.issuer.is_empty();
    if published_issuer
        && urls::canonical_resource(&metadata.issuer) != urls::canonical_resource(&base)
    {
        return Err(AuthError::new(
            AuthStep::Discovery,
            format!(
                "the metadata at {shown} names the issuer `{}`, not `{shown}`",
                metadata.issuer,
                shown = redact::url(&base)
            ),
        ));
    }
    check_endpoints(server_url, &metadata)?;
    // The issuer as published (an `iss` in the redirect is compared with it exactly).
    let issuer = if published_issuer {
        metadata.issuer.clone()
    } else {
        base
    };
    Ok(Discovered {
        resource: resource.to_owned(),
        resource_metadata: None,
        issuer,
        metadata,
        published,
    })
}

/// The issuer for the `iss` check (RFC 9207): the metadata's `issuer`, equal to `expected` as
/// strings, not even a trailing slash normalised (RFC 8414 §3.3); other metadata is not used.
fn validated_issuer(
    expected: &str,
    metadata: &AuthorizationServerMetadata,
    metadata_url: &str,
) -> Result<String, AuthError> {
    if metadata.issuer == expected {
        return Ok(metadata.issuer.clone());
    }
    let slash_only = metadata.issuer.trim_end_matches('/') == expected.trim_end_matches('/');
    Err(AuthError {
        url: Some(metadata_url.to_owned()),
        ..AuthError::new(
            AuthStep::Discovery,
            format!(
                "the metadata names the issuer `{}`, not `{expected}`{}",
                metadata.issuer,
                if slash_only {
                    " (issuers must be identical, a trailing slash included)"
                } else {
                    ""
                }
            ),
        )
    })
}

/// `url`, when the advertised metadata URL may be fetched for the server at `server_url`:
/// https, or http on a loopback host; never plain http for an https server, nor a local
/// URL for a server elsewhere.
fn followable(server_url: &str, url: String) -> Result<String, AuthError> {
    const WHAT: &str = "resource metadata URL";
    let downgrade = server_url.to_ascii_lowercase().starts_with("https:")
        && !url.to_ascii_lowercase().starts_with("https:");
    if downgrade {
        return Err(AuthError::new(
            AuthStep::Discovery,
            format!(
                "refusing the {WHAT} `{}`: the server {} is https, the URL is not",
                redact::url(&url),
                redact::url(server_url)
            ),
        ));
    }
    urls::check_endpoint(AuthStep::Discovery, WHAT, &url)?;
    urls::check_not_local(server_url, AuthStep::Discovery, WHAT, &url)?;
    Ok(url)
}

/// Refuses metadata that sends the client to this machine for a server elsewhere: its
/// authorization, token, registration, device authorization and revocation endpoints are where
/// users, grants, registrations and tokens go.
fn check_endpoints(
    server_url: &str,
    metadata: &AuthorizationServerMetadata,
) -> Result<(), AuthError> {
    let endpoints = [
        ("authorization endpoint", &metadata.authorization_endpoint),
        ("token endpoint", &metadata.token_endpoint),
        ("registration endpoint", &metadata.registration_endpoint),
        (
            "device authorization endpoint",
            &metadata.device_authorization_endpoint,
        ),
        ("revocation endpoint", &metadata.revocation_endpoint),
    ];
    for (what, endpoint) in endpoints {
        if let Some(endpoint) = endpoint {
            urls::check_not_local(server_url, AuthStep::Discovery, what, endpoint)?;
        }
    }
    Ok(())
}

/// Fetches `urls` in order, with `headers`, and returns the first document that exists. A
/// 4xx or 5xx answer moves on to the next URL; a document that does not parse is an error.
fn first_document<T: DeserializeOwned>(
    http: &Http,
    urls: &[String],
    what: &str,
    headers: &[(&str, &str)],
) -> Result<Option<(String, T)>, AuthError> {
    for url in urls {
        log::debug!("oauth: fetching {what} from {}", redact::url(url));
        let answer = http.get_with(AuthStep::Discovery, url, headers)?;
        if !answer.is_success() {
            log::debug!(
                "oauth: {} answered HTTP {}",
                redact::url(url),
                answer.status
            );
            continue;
        }
        return parse(&answer, what).map(|doc| Some((url.clone(), doc)));
    }
    Ok(None)
}

fn parse<T: DeserializeOwned>(answer: &Answer, what: &str) -> Result<T, AuthError> {
    serde_json::from_str(&answer.body)
        .map_err(|e| answer.error(AuthStep::Discovery, format!("invalid {what}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(issuer: &str) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: issuer.into(),
            ..AuthorizationServerMetadata::default()
        }
    }

    #[test]
    fn a_remote_servers_metadata_may_not_send_the_client_to_this_machine() {
        let remote = "https://mcp.example.com/mcp";
        let published = |field: &str, endpoint: &str| {
            let mut document = serde_json::json!({
                "issuer": "https://as.example.com",
                "authorization_endpoint": "https://as.example.com/authorize",
                "token_endpoint": "https://as.example.com/token",
                "registration_endpoint": "https://as.example.com/register",
            });
            document[field] = endpoint.into();
            serde_json::from_value::<AuthorizationServerMetadata>(document).unwrap()
        };
        for (field, what) in [
            ("authorization_endpoint", "authorization endpoint"),
            ("token_endpoint", "token endpoint"),
            ("registration_endpoint", "registration endpoint"),
        ] {
            for endpoint in [
                "http://127.0.0.1:6379/x",
                "https://localhost/x",
                "http://[::1]/x",
            ] {
                let metadata = published(field, endpoint);
                let error = check_endpoints(remote, &metadata).expect_err(endpoint);
                assert_eq!(error.step, AuthStep::Discovery);
                assert!(error.message.contains(what), "{}", error.message);
                assert_eq!(error.url.as_deref(), Some(endpoint));
                // The same document is fine for a server on this machine.
                check_endpoints("http://127.0.0.1:3000/mcp", &metadata).unwrap();
            }
        }
        check_endpoints(
            remote,
            &published("token_endpoint", "https://as.example.com/t"),
        )
        .unwrap();
    }

    #[test]
    fn a_remote_servers_challenge_may_not_name_local_metadata() {
        let remote = "https://mcp.example.com/mcp";
        for advertised in [
            "https://127.0.0.1/.well-known/oauth-protected-resource",
            "https://localhost:8443/prm",
            "http://mcp.example.com/prm",
            "http://127.0.0.1/prm",
        ] {
            assert!(
                followable(remote, advertised.into()).is_err(),
                "{advertised}"
            );
        }
        let prm = "https://mcp.example.com/.well-known/oauth-protected-resource";
        assert_eq!(followable(remote, prm.into()).unwrap(), prm);
        let local = "http://localhost:9/prm";
        assert_eq!(
            followable("http://127.0.0.1:8/mcp", local.into()).unwrap(),
            local
        );
    }

    #[test]
    fn the_metadata_issuer_must_be_identical_and_is_the_one_recorded() {
        let url = "https://as.example/.well-known/oauth-authorization-server/t";
        for issuer in ["https://as.example/t", "https://as.example/t/"] {
            assert_eq!(
                validated_issuer(issuer, &metadata(issuer), url).unwrap(),
                issuer
            );
        }
        for (expected, published) in [
            ("https://as.example/t", "https://as.example/t/"),
            ("https://as.example/t/", "https://as.example/t"),
        ] {
            let error = validated_issuer(expected, &metadata(published), url).unwrap_err();
            assert_eq!(error.step, AuthStep::Discovery);
            assert_eq!(error.url.as_deref(), Some(url));
            assert!(
                error.message.contains("trailing slash"),
                "{}",
                error.message
            );
        }
        for published in ["https://AS.example/t", "https://as.example:443/t", ""] {
            let error =
                validated_issuer("https://as.example/t", &metadata(published), url).unwrap_err();
            assert!(
                !error.message.contains("trailing slash"),
                "{}",
                error.message
            );
        }
    }
}
