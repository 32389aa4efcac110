//! Reading response bodies that are not event streams: JSON replies, error bodies and bodies
//! that carry nothing, each bounded in size and read by a deadline.
//!
//! Every read here runs under [`socket::with_deadline`], so a server that trickles a body
//! holds the reader at most until the deadline, however slowly it sends.

use std::io::{self, Read};
use std::time::Instant;

use super::auth_header;
use super::socket;
use super::wire::{map_read_error, HttpResponse};
use crate::error::{Error, HttpError, Result};
use crate::jsonrpc::{Message, Payload, RequestId};

/// How much of an error body is kept in [`HttpError::body`].
const ERROR_BODY_KEPT: usize = 4 * 1024;
/// How much of an error body is read (enough for a JSON-RPC error object).
const ERROR_BODY_READ: u64 = 64 * 1024;

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

/// Reads a whole body as text by `deadline`, refusing more than `limit` bytes (`usize::MAX`: no
/// limit).
pub(crate) fn read_text(
    response: HttpResponse,
    limit: usize,
    what: &str,
    deadline: Instant,
) -> Result<String> {
    let started = Instant::now();
    let mut bytes = Vec::new();
    // One byte more than the limit tells an oversized body from one that fits exactly.
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    socket::with_deadline(deadline, || {
        response
            .into_body()
            .into_reader()
            .take(cap)
            .read_to_end(&mut bytes)
    })
    .map_err(|e| map_read_error(e, what, started))?;
    if bytes.len() > limit {
        return Err(Error::MessageTooLarge { limit });
    }
    String::from_utf8(bytes).map_err(|_| Error::Protocol(format!("{what}: the body is not UTF-8")))
}

/// Disposes of a body that carries nothing for us. A small body of known length is read,
/// by `deadline`, so the connection can be reused; anything else (an event stream, say) is
/// dropped unread, which closes the connection instead of waiting on it.
pub(crate) fn drain(response: HttpResponse, deadline: Instant) {
    let small = header(&response, "content-length")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|len| len <= ERROR_BODY_READ);
    if small {
        socket::with_deadline(deadline, || {
            io::copy(
                &mut response.into_body().into_reader().take(ERROR_BODY_READ),
                &mut io::sink(),
            )
        })
        .ok();
    }
}

/// The error for a non-success status. Only a body declared `application/json` may be a JSON-RPC
/// error answering `request`, whatever another body looks like.
pub(crate) fn status_error(
    response: HttpResponse,
    url: &str,
    request: Option<&RequestId>,
    deadline: Instant,
) -> Error {
    let request = request.filter(|_| media_type(&response) == "application/json");
    error_of(http_error(response, url, deadline), request)
}

/// The error for the details of a failed exchange, as [`status_error`] gives it.
pub(crate) fn error_of(error: HttpError, request: Option<&RequestId>) -> Error {
    match error.status {
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

/// Collects the details of a failed exchange, reading a bounded part of its body by
/// `deadline` (what arrived by then is kept).
pub(crate) fn http_error(response: HttpResponse, url: &str, deadline: Instant) -> HttpError {
    let status = response.status().as_u16();
    let challenges: Vec<&str> = response
        .headers()
        .get_all("www-authenticate")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let challenges = challenges.join(", ");
    let www_authenticate = auth_header::parse(&challenges);
    let asks_dpop_nonce = auth_header::asks_dpop_nonce(&challenges);
    let mcp_auth_server = header(&response, "mcp-auth-server").map(str::to_owned);
    let dpop_nonce = header(&response, "dpop-nonce").map(str::to_owned);
    let location = (300..400)
        .contains(&status)
        .then(|| header(&response, "location").map(str::to_owned))
        .flatten();
    HttpError {
        status,
        url: url.to_owned(),
        body: excerpt(response, deadline),
        www_authenticate,
        asks_dpop_nonce,
        mcp_auth_server,
        dpop_nonce,
        protocol_version: None,
        location,
    }
}

/// The start of a body that is no message (an error page, say), as lossy text: a bounded
/// part is read by `deadline`, and what arrived by then is kept.
pub(crate) fn excerpt(response: HttpResponse, deadline: Instant) -> String {
    let mut bytes = Vec::new();
    let mut reader = response.into_body().into_reader().take(ERROR_BODY_READ);
    // Read in pieces so that whatever arrived before a timeout is kept.
    socket::with_deadline(deadline, || {
        let mut chunk = [0u8; 4096];
        while let Ok(n @ 1..) = reader.read(&mut chunk) {
            bytes.extend_from_slice(&chunk[..n]);
        }
    });
    let mut body = String::from_utf8_lossy(&bytes).into_owned();
    if body.len() > ERROR_BODY_KEPT {
        let mut cut = ERROR_BODY_KEPT;
        while !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
        body.push('…');
    }
    body
}

/// A session id is usable only when it is visible ASCII (0x21–0x7E).
pub(crate) fn valid_session_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// Whether `value` can be sent as an HTTP header value as it is: no control byte but
/// horizontal tab, and no DEL (RFC 9110 §5.5; bytes above 0x7F pass as `obs-text`).
pub(crate) fn valid_header_value(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b == b'\t' || (b >= 0x20 && b != 0x7f))
}

/// A short, single-line excerpt of a body for error messages.
pub(crate) fn snippet(text: &str) -> String {
    let mut s: String = text.chars().take(200).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s.replace(['\r', '\n'], " ")
}
