//! Handing what the server sent to the inbox, and stopping the streams a response settles.

use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};

use super::streams::Streams;
use super::wire;
use crate::jsonrpc::{DecodeError, InvalidRequest, Message, Payload, RequestId};
use crate::transport::sse::Event;
use crate::transport::Inbox;

/// Just enough of a single message to tell a response, and to what.
#[derive(Deserialize)]
struct Peek {
    id: Option<RequestId>,
    #[serde(default)]
    method: Member,
    #[serde(default)]
    result: Member,
    #[serde(default)]
    error: Member,
}

impl Peek {
    /// The id of the response this is, if any: `result` or `error` makes one, an `id` alone does
    /// not. A non-null `method` makes a request (if an invalid one); a null one is taken as absent,
    /// as the inbox does, since some JSON-RPC stacks write every member.
    fn response_id(&self) -> Option<&RequestId> {
        let present = |member: &Member| !matches!(member, Member::Absent);
        let answers = present(&self.result) || present(&self.error);
        let is_response = match self.method {
            Member::Absent | Member::Null => answers,
            Member::Value => false,
        };
        self.id.as_ref().filter(|_| is_response)
    }
}

/// What a member holds, as far as telling a response needs: an `Option` would not tell a
/// null member from a missing one.
#[derive(Default)]
enum Member {
    #[default]
    Absent,
    Null,
    Value,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Member, D::Error> {
        Option::<IgnoredAny>::deserialize(deserializer).map(|value| match value {
            Some(_) => Member::Value,
            None => Member::Null,
        })
    }
}

/// Decodes the data of a message event and delivers it. Returns whether it held the
/// response to `target`. Malformed data is logged and skipped: one bad event never ends a
/// stream.
pub(crate) fn deliver_event(
    inbox: &Inbox,
    streams: Option<&Streams>,
    event: &Event,
    target: Option<&RequestId>,
) -> bool {
    if event.data.is_empty() || !event.is_message() {
        return false;
    }
    log::trace!("< {}", event.data);
    deliver_text(inbox, streams, &event.data, target).unwrap_or_else(|e| {
        log::debug!(
            "skipping an event that is not JSON-RPC ({e}): {}",
            wire::snippet(&event.data)
        );
        false
    })
}

/// Delivers one JSON-RPC text (message or batch); returns whether it held the response to
/// `target`, which also stops any other stream waiting for it (servers may answer elsewhere).
/// A single message goes to the inbox as text, so its result is decoded once.
pub(crate) fn deliver_text(
    inbox: &Inbox,
    streams: Option<&Streams>,
    text: &str,
    target: Option<&RequestId>,
) -> Result<bool, DecodeError> {
    let peek = match text.trim_start().starts_with('{') {
        true => serde_json::from_str::<Peek>(text).ok(),
        false => None,
    };
    // A batch, or not a message at all: decoded whole, which also names what is wrong.
    let Some(single) = peek else {
        let payload = match Payload::decode(text) {
            Ok(payload) => payload,
            // A request JSON-RPC rejects: the layer above answers it.
            Err(e) => match e.invalid_request() {
                Some(invalid) => {
                    inbox.deliver_invalid(invalid.clone());
                    return Ok(false);
                }
                None => return Err(e),
            },
        };
        return Ok(match payload {
            Payload::Single(message) => deliver(inbox, streams, vec![message], None, target),
            Payload::Batch(messages, invalid, dropped) => {
                if dropped > 0 {
                    log::debug!("dropped {dropped} malformed messages of a batch");
                }
                deliver(inbox, streams, messages, Some(invalid), target)
            }
        });
    };
    // Delivered first: a text that is JSON but not a message settles nothing.
    inbox.deliver_text(text)?;
    Ok(single
        .response_id()
        .is_some_and(|id| settle(streams, id, target)))
}

/// Stops the other streams waiting for the response to `id`; whether `id` is `target`.
fn settle(streams: Option<&Streams>, id: &RequestId, target: Option<&RequestId>) -> bool {
    if let Some(streams) = streams.filter(|_| Some(id) != target) {
        streams.stop_request(id);
    }
    Some(id) == target
}

/// Delivers decoded messages to the inbox, settling the streams of every response: as a
/// batch, with its requests JSON-RPC rejects, when `batch` holds those.
fn deliver(
    inbox: &Inbox,
    streams: Option<&Streams>,
    messages: Vec<Message>,
    batch: Option<Vec<InvalidRequest>>,
    target: Option<&RequestId>,
) -> bool {
    let mut answered = false;
    for message in &messages {
        if let Message::Response(r) = message {
            if let Some(id) = &r.id {
                answered |= settle(streams, id, target);
            }
        }
    }
    match batch {
        Some(invalid) => {
            inbox.deliver_batch(messages, invalid);
        }
        None => {
            for message in messages {
                inbox.deliver(message);
            }
        }
    }
    answered
}
