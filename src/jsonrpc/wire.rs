//! The serialised shape of a message, with its members in the conventional order.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::{ErrorObject, Message, RequestId, VERSION};

/// The serialised shape of any message; borrowed so encoding copies nothing.
#[derive(Serialize)]
pub(super) struct Wire<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<WireId<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorObject>,
}

/// A response about an unparsable request carries `"id": null`; others carry their id.
#[derive(Serialize)]
#[serde(untagged)]
enum WireId<'a> {
    Id(&'a RequestId),
    Null(()),
}

impl<'a> From<&'a Message> for Wire<'a> {
    fn from(message: &'a Message) -> Wire<'a> {
        let mut wire = Wire {
            jsonrpc: VERSION,
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
        };
        match message {
            Message::Request(r) => {
                wire.id = Some(WireId::Id(&r.id));
                wire.method = Some(&r.method);
                wire.params = r.params.as_ref();
            }
            Message::Notification(n) => {
                wire.method = Some(&n.method);
                wire.params = n.params.as_ref();
            }
            Message::Response(r) => {
                wire.id = Some(r.id.as_ref().map_or(WireId::Null(()), WireId::Id));
                match &r.result {
                    Ok(v) => wire.result = Some(v),
                    Err(e) => wire.error = Some(e),
                }
            }
        }
        wire
    }
}

/// Reads a `T` out of a value by way of its text: decoding from [`Value`] too would compile a
/// second decoder per type, a good part of a small process's memory, for values that are rare.
pub(crate) fn decode_value<T: DeserializeOwned>(value: &Value) -> serde_json::Result<T> {
    serde_json::from_str(&value.to_string())
}
