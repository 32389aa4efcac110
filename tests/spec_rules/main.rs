//! Tests for client rules of the spec that depend on the protocol era or version: empty
//! cursors, tool-enabled sampling, roots, progress resets, batches, cancellation and the
//! `completions` capability.

#[allow(dead_code)] // Not every helper of the fake server is used here.
#[path = "../common/memory.rs"]
mod memory;
use umcp_test_support::python;

use std::time::Duration;

use memory::FakeServer;
use serde_json::json;
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Request, Response};
use umcp::{Options, ProtocolMode};

mod cancellation;
mod cursors_and_roots;
mod sampling;
mod versions;

/// Bound for anything that should happen at once.
const SOON: Duration = Duration::from_secs(5);

/// A stateless-era (2026-07-28) fake server offering tools and prompts; it refuses
/// `initialize`, as such servers do.
fn modern_server(name: &str) -> FakeServer {
    let server = FakeServer::named(name);
    server.on("server/discover", |_, _| {
        Some(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "prompts": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}},
        }))
    });
    server.on("initialize", |peer, request| {
        let error = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "no initialize");
        peer.send(Response::err(request.id.clone(), error).into());
        None
    });
    server
}

fn modern(options: Options) -> Options {
    options.with_protocol_mode(ProtocolMode::modern())
}

fn legacy(options: Options) -> Options {
    options.with_protocol_mode(ProtocolMode::Legacy)
}

/// The requests the client sent with this method, in order.
fn requests(server: &FakeServer, method: &str) -> Vec<Request> {
    let received = server.received.lock().unwrap();
    received
        .iter()
        .filter_map(|m| match m {
            Message::Request(r) if r.method == method => Some(r.clone()),
            _ => None,
        })
        .collect()
}
