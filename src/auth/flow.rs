//! The authorization code flow with PKCE S256: the authorization request, the checks of the
//! redirect (`state`, RFC 9207 `iss`), and the code's redemption.

use super::discovery::Discovered;
use super::encoding::{parse_query, redact_url};
use super::handler::AuthorizationHandler;
use super::http::Http;
use super::pkce::{random_string, Pkce};
use super::store::TokenSet;
use super::tokens::{self, ClientAuth};
use super::urls;
use crate::error::{AuthError, AuthStep, Error, Result};
use crate::transport::http::provider_deadline;

/// Runs the authorization code flow for `scope` and returns the tokens.
pub(crate) fn authorization_code(
    http: &Http,
    discovered: &Discovered,
    client: &ClientAuth,
    handler: &dyn AuthorizationHandler,
    redirect_uri: &str,
    scope: Option<&str>,
) -> Result<TokenSet> {
    let metadata = &discovered.metadata;
    if discovered.published {
        match &metadata.code_challenge_methods_supported {
            None => {
                return Err(refuse(format!(
                    "{} does not advertise code_challenge_methods_supported, so PKCE is not \
                     assured; refusing to authorize",
                    discovered.issuer
                )))
            }
            Some(methods) if !methods.iter().any(|m| m == "S256") => {
                return Err(refuse(format!(
                    "{} does not support the PKCE method S256 (only {})",
                    discovered.issuer,
                    methods.join(", ")
                )))
            }
            Some(_) => {}
        }
    }
    let (Some(endpoint), Some(token_endpoint)) = (
        metadata.authorization_endpoint.as_deref(),
        metadata.token_endpoint.as_deref(),
    ) else {
        return Err(refuse(format!(
            "{} lacks an authorization_endpoint or a token_endpoint",
            discovered.issuer
        )));
    };
    urls::check_endpoint(AuthStep::Authorization, "authorization endpoint", endpoint)?;
    urls::check_redirect_uri(redirect_uri)?;
    let pkce = Pkce::new()?;
    let state = random_string(32)?;
    let mut params = vec![
        ("response_type", "code"),
        ("client_id", client.client_id.as_str()),
        ("redirect_uri", redirect_uri),
        ("code_challenge", pkce.challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("state", state.as_str()),
        ("resource", discovered.resource.as_str()),
    ];
    if let Some(scope) = scope {
        params.push(("scope", scope));
    }
    let url = urls::with_query(endpoint, &params);
    log::debug!("oauth: authorization request {}", redact_url(&url));
    let redirect = handler.authorize(&url)?;
    log::debug!("oauth: redirected to {}", redact_url(&redirect));
    let code = check_redirect(discovered, &redirect, &state)?;
    let params = vec![
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", redirect_uri),
        ("code_verifier", pkce.verifier.as_str()),
        ("resource", discovered.resource.as_str()),
    ];
    // The user took the time they took: the exchange gets the call's budget afresh.
    Ok(provider_deadline::after_user(|| {
        tokens::request(http, token_endpoint, params, Some(client), scope)
    })?)
}

/// Checks the authorization response and returns its code. The issuer is checked first
/// (RFC 9207), then `state`; the server's error fields are only reported for a response that
/// passed both.
fn check_redirect(discovered: &Discovered, redirect: &str, state: &str) -> Result<String> {
    let params = parse_query(urls::query(redirect));
    let param = |name: &str| {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    match param("iss") {
        Some(iss) if discovered.published && iss != discovered.issuer => {
            return Err(refuse(format!(
                "the authorization response comes from the issuer `{iss}`, not `{}`",
                discovered.issuer
            )))
        }
        None if discovered
            .metadata
            .authorization_response_iss_parameter_supported
            == Some(true) =>
        {
            return Err(refuse(
                "the authorization response has no `iss` although the server promises one".into(),
            ))
        }
        _ => {}
    }
    if param("state").as_deref() != Some(state) {
        return Err(refuse(
            "the authorization response does not carry this request's state".into(),
        ));
    }
    if let Some(error) = param("error") {
        return Err(AuthError {
            error: Some(error),
            error_description: param("error_description"),
            ..AuthError::new(AuthStep::Authorization, "the authorization was refused")
        }
        .into());
    }
    param("code")
        .filter(|c| !c.is_empty())
        .ok_or_else(|| refuse("the authorization response has no code".into()))
}

fn refuse(message: String) -> Error {
    AuthError::new(AuthStep::Authorization, message).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::metadata::AuthorizationServerMetadata;

    fn discovered(iss_supported: bool) -> Discovered {
        Discovered {
            resource: "http://localhost:1/mcp".into(),
            resource_metadata: None,
            issuer: "http://localhost:2".into(),
            metadata: AuthorizationServerMetadata {
                authorization_response_iss_parameter_supported: Some(iss_supported),
                ..AuthorizationServerMetadata::default()
            },
            published: true,
        }
    }

    fn failure(result: Result<String>) -> AuthError {
        match result {
            Err(Error::Auth(e)) => *e,
            other => panic!("expected an auth error, got {other:?}"),
        }
    }

    #[test]
    fn redirects_are_checked_for_iss_then_state() {
        let d = discovered(false);
        let ok = check_redirect(&d, "http://127.0.0.1/cb?code=c&state=s", "s");
        assert_eq!(ok.unwrap(), "c");
        let wrong_state = failure(check_redirect(
            &d,
            "http://127.0.0.1/cb?code=c&state=x",
            "s",
        ));
        assert!(wrong_state.message.contains("state"));
        let denied = failure(check_redirect(
            &d,
            "http://127.0.0.1/cb?error=access_denied&error_description=no&state=s",
            "s",
        ));
        assert_eq!(denied.error.as_deref(), Some("access_denied"));
        assert_eq!(denied.error_description.as_deref(), Some("no"));
        let forged = failure(check_redirect(
            &d,
            "http://127.0.0.1/cb?error=access_denied&state=s&iss=http://evil",
            "s",
        ));
        assert_eq!(
            forged.error, None,
            "a mismatched issuer's error fields are not shown"
        );
        let strict = discovered(true);
        assert!(check_redirect(&strict, "http://127.0.0.1/cb?code=c&state=s", "s").is_err());
        let with_iss = "http://127.0.0.1/cb?code=c&state=s&iss=http%3A%2F%2Flocalhost%3A2";
        assert_eq!(check_redirect(&strict, with_iss, "s").unwrap(), "c");
    }
}
