//! Interop over stdio with two MCP servers written by others: the TypeScript reference server
//! `@modelcontextprotocol/server-everything` and a server on the Python SDK `mcp` 2.x
//! (`tests/peers/python_server.py`).
//!
//! The peers are installed on first use into `target/peers` (see `test-support/src/peers.rs`).
//! Each test starts its own server process, so the tests run in parallel.

#[path = "../common/mod.rs"]
mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use common::interop::{handler_error, SAMPLED_TEXT};

use umcp::jsonrpc::ErrorObject;
use umcp::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
};

mod python_sdk;
mod server_everything;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// A sampling handler that answers [`SAMPLED_TEXT`] and keeps the request it was given.
fn sampling_handler(
    seen: Arc<Mutex<Option<Value>>>,
) -> impl Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject>
       + Send
       + Sync
       + 'static {
    move |params: CreateMessageRequestParams| {
        if let Ok(mut slot) = seen.lock() {
            *slot = serde_json::to_value(&params).ok();
        }
        serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": SAMPLED_TEXT},
            "model": "umcp-test-model",
            "stopReason": "endTurn"
        }))
        .map_err(handler_error)
    }
}

/// Accepts a form elicitation with the schema's defaults plus `fields`, or declines it when
/// its message contains "decline". Keeps the requested schema.
fn elicitation_handler(
    fields: Value,
    schema: Arc<Mutex<Option<Value>>>,
) -> impl Fn(ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync + 'static {
    move |params: ElicitRequestParams| {
        let ElicitRequestParams::Form(form) = params else {
            return Err(handler_error(format!(
                "expected a form elicitation, got {params:?}"
            )));
        };
        let form_json = serde_json::to_value(&form).map_err(handler_error)?;
        if let Ok(mut slot) = schema.lock() {
            *slot = Some(form_json["requestedSchema"].clone());
        }
        if form_json["message"]
            .as_str()
            .unwrap_or("")
            .contains("decline")
        {
            return serde_json::from_value(json!({"action": "decline"})).map_err(handler_error);
        }
        let mut answer =
            serde_json::to_value(ElicitResult::accept_defaults(&form)).map_err(handler_error)?;
        if !answer["content"].is_object() {
            answer["content"] = json!({});
        }
        if let (Some(content), Some(fields)) =
            (answer["content"].as_object_mut(), fields.as_object())
        {
            content.extend(fields.clone());
        }
        serde_json::from_value(answer).map_err(handler_error)
    }
}
