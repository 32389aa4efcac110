//! Reading the successful answer to the POST of a request over Streamable HTTP: the response
//! in a JSON body, an event stream carrying it, or (against the rules) no response at all.

use std::sync::Arc;
use std::time::Instant;

use super::shared::Shared;
use super::socket::Socket;
use super::streams::Claim;
use super::wire::{self, HttpResponse};
use super::{delivery, post_stream};
use crate::error::{Error, Result};
use crate::jsonrpc::RequestId;

/// Handles a 2xx answer to request `id`: the response is in the body or on a stream read from
/// `socket`. An answer without a response is no error here (see [`without_response`]).
pub(crate) fn accept(
    shared: &Arc<Shared>,
    id: RequestId,
    response: HttpResponse,
    what: &str,
    deadline: Instant,
    socket: Option<Socket>,
    claim: Claim<'_>,
) -> Result<()> {
    let status = response.status().as_u16();
    if status == 202 || wire::is_empty_body(&response) {
        wire::drain(response, deadline);
        without_response(shared, id, status, what, claim);
        return Ok(());
    }
    let media_type = wire::media_type(&response);
    if media_type == "text/event-stream" {
        return post_stream::start(shared, id, response, socket, claim, deadline);
    }
    if media_type != "application/json" {
        // Often a page from something in between (a captive portal, a proxy), in any
        // charset: only its start is read, for the error.
        let text = wire::excerpt(response, deadline);
        if text.trim().is_empty() {
            without_response(shared, id, status, what, claim);
            return Ok(());
        }
        let media_type = match media_type.as_str() {
            "" => "no content type".to_owned(),
            other => format!("content type `{other}`"),
        };
        return Err(Error::Protocol(format!(
            "the server answered {what} with HTTP {status} and {media_type}, neither JSON nor \
             an event stream: {}",
            wire::snippet(&text)
        )));
    }
    let config = &shared.wire.config;
    let text = wire::read_text(response, config.max_event_size, what, deadline)?;
    if text.trim().is_empty() {
        without_response(shared, id, status, what, claim);
        return Ok(());
    }
    log::trace!("< {text}");
    let streams = Some(&shared.streams);
    match delivery::deliver_text(&shared.inbox, streams, &text, Some(&id)) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Error::Protocol(format!(
            "the JSON reply to {what} holds no response to request {id}: {}",
            wire::snippet(&text)
        ))),
        Err(e) => Err(Error::Protocol(format!(
            "invalid JSON reply to {what}: {e}: {}",
            wire::snippet(&text)
        ))),
    }
}

/// A request answered with no response (202, or an empty body). While a GET stream is open it is
/// parked there, where some servers route the response; otherwise nothing can bring it, so it
/// fails now with [`Error::Protocol`], as unanswered: the server may still be working on it.
fn without_response(shared: &Shared, id: RequestId, status: u16, what: &str, claim: Claim<'_>) {
    let answer = match status {
        202 => "HTTP 202 Accepted".to_owned(),
        status => format!("HTTP {status} with an empty body"),
    };
    if claim.is_stopped() {
        // Answered on another stream already, abandoned, or the connection closed.
        log::debug!("request {id} `{what}` was answered with {answer}, and is settled already");
        return;
    }
    if shared.park_on_get_stream(id.clone(), what, &answer, claim) {
        log::debug!(
            "request {id} `{what}` was answered with {answer}; waiting for its response on the \
             GET stream"
        );
        return;
    }
    let error = Error::Protocol(format!(
        "the server answered request {id} `{what}` with {answer} and no response (a request \
         must be answered with JSON or an event stream), and no GET stream is open to carry \
         the response"
    ));
    shared.unanswered(id, error);
}
