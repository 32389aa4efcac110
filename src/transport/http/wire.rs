//! The HTTP exchange shared by both transports: building requests with ureq, credentials,
//! timeouts, and turning ureq's errors and HTTP failures into [`Error`]s.
//!
//! No ureq type leaves this module except the response handed to the transports' readers.

use std::io::{self, Read};
use std::time::{Duration, Instant};

use ureq::http::Response;
use ureq::{Agent, Body};

use super::{auth_header, url, HttpConfig, MAX_CREDENTIAL_RETRIES};
use crate::error::{Error, HttpError, Result, TimeoutKind};
use crate::jsonrpc::{Message, Payload, RequestId};

/// `Accept` for POSTs: servers may answer with either.
pub(crate) const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// `Accept` for GET streams.
pub(crate) const ACCEPT_SSE: &str = "text/event-stream";
/// The bound of requests the transport makes on its own when no request timeout is set.
pub(crate) const INTERNAL_TIMEOUT: Duration = Duration::from_secs(30);
/// How much of an error body is kept in [`HttpError::body`].
const ERROR_BODY_KEPT: usize = 4 * 1024;
/// How much of an error body is read (enough for a JSON-RPC error object).
const ERROR_BODY_READ: u64 = 64 * 1024;

/// A response with its body still unread.
pub(crate) type HttpResponse = Response<Body>;

/// The HTTP method of a [`Call`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Delete,
}

impl Method {
    /// The method's name on the wire.
    pub fn as_str(&self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }
}

/// One HTTP request to make.
pub(crate) struct Call<'a> {
    pub method: Method,
    pub url: &'a str,
    /// The JSON body of a POST.
    pub body: Option<&'a str>,
    pub accept: &'static str,
    /// Session, version and `Last-Event-ID` headers.
    pub headers: Vec<(&'static str, String)>,
    /// Per-message headers from the layer above (see [`Transport::send_with_headers`]).
    ///
    /// [`Transport::send_with_headers`]: crate::transport::Transport::send_with_headers
    pub extra: &'a [(String, String)],
    /// When the response headers must have arrived.
    pub deadline: Instant,
    /// The longest silence tolerated on each read, headers and body alike.
    pub per_read: Duration,
    /// What is waited for, for timeout errors: a JSON-RPC method or an HTTP step.
    pub what: &'a str,
}

/// The HTTP client (a ureq `Agent` with its connection pool) and configuration of one
/// transport.
pub(crate) struct Wire {
    agent: Agent,
    pub config: HttpConfig,
}

impl Wire {
    /// Checks the configuration and builds the HTTP client.
    pub fn new(config: HttpConfig) -> Result<Wire> {
        if !url::is_http(&config.url) {
            return Err(Error::Config(format!(
                "not an http(s) URL: `{}`",
                config.url
            )));
        }
        for (name, value) in &config.headers {
            check_header(name, value)?;
        }
        let agent = Agent::new_with_config(
            Agent::config_builder()
                // Statuses are ours to interpret: 202, 404 and 405 all mean something.
                .http_status_as_error(false)
                // A POST must never be replayed as a GET, so redirects are reported instead.
                .max_redirects(0)
                .max_redirects_will_error(false)
                .user_agent(concat!("umcp/", env!("CARGO_PKG_VERSION")))
                // A POST stream, the GET stream and a POST answering a server request at the
                // same time, plus a spare: all can go back to the pool.
                .max_idle_connections_per_host(4)
                .build(),
        );
        Ok(Wire { agent, config })
    }

    /// A deadline for a request the transport makes on its own.
    pub fn internal_deadline(&self) -> Instant {
        Instant::now() + self.config.request_timeout.unwrap_or(INTERNAL_TIMEOUT)
    }

    /// The deadline and per-read limit of a POST sending a message by `deadline`: the
    /// configured request timeout can only shorten it, and a reply stream that stays silent
    /// longer than the caller waits is dropped too.
    pub fn post_limits(&self, deadline: Instant) -> (Instant, Duration) {
        let now = Instant::now();
        let deadline = match self.config.request_timeout {
            Some(limit) => deadline.min(now + limit),
            None => deadline,
        };
        let per_read = self
            .config
            .idle_timeout
            .min(deadline.saturating_duration_since(now))
            .max(Duration::from_millis(1));
        (deadline, per_read)
    }

    /// Performs `call` up to the response headers, whatever the status. On a 401 or 403 the
    /// credential provider is told, and the request repeated while it asks for that (a 401
    /// once, all in all at most [`MAX_CREDENTIAL_RETRIES`] times).
    ///
    /// # Errors
    ///
    /// Transport failures ([`Error::Io`], [`Error::Timeout`]), a failing credential provider,
    /// or [`Error::Unauthorized`] / [`Error::Forbidden`] when the provider declined to retry.
    pub fn perform(&self, call: &Call<'_>) -> Result<HttpResponse> {
        let Some(provider) = &self.config.credentials else {
            return self.perform_once(call, call.deadline);
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
            let response = self.perform_once(call, deadline)?;
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
            let error = http_error(response, call.url);
            let retry = if status == 401 {
                if told_unauthorized {
                    nonce_retried = true;
                }
                told_unauthorized = true;
                provider.on_unauthorized(&error)?
            } else {
                provider.on_forbidden(&error, retries)?
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
            deadline = deadline.max(Instant::now() + budget);
        }
    }

    fn perform_once(&self, call: &Call<'_>, deadline: Instant) -> Result<HttpResponse> {
        let started = Instant::now();
        let remaining = deadline
            .saturating_duration_since(started)
            .max(Duration::from_millis(1));
        let connect = self.config.connect_timeout.min(remaining);
        let mut headers: Vec<(String, String)> = vec![("accept".into(), call.accept.into())];
        if call.body.is_some() {
            headers.push(("content-type".into(), "application/json".into()));
        }
        headers.extend(
            call.headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), v.clone())),
        );
        headers.extend(call.extra.iter().cloned());
        headers.extend(self.config.headers.iter().cloned());
        if let Some(provider) = &self.config.credentials {
            for (name, value) in provider.request_headers(call.method.as_str(), call.url)? {
                check_header(&name, &value)?;
                headers.push((name, value));
            }
        }
        let timeouts = Limits {
            connect,
            remaining,
            per_read: call.per_read,
        };
        let result = match call.method {
            Method::Post => prepare(self.agent.post(call.url), &headers, timeouts)
                .send(call.body.unwrap_or_default()),
            Method::Get => prepare(self.agent.get(call.url), &headers, timeouts).call(),
            Method::Delete => prepare(self.agent.delete(call.url), &headers, timeouts).call(),
        };
        result.map_err(|e| map_error(e, call.what, started, Phase::Headers))
    }
}

/// The timeouts of one request.
#[derive(Clone, Copy)]
struct Limits {
    connect: Duration,
    remaining: Duration,
    per_read: Duration,
}

/// Adds headers and per-request timeouts. The body has no total timeout, so an event stream
/// lives as long as it stays active.
fn prepare<B>(
    mut builder: ureq::RequestBuilder<B>,
    headers: &[(String, String)],
    limits: Limits,
) -> ureq::RequestBuilder<B> {
    for (name, value) in headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder
        .config()
        .timeout_resolve(Some(limits.connect))
        .timeout_connect(Some(limits.connect))
        .timeout_send_request(Some(limits.remaining))
        .timeout_send_body(Some(limits.remaining))
        .timeout_recv_response(Some(limits.remaining))
        .timeout_per_read(Some(limits.per_read))
        .build()
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
    };
    match err {
        ureq::Error::Timeout(ureq::Timeout::Resolve | ureq::Timeout::Connect) => {
            timeout(TimeoutKind::Connect)
        }
        ureq::Error::Timeout(ureq::Timeout::PerRead) if phase == Phase::Body => {
            timeout(TimeoutKind::Idle)
        }
        ureq::Error::Timeout(_) => timeout(TimeoutKind::Request),
        ureq::Error::Io(e) => Error::io(e),
        ureq::Error::HostNotFound => Error::io(io::Error::new(
            io::ErrorKind::NotFound,
            format!("could not resolve the host name ({what})"),
        )),
        ureq::Error::BadUri(uri) => Error::Config(format!("invalid URL: {uri}")),
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

/// The first value of a header (names are case-insensitive).
pub(crate) fn header<'r>(response: &'r HttpResponse, name: &str) -> Option<&'r str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

/// The media type of the response without parameters, lowercased.
pub(crate) fn media_type(response: &HttpResponse) -> String {
    header(response, "content-type")
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// True when the body is known to be empty.
pub(crate) fn is_empty_body(response: &HttpResponse) -> bool {
    header(response, "content-length").is_some_and(|v| v.trim() == "0")
}

/// Reads a whole body as text, refusing more than `limit` bytes.
pub(crate) fn read_text(response: HttpResponse, limit: usize, what: &str) -> Result<String> {
    let started = Instant::now();
    let mut bytes = Vec::new();
    response
        .into_body()
        .into_reader()
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| map_read_error(e, what, started))?;
    if bytes.len() > limit {
        return Err(Error::MessageTooLarge { limit });
    }
    String::from_utf8(bytes).map_err(|_| Error::Protocol(format!("{what}: the body is not UTF-8")))
}

/// Disposes of a body that carries nothing for us. A small body of known length is read so
/// the connection can be reused; anything else (an event stream, say) is dropped unread,
/// which closes the connection instead of waiting on it.
pub(crate) fn drain(response: HttpResponse) {
    let small = header(&response, "content-length")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|len| len <= ERROR_BODY_READ);
    if small {
        let _ = io::copy(
            &mut response.into_body().into_reader().take(ERROR_BODY_READ),
            &mut io::sink(),
        );
    }
}

/// The error for a non-success status: 401 and 403 get their own variants; a JSON-RPC error
/// answering `request` becomes [`Error::Rpc`].
pub(crate) fn status_error(
    response: HttpResponse,
    url: &str,
    request: Option<&RequestId>,
) -> Error {
    let status = response.status().as_u16();
    let error = http_error(response, url);
    match status {
        401 => return Error::Unauthorized(Box::new(error)),
        403 => return Error::Forbidden(Box::new(error)),
        _ => {}
    }
    if let (Some(id), Ok(Payload::Single(Message::Response(r)))) =
        (request, Payload::decode(&error.body))
    {
        if r.id.as_ref() == Some(id) {
            if let Err(object) = r.result {
                return Error::Rpc(object);
            }
        }
    }
    Error::Http(Box::new(error))
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

/// Collects the details of a failed exchange, reading a bounded part of its body.
pub(crate) fn http_error(response: HttpResponse, url: &str) -> HttpError {
    let status = response.status().as_u16();
    let challenges: Vec<&str> = response
        .headers()
        .get_all("www-authenticate")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let www_authenticate = auth_header::parse(&challenges.join(", "));
    let mcp_auth_server = header(&response, "mcp-auth-server").map(str::to_owned);
    let dpop_nonce = header(&response, "dpop-nonce").map(str::to_owned);
    let mut bytes = Vec::new();
    let _ = response
        .into_body()
        .into_reader()
        .take(ERROR_BODY_READ)
        .read_to_end(&mut bytes);
    let mut body = String::from_utf8_lossy(&bytes).into_owned();
    if body.len() > ERROR_BODY_KEPT {
        let mut cut = ERROR_BODY_KEPT;
        while !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
        body.push('…');
    }
    HttpError {
        status,
        url: url.to_owned(),
        body,
        www_authenticate,
        mcp_auth_server,
        dpop_nonce,
    }
}

/// A session id is usable only when it is visible ASCII (0x21–0x7E).
pub(crate) fn valid_session_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// A short, single-line excerpt of a body for error messages.
pub(crate) fn snippet(text: &str) -> String {
    let mut s: String = text.chars().take(200).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s.replace(['\r', '\n'], " ")
}

fn check_header(name: &str, value: &str) -> Result<()> {
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    let value_ok = value
        .bytes()
        .all(|b| b == b'\t' || (0x20..0x7f).contains(&b));
    if name_ok && value_ok {
        Ok(())
    } else {
        Err(Error::Config(format!("invalid HTTP header `{name}`")))
    }
}
