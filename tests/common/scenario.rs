//! Helpers for mocks of the conformance suite's client scenarios on the loopback HTTP server
//! (`http_server.rs`): JSON-RPC answers and refusals, and what the mock saw.

#![allow(dead_code)] // Each test file uses a different part of this module.

use std::time::Duration;

use serde_json::{json, Value};

use super::http_server::{Reply, Seen, Server};

/// Answers request `id` with `result`, 200 and a session id, as the suite's mocks do.
pub fn answer(reply: Reply, id: &Value, result: Value) {
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result});
    reply.json(200, &[("mcp-session-id", "session-1")], &body.to_string());
}

/// Refuses request `id` with a JSON-RPC error under HTTP `status`.
pub fn refuse(reply: Reply, status: u16, id: &Value, code: i64, message: &str) {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    reply.json(status, &[], &body.to_string());
}

/// The generic answer of the suite's base scenario: notifications accepted, `GET` refused,
/// `DELETE` accepted; `None` when `seen` is a request the mock must answer itself.
pub fn base(seen: &Seen, reply: Reply) -> Option<Reply> {
    match seen.method.as_str() {
        "GET" => reply.status(405, &[]),
        "DELETE" => reply.status(200, &[]),
        _ if seen.rpc_id().is_null() => reply.status(202, &[]),
        _ => return Some(reply),
    }
    None
}

/// Every request the server saw so far (waiting briefly for any still arriving), POSTs only.
pub fn posts(server: &Server) -> Vec<Seen> {
    let mut seen = Vec::new();
    while let Some(request) = server.next_within(Duration::from_millis(150)) {
        if request.method == "POST" {
            seen.push(request);
        }
    }
    seen
}

/// The JSON-RPC methods of `requests`, in order.
pub fn methods(requests: &[Seen]) -> Vec<String> {
    requests.iter().filter_map(Seen::rpc_method).collect()
}
