//! The HTTP exchange shared by the HTTP transports: building requests with ureq, credentials,
//! deadlines, and turning ureq's errors into [`Error`]s.
//!
//! No ureq type leaves this module and [`body`](super::body) except the response handed to
//! the transports' readers.

use std::cell::Cell;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ureq::http::Response;
use ureq::{Agent, Body};

use super::provider_deadline::{self, CloseSignal};
use super::route::Route;
use super::socket::{self, deadline_after, ureq_timeout};
use super::{url, HttpConfig, MAX_CREDENTIAL_RETRIES};
use crate::error::{Closed, Error, Result, TimeoutKind};
use crate::redact;

pub(crate) use super::body::{
    drain, error_of, excerpt, header, http_error, is_empty_body, media_type, read_text, snippet,
    status_error, valid_header_value, valid_session_id,
};
pub(crate) use super::call::{Call, Method};

/// `Accept` for POSTs: servers may answer with either.
pub(crate) const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// `Accept` for POSTs through a proxy: both still (as the protocol requires), JSON preferred,
/// since a proxy may hold an event stream back until it ends; a server that honours the
/// preference answers in one piece.
const ACCEPT_BOTH_JSON_FIRST: &str = "application/json, text/event-stream;q=0.5";
/// `Accept` for GET streams.
pub(crate) const ACCEPT_SSE: &str = "text/event-stream";
/// The bound of requests the transport makes on its own when no request timeout is set.
pub(crate) const INTERNAL_TIMEOUT: Duration = Duration::from_secs(30);

/// A response with its body still unread.
pub(crate) type HttpResponse = Response<Body>;

/// The HTTP client (a ureq `Agent` with its connection pool) and configuration of one
/// transport.
pub(crate) struct Wire {
    agent: Agent,
    pub config: HttpConfig,
    /// Ends what the credential provider does for this connection's requests when it closes.
    closing: Arc<CloseSignal>,
    /// The proxy, TLS setup or Unix socket the requests take.
    pub route: Route,
}

impl Wire {
    /// The credentials' authorization context (0 without credentials).
    pub fn authorization_context(&self) -> u64 {
        let credentials = self.config.credentials.as_ref();
        credentials.map_or(0, |c| c.authorization_context())
    }

    /// Checks the configuration and builds the agent with fixed timeouts (connect, idle read): a
    /// request's own deadline is enforced on the calling thread ([`socket::with_deadline`]).
    pub fn new(config: HttpConfig) -> Result<Wire> {
        if !url::is_http(&config.url) {
            // Without a scheme a URL is still likely to carry its key in the query.
            return Err(Error::Config(format!(
                "not an http(s) URL: `{}`",
                redact::clip(&redact::url(&config.url))
            )));
        }
        for (name, value) in &config.headers {
            check_header(name, value)?;
        }
        let connect = ureq_timeout(config.connect_timeout);
        let route = Route::new(&config.network, &config.url)?;
        let agent = socket::agent(
            Agent::config_builder()
                .proxy(route.ureq_proxy())
                // Statuses are ours to interpret: 202, 404 and 405 all mean something.
                .http_status_as_error(false)
                // A POST must never be replayed as a GET, so redirects are reported instead.
                .max_redirects(0)
                .max_redirects_will_error(false)
                .user_agent(concat!("umcp/", env!("CARGO_PKG_VERSION")))
                // A POST stream, the GET stream and a POST answering a server request at the
                // same time, plus a spare: all can go back to the pool.
                .max_idle_connections_per_host(4)
                .timeout_resolve(connect)
                .timeout_connect(connect)
                .timeout_per_read(ureq_timeout(config.idle_timeout))
                .build(),
            &route,
        );
        Ok(Wire {
            agent,
            config,
            closing: Arc::default(),
            route,
        })
    }

    /// A deadline for a request the transport makes on its own.
    pub fn internal_deadline(&self) -> Instant {
        deadline_after(
            Instant::now(),
            self.config.request_timeout.unwrap_or(INTERNAL_TIMEOUT),
        )
    }

    /// The deadline of a POST sending a message by `deadline`: the configured request
    /// timeout can only shorten it.
    pub fn post_deadline(&self, deadline: Instant) -> Instant {
        match self.config.request_timeout {
            Some(limit) => deadline.min(deadline_after(Instant::now(), limit)),
            None => deadline,
        }
    }

    /// Shuts every connection of this transport down, in use or idle, and refuses new ones:
    /// every reader blocked on a socket returns at once. Ends the credential provider's work
    /// too, for the reason `why` (see [`end_credentials`](Self::end_credentials)).
    pub fn shutdown(&self, why: Arc<Closed>) {
        self.end_credentials(why);
        self.agent.clone().shutdown();
    }

    /// Fails with [`Error::Closed`] what the credential provider does, or would start, for this
    /// connection's requests; closing calls this first.
    pub fn end_credentials(&self, why: Arc<Closed>) {
        self.closing.close(why);
    }

    /// Runs `f`, a call to the credential provider for a request due by `deadline`, with the
    /// deadline and this connection's closing known to it: [`Error::Closed`] once the
    /// connection has closed, since the provider failed because of that, whatever it says.
    fn provide<T>(&self, deadline: Instant, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let provided = provider_deadline::within(deadline, &self.closing, f);
        if !self.closing.is_closed() {
            return provided;
        }
        if let Err(error) = &provided {
            log::debug!("credentials not obtained, the connection closed: {error}");
        }
        // Nothing is sent after the close either, whatever the provider obtained.
        Err(self.closing.closed_error())
    }

    /// Performs `call` up to the response headers, whatever the status. A 401 or 403 is told to the
    /// credential provider, and the request repeated while it asks (a 401 once, at most
    /// [`MAX_CREDENTIAL_RETRIES`] times in all).
    pub fn perform(&self, call: &Call<'_>) -> Result<HttpResponse> {
        self.perform_noting(call, &Cell::new(false))
    }

    /// [`perform`](Self::perform), setting `refused` when the connection to the server (or its
    /// proxy) was refused, as opposed to one of the credential provider's own.
    pub fn perform_noting(&self, call: &Call<'_>, refused: &Cell<bool>) -> Result<HttpResponse> {
        let Some(provider) = &self.config.credentials else {
            return self.perform_once(call, call.deadline, Credentials::Current, refused);
        };
        // Obtaining credentials may take long (a user in a browser): a repeated request gets
        // the budget the first one had, counted from when the provider is done.
        let budget = call.deadline.saturating_duration_since(Instant::now());
        let mut deadline = call.deadline;
        let mut told_unauthorized = false;
        // A DPoP nonce challenge (RFC 9449 §9) may follow the first 401: one more repeat.
        let mut nonce_retried = false;
        let mut retries = 0;
        loop {
            let response = self.perform_once(call, deadline, Credentials::Current, refused)?;
            let status = response.status().as_u16();
            let nonce_challenge = status == 401 && !nonce_retried && asks_dpop_nonce(&response);
            let repeatable = match status {
                401 => !told_unauthorized || nonce_challenge,
                403 => true,
                _ => false,
            };
            if !repeatable || retries >= MAX_CREDENTIAL_RETRIES {
                return Ok(response);
            }
            let mut error = http_error(response, call.url, deadline);
            error.protocol_version = call.protocol_version().map(str::to_owned);
            let retry = if status == 401 {
                if told_unauthorized {
                    nonce_retried = true;
                }
                told_unauthorized = true;
                self.provide(deadline, || provider.on_unauthorized(&error))?
            } else {
                self.provide(deadline, || provider.on_forbidden(&error, retries))?
            };
            if !retry {
                return Err(if status == 401 {
                    Error::Unauthorized(Box::new(error))
                } else {
                    Error::Forbidden(Box::new(error))
                });
            }
            log::debug!(
                "retrying {} after {status} with new credentials",
                crate::redact::url(call.url)
            );
            retries += 1;
            deadline = deadline.max(deadline_after(Instant::now(), budget));
        }
    }

    /// Performs `call` once with the credentials already held, and the provider hears of no 401 or
    /// 403: for requests that must never become interactive (`DELETE` on close).
    pub fn perform_cached(&self, call: &Call<'_>) -> Result<HttpResponse> {
        self.perform_once(call, call.deadline, Credentials::Cached, &Cell::new(false))
    }

    fn perform_once(
        &self,
        call: &Call<'_>,
        deadline: Instant,
        credentials: Credentials,
        refused: &Cell<bool>,
    ) -> Result<HttpResponse> {
        let started = Instant::now();
        let provided = match &self.config.credentials {
            Some(provider) => {
                let (method, url) = (call.method.as_str(), call.url);
                let headers = match credentials {
                    Credentials::Current => {
                        self.provide(deadline, || provider.request_headers(method, url))?
                    }
                    Credentials::Cached => provider.cached_headers(method, url)?,
                };
                for (name, value) in &headers {
                    check_header(name, value)?;
                }
                headers
            }
            None => Vec::new(),
        };
        let headers = call
            .headers
            .iter()
            .map(|(n, v)| (*n, v.as_str()))
            .chain(
                self.config
                    .headers
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str())),
            )
            .chain(provided.iter().map(|(n, v)| (n.as_str(), v.as_str())))
            .chain(call.extra.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        socket::forget_last();
        let sent = Instant::now();
        let result = socket::with_deadline(deadline, || match call.method {
            Method::Post => socket::writing(|| {
                let accept = match call.accept {
                    ACCEPT_BOTH if self.route.proxy.is_some() => ACCEPT_BOTH_JSON_FIRST,
                    accept => accept,
                };
                with_headers(self.agent.post(call.url), accept, headers)
                    .header("content-type", "application/json")
                    .send(call.body.unwrap_or_default())
            }),
            Method::Get => with_headers(self.agent.get(call.url), call.accept, headers).call(),
            Method::Delete => {
                with_headers(self.agent.delete(call.url), call.accept, headers).call()
            }
        });
        if result.is_ok() {
            self.route.note_exchange(sent.elapsed());
        }
        result.map_err(|e| match map_error(e, call.what, started, Phase::Headers) {
            // "Connection refused" alone does not say where: a program may talk to many servers.
            Error::Io(e) => {
                refused.set(e.kind() == io::ErrorKind::ConnectionRefused);
                Error::io(io::Error::new(
                    e.kind(),
                    format!(
                        "{} {}: {e}",
                        call.method.as_str(),
                        crate::redact::url(call.url)
                    ),
                ))
            }
            other => other,
        })
    }
}

/// Which of the credential provider's headers a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Credentials {
    /// [`request_headers`](super::CredentialProvider::request_headers): the provider may
    /// refresh first.
    Current,
    /// [`cached_headers`](super::CredentialProvider::cached_headers): what it holds now.
    Cached,
}

/// Adds `Accept` and the other headers to a request.
fn with_headers<'h, B>(
    builder: ureq::RequestBuilder<B>,
    accept: &str,
    headers: impl Iterator<Item = (&'h str, &'h str)>,
) -> ureq::RequestBuilder<B> {
    headers.fold(
        builder.header("accept", accept),
        |builder, (name, value)| builder.header(name, value),
    )
}

/// Which part of an exchange an error happened in, which decides the timeout kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Headers,
    Body,
}

/// Converts a ureq error into the crate's error, never exposing ureq types.
pub(crate) fn map_error(err: ureq::Error, what: &str, started: Instant, phase: Phase) -> Error {
    let timeout = |kind| Error::Timeout {
        method: what.to_owned(),
        elapsed: started.elapsed(),
        kind,
        stderr_tail: None,
    };
    match err {
        ureq::Error::Timeout(ureq::Timeout::Resolve | ureq::Timeout::Connect) => {
            timeout(TimeoutKind::Connect)
        }
        ureq::Error::Timeout(ureq::Timeout::PerRead) if phase == Phase::Body => {
            timeout(TimeoutKind::Idle)
        }
        ureq::Error::Timeout(_) => timeout(TimeoutKind::Request),
        ureq::Error::Io(e) => match super::tls::carried(&e) {
            Some(network) => Error::Network(Box::new(network)),
            None => Error::io(e),
        },
        ureq::Error::HostNotFound => Error::io(io::Error::new(
            io::ErrorKind::NotFound,
            format!("could not resolve the host name ({what})"),
        )),
        ureq::Error::BadUri(uri) => {
            Error::Config(format!("invalid URL: {}", crate::redact::url(&uri)))
        }
        ureq::Error::Http(e) => Error::Config(format!("invalid request: {e}")),
        ureq::Error::BodyExceedsLimit(limit) => Error::MessageTooLarge {
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
        },
        ureq::Error::Protocol(e) => Error::Protocol(format!("malformed HTTP response: {e}")),
        other => Error::io(io::Error::other(other.to_string())),
    }
}

/// Converts an error from reading a response body.
pub(crate) fn map_read_error(err: io::Error, what: &str, started: Instant) -> Error {
    map_error(ureq::Error::from(err), what, started, Phase::Body)
}

/// Whether a 401 is a DPoP `use_dpop_nonce` challenge with a nonce (RFC 9449 §9).
fn asks_dpop_nonce(response: &HttpResponse) -> bool {
    header(response, "dpop-nonce").is_some()
        && response
            .headers()
            .get_all("www-authenticate")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains("use_dpop_nonce"))
}

fn check_header(name: &str, value: &str) -> Result<()> {
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if name_ok && valid_header_value(value) {
        Ok(())
    } else {
        Err(Error::Config(format!("invalid HTTP header `{name}`")))
    }
}
