//! The HTTP requests of the flow (metadata, registration, token), with timeouts (cut to the
//! deadline of the call they serve, see [`provider_deadline`]), no redirect
//! following, bounded bodies and redacted trace lines.
//!
//! Each request is made on an agent of its own, which the closing of the connection the
//! request serves shuts down, cutting the request at once (see [`provider_deadline`]); ureq
//! does not interrupt a name resolution or a connect in progress, which the request's timeout
//! bounds (the request fails when it is done, like a new one on a shut-down agent). The
//! flow makes a handful of requests an hour at most, so the connection reuse a shared agent
//! would offer is worth less than a request a closing client need not wait for.

use std::time::Duration;

use serde_json::Value;
use ureq::config::Config;
use ureq::unversioned::resolver::DefaultResolver;
use ureq::Agent;

use super::encoding::{form, redact_form, redact_json, redact_url};
use crate::error::{AuthError, AuthStep};
use crate::transport::http::provider_deadline::{self, OnClose};
use crate::transport::http::route::Route;
use crate::transport::http::Network;

/// The largest response body read from an authorization server.
const BODY_LIMIT: u64 = 1024 * 1024;

/// What `Duration::MAX` ("no limit") becomes: the HTTP library adds timeouts to instants.
const NO_LIMIT: Duration = Duration::from_secs(365 * 24 * 3600);

/// An HTTP client for the flow's requests.
#[derive(Clone)]
pub(crate) struct Http {
    timeout: Duration,
    /// The proxy and trust roots of the requests.
    network: Network,
}

/// An HTTP answer, whatever its status.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    /// The URL that was requested.
    pub url: String,
    /// The HTTP status.
    pub status: u16,
    /// The `Location` header of a redirect.
    pub location: Option<String>,
    /// The `DPoP-Nonce` header (RFC 9449 §8), when the server provides a nonce.
    pub dpop_nonce: Option<String>,
    /// The body as text.
    pub body: String,
}

impl Answer {
    /// True for 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON, when it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }

    /// An error at `step` for this answer, carrying the server's OAuth `error` and
    /// `error_description` when the body has them.
    pub fn error(&self, step: AuthStep, message: impl Into<String>) -> AuthError {
        let json = self.json().unwrap_or(Value::Null);
        let text = |name: &str| json.get(name).and_then(Value::as_str).map(str::to_owned);
        AuthError {
            url: Some(self.url.clone()),
            status: Some(self.status),
            error: text("error"),
            error_description: text("error_description"),
            ..AuthError::new(step, message)
        }
    }
}

/// The agent configuration of the flow's requests, through `proxy`.
fn config(proxy: Option<ureq::Proxy>) -> Config {
    Agent::config_builder()
        .http_status_as_error(false)
        // Redirects are never followed: an authorization redirect is read, not visited,
        // and credentials must not travel to another origin.
        .max_redirects(0)
        .max_redirects_will_error(false)
        .user_agent(concat!("umcp/", env!("CARGO_PKG_VERSION")))
        .proxy(proxy)
        .build()
}

impl Http {
    /// A client whose requests each take at most `timeout` (`Duration::MAX`: no limit), made
    /// along `network`'s proxy and trust.
    pub fn new(timeout: Duration, network: Network) -> Http {
        let timeout = timeout.min(NO_LIMIT);
        Http { timeout, network }
    }

    /// The agent for one request to `url`, shut down if the connection it serves closes while the
    /// [`OnClose`] lives (an error if that connection has closed already).
    fn agent(&self, step: AuthStep, url: &str) -> Result<(Agent, OnClose), AuthError> {
        // The proxy depends on the URL (`no_proxy`): each request finds its own way.
        let route = Route::new(&self.network, url).map_err(|e| AuthError {
            url: Some(url.to_owned()),
            ..AuthError::new(step, e.to_string())
        })?;
        let agent = Agent::with_parts(
            config(route.ureq_proxy()),
            route.connector(),
            DefaultResolver::default(),
        );
        let cut = agent.clone();
        let watch =
            provider_deadline::on_close(move || cut.shutdown()).ok_or_else(|| AuthError {
                url: Some(url.to_owned()),
                ..AuthError::new(step, "the connection closed")
            })?;
        Ok((agent, watch))
    }

    /// `GET url` expecting JSON.
    pub fn get(&self, step: AuthStep, url: &str) -> Result<Answer, AuthError> {
        self.get_with(step, url, &[])
    }

    /// `GET url` expecting JSON, with `headers` besides `Accept`.
    pub fn get_with(
        &self,
        step: AuthStep,
        url: &str,
        headers: &[(&str, &str)],
    ) -> Result<Answer, AuthError> {
        log::trace!("oauth > GET {}", redact_url(url));
        let (agent, _watch) = self.agent(step, url)?;
        let request = agent.get(url).header("accept", "application/json");
        let result = headers
            .iter()
            .fold(request, |request, (name, value)| {
                request.header(*name, *value)
            })
            .config()
            .timeout_global(Some(provider_deadline::capped(self.timeout)))
            .build()
            .call();
        self.answer(step, url, result)
    }

    /// `POST url` with a form body, an optional `Authorization` (HTTP Basic client authentication)
    /// and a `DPoP` proof.
    pub fn post_form(
        &self,
        step: AuthStep,
        url: &str,
        params: &[(&str, &str)],
        authorization: Option<&str>,
        dpop: Option<&str>,
    ) -> Result<Answer, AuthError> {
        log::trace!(
            "oauth > POST {} {}{}{}",
            redact_url(url),
            redact_form(params),
            if authorization.is_some() {
                " (with HTTP Basic client authentication)"
            } else {
                ""
            },
            if dpop.is_some() {
                " (with a DPoP proof)"
            } else {
                ""
            }
        );
        let (agent, _watch) = self.agent(step, url)?;
        let mut request = agent
            .post(url)
            .header("accept", "application/json")
            .header("content-type", "application/x-www-form-urlencoded");
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        if let Some(proof) = dpop {
            request = request.header("dpop", proof);
        }
        let result = request
            .config()
            .timeout_global(Some(provider_deadline::capped(self.timeout)))
            .build()
            .send(form(params));
        self.answer(step, url, result)
    }

    /// `POST url` with a JSON body.
    pub fn post_json(&self, step: AuthStep, url: &str, body: &Value) -> Result<Answer, AuthError> {
        log::trace!("oauth > POST {} {}", redact_url(url), redact_json(body));
        let (agent, _watch) = self.agent(step, url)?;
        let result = agent
            .post(url)
            .header("accept", "application/json")
            .header("content-type", "application/json")
            .config()
            .timeout_global(Some(provider_deadline::capped(self.timeout)))
            .build()
            .send(body.to_string());
        self.answer(step, url, result)
    }

    fn answer(
        &self,
        step: AuthStep,
        url: &str,
        result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Answer, AuthError> {
        let unreachable = |e: &dyn std::fmt::Display| AuthError {
            url: Some(url.to_owned()),
            ..AuthError::new(
                step,
                format!("request to {} failed: {e}", crate::redact::url(url)),
            )
        };
        let mut response = result.map_err(|e| unreachable(&e))?;
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let location = header("location");
        let dpop_nonce = header("dpop-nonce");
        let body = response
            .body_mut()
            .with_config()
            .limit(BODY_LIMIT)
            .read_to_string()
            .map_err(|e| unreachable(&e))?;
        match serde_json::from_str::<Value>(&body) {
            Ok(json) => log::trace!("oauth < {status} {}", redact_json(&json)),
            Err(_) => log::trace!("oauth < {status} ({} bytes, not JSON)", body.len()),
        }
        Ok(Answer {
            url: url.to_owned(),
            status,
            location,
            dpop_nonce,
            body,
        })
    }
}
