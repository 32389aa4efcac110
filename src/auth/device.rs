//! The device authorization grant (RFC 8628): the user signs in on another device with a code
//! shown here, while the client polls the token endpoint at the server's pace.
//!
//! It composes with the rest of the flow as the code flow does: the scopes chosen from the
//! challenge go in the device authorization request, the RFC 8707 `resource` in it and in
//! every poll, the client authenticates as at the token endpoint, and with DPoP every poll
//! carries a proof, so the tokens come bound to the key. PKCE belongs to the code flow: the
//! device code is redeemable only by the client that asked for it, over the back channel.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::discovery::Discovered;
use super::http::{Answer, Http};
use super::pause;
use super::store::TokenSet;
use super::tokens::{self, ClientAuth};
use super::urls;
use crate::error::{AuthError, AuthStep, Result};
use crate::transport::http::url;

/// The grant type of RFC 8628 §3.4.
pub(crate) const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// The polling interval when the server names none (RFC 8628 §3.2).
const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);
/// What `slow_down` adds to the interval (RFC 8628 §3.5).
const SLOW_DOWN: Duration = Duration::from_secs(5);
/// The shortest interval kept, whatever the server says: a poll a second at most.
const MIN_INTERVAL: Duration = Duration::from_secs(1);
/// How long a code lives when the server does not say (it must, RFC 8628 §3.2).
const DEFAULT_EXPIRY: Duration = Duration::from_secs(600);
/// The longest user code shown; codes are meant to be typed.
const MAX_USER_CODE: usize = 64;

/// Shows the user where to sign in and with which code.
pub(crate) type Prompt = dyn Fn(&DeviceAuthorization) -> io::Result<()> + Send + Sync;

/// What the user needs to finish a sign-in on another device (RFC 8628 §3.2): the page to
/// visit and the code to enter there.
///
/// The authorization server sent every field: show them as text (escaped), never to a shell.
/// The device code that the client polls with is not part of it: it never leaves umcp.
///
/// ```
/// use umcp::auth::{DeviceAuthorization, OAuthConfig};
///
/// let config = OAuthConfig::device(|device: &DeviceAuthorization| {
///     eprintln!("Visit {} and enter the code {}", device.verification_uri, device.user_code);
///     if let Some(complete) = &device.verification_uri_complete {
///         eprintln!("(or open {complete}, which carries the code)");
///     }
///     eprintln!("The code is valid for {} minutes.", device.expires_in.as_secs() / 60);
///     Ok(())
/// });
/// # let _ = config;
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceAuthorization {
    /// The code the user enters at the verification page.
    pub user_code: String,
    /// The page where the user enters the code (https, or http on this machine).
    pub verification_uri: String,
    /// The same page with the code filled in, when the server offers it (on the same origin
    /// as `verification_uri`; one on another origin is dropped).
    pub verification_uri_complete: Option<String>,
    /// How long the code stays valid.
    pub expires_in: Duration,
}

impl fmt::Debug for DeviceAuthorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceAuthorization")
            .field("user_code", &self.user_code)
            .field(
                "verification_uri",
                &crate::redact::url(&self.verification_uri),
            )
            .field(
                "verification_uri_complete",
                &self
                    .verification_uri_complete
                    .as_deref()
                    .map(crate::redact::url),
            )
            .field("expires_in", &self.expires_in)
            .finish()
    }
}

/// The device authorization response, with the device code the client polls with.
struct Pending {
    shown: DeviceAuthorization,
    device_code: String,
    interval: Duration,
}

/// Runs the device authorization grant for `scope` and returns the tokens: the user is shown
/// the code by `prompt`, and the token endpoint is polled until the user finishes, refuses, the
/// code expires, the call's deadline passes or its connection closes.
pub(crate) fn device_code(
    http: &Http,
    discovered: &Discovered,
    client: &ClientAuth,
    prompt: &Arc<Prompt>,
    scope: Option<&str>,
) -> Result<TokenSet> {
    let metadata = &discovered.metadata;
    let (Some(endpoint), Some(token_endpoint)) = (
        metadata.device_authorization_endpoint.as_deref(),
        metadata.token_endpoint.as_deref(),
    ) else {
        return Err(AuthError::new(
            AuthStep::Authorization,
            format!(
                "{} offers no device authorization grant (no device_authorization_endpoint)",
                discovered.issuer
            ),
        )
        .into());
    };
    let pending = request(http, endpoint, client, &discovered.resource, scope)?;
    prompt(&pending.shown).map_err(|e| {
        AuthError::new(
            AuthStep::Authorization,
            format!("cannot show the device code: {e}"),
        )
    })?;
    Ok(poll(
        http,
        token_endpoint,
        client,
        discovered,
        &pending,
        scope,
    )?)
}

/// The device authorization request (RFC 8628 §3.1), authenticated as the client is at the
/// token endpoint.
fn request(
    http: &Http,
    endpoint: &str,
    client: &ClientAuth,
    resource: &str,
    scope: Option<&str>,
) -> std::result::Result<Pending, AuthError> {
    const STEP: AuthStep = AuthStep::Authorization;
    urls::check_endpoint(STEP, "device authorization endpoint", endpoint)?;
    let mut params = vec![("resource", resource)];
    if let Some(scope) = scope {
        params.push(("scope", scope));
    }
    let basic = client.apply(&mut params);
    log::debug!(
        "oauth: device authorization request at {}",
        crate::redact::url(endpoint)
    );
    let answer = http.post_form(STEP, endpoint, &params, basic.as_deref(), None)?;
    if !answer.is_success() {
        return Err(answer.error(STEP, "the device authorization request was refused"));
    }
    parse(&answer)
}

/// Reads a device authorization response; the strings meant for the user are checked, as they
/// come from the server: a code that is short printable ASCII, a verification page that is https (or
/// http on this machine).
fn parse(answer: &Answer) -> std::result::Result<Pending, AuthError> {
    const STEP: AuthStep = AuthStep::Authorization;
    let json = answer.json().unwrap_or(Value::Null);
    let text = |name: &str| json.get(name).and_then(Value::as_str).map(str::to_owned);
    let seconds = |name: &str| match json.get(name) {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    };
    let (Some(device_code), Some(user_code), Some(verification_uri)) = (
        text("device_code").filter(|c| !c.is_empty()),
        text("user_code"),
        text("verification_uri"),
    ) else {
        return Err(answer.error(
            STEP,
            "the device authorization response lacks device_code, user_code or verification_uri",
        ));
    };
    // Codes are typed by hand (RFC 8628 §6.1): printable ASCII, which no terminal misreads.
    let plain = |c: char| c.is_ascii_graphic() || c == ' ';
    if user_code.is_empty()
        || user_code.chars().count() > MAX_USER_CODE
        || !user_code.chars().all(plain)
    {
        return Err(answer.error(STEP, "the user code is empty, too long or not plain text"));
    }
    urls::check_endpoint(STEP, "verification page", &verification_uri)?;
    let complete = text("verification_uri_complete").filter(|complete| {
        let same = url::origin(complete) == url::origin(&verification_uri)
            && urls::check_endpoint(STEP, "verification page", complete).is_ok();
        if !same {
            log::debug!("oauth: dropping a verification_uri_complete on another origin");
        }
        same
    });
    let expires_in = seconds("expires_in").map_or(DEFAULT_EXPIRY, Duration::from_secs);
    let interval = seconds("interval").map_or(DEFAULT_INTERVAL, Duration::from_secs);
    Ok(Pending {
        shown: DeviceAuthorization {
            user_code,
            verification_uri,
            verification_uri_complete: complete,
            expires_in,
        },
        device_code,
        interval: interval.max(MIN_INTERVAL),
    })
}

/// Polls the token endpoint at the server's interval (RFC 8628 §3.4, §3.5) until it answers
/// with tokens or a final error, the code expires, or the call's deadline passes.
fn poll(
    http: &Http,
    token_endpoint: &str,
    client: &ClientAuth,
    discovered: &Discovered,
    pending: &Pending,
    scope: Option<&str>,
) -> std::result::Result<TokenSet, AuthError> {
    let started = Instant::now();
    let expiry = crate::sync::deadline_after(started, pending.shown.expires_in);
    let deadline =
        pause::deadline_within(pending.shown.expires_in).map_or(expiry, |d| d.min(expiry));
    let mut interval = pending.interval;
    loop {
        let next = crate::sync::deadline_after(Instant::now(), interval);
        if next >= deadline {
            pause::until(deadline)?;
            return Err(gave_up(started, deadline >= expiry));
        }
        pause::until(next)?;
        let params = vec![
            ("grant_type", DEVICE_CODE_GRANT),
            ("device_code", pending.device_code.as_str()),
            ("resource", discovered.resource.as_str()),
        ];
        let error = match tokens::request(http, token_endpoint, params, Some(client), scope) {
            Ok(token) => return Ok(token),
            Err(error) => error,
        };
        match error.error.as_deref() {
            Some("authorization_pending") => {}
            Some("slow_down") => {
                interval += SLOW_DOWN;
                log::debug!(
                    "oauth: the token endpoint asks to slow down; polling every {interval:?}"
                );
            }
            Some("access_denied") => {
                return Err(AuthError {
                    message: "the user refused the sign-in".into(),
                    ..error
                })
            }
            Some("expired_token") => {
                return Err(AuthError {
                    message: "the device code expired before the user finished".into(),
                    ..error
                })
            }
            _ => return Err(error),
        }
    }
}

/// The error of a wait that ran out: at the code's expiry, or at the call's deadline before it.
fn gave_up(started: Instant, expired: bool) -> AuthError {
    let waited = started.elapsed().as_secs();
    let message = if expired {
        format!("the device code expired after {waited} s before the user finished")
    } else {
        format!("the user did not finish the sign-in within {waited} s")
    };
    AuthError::new(AuthStep::Authorization, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(body: &str) -> Answer {
        Answer {
            url: "https://as.example/device".into(),
            status: 200,
            location: None,
            dpop_nonce: None,
            body: body.into(),
        }
    }

    #[test]
    fn a_device_authorization_response_is_read_and_checked() {
        let ok = parse(&answer(
            r#"{"device_code":"d","user_code":"WDJB-MJHT","verification_uri":"https://as.example/device",
               "verification_uri_complete":"https://as.example/device?user_code=WDJB-MJHT",
               "expires_in":1800,"interval":"0"}"#,
        ))
        .unwrap();
        assert_eq!(ok.shown.user_code, "WDJB-MJHT");
        assert_eq!(ok.shown.expires_in, Duration::from_secs(1800));
        assert!(ok.shown.verification_uri_complete.is_some());
        assert_eq!(ok.interval, MIN_INTERVAL, "never more than a poll a second");
        let defaults = parse(&answer(
            r#"{"device_code":"d","user_code":"C","verification_uri":"https://as.example/d"}"#,
        ))
        .unwrap();
        assert_eq!(defaults.interval, DEFAULT_INTERVAL);
        assert_eq!(defaults.shown.expires_in, DEFAULT_EXPIRY);
        let elsewhere = parse(&answer(
            r#"{"device_code":"d","user_code":"C","verification_uri":"https://as.example/d",
               "verification_uri_complete":"https://evil.example/d?c=C"}"#,
        ))
        .unwrap();
        assert_eq!(elsewhere.shown.verification_uri_complete, None);
        for bad in [
            r#"{"user_code":"C","verification_uri":"https://as.example/d"}"#,
            r#"{"device_code":"d","user_code":"C\u001b[2J","verification_uri":"https://as.example/d"}"#,
            r#"{"device_code":"d","user_code":"","verification_uri":"https://as.example/d"}"#,
            r#"{"device_code":"d","user_code":"C","verification_uri":"javascript:alert(1)"}"#,
            r#"{"device_code":"d","user_code":"C","verification_uri":"http://as.example/d"}"#,
        ] {
            assert!(parse(&answer(bad)).is_err(), "{bad}");
        }
    }
}
