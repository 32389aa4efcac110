//! A request the server accepts without answering it (HTTP 202, or a 200 with an empty body),
//! which a request must never get over Streamable HTTP: the call fails at once when no GET
//! stream could carry the response, and the server, which may still be working on it, is
//! asked to stop; with the GET stream open the call waits for the response there.

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use serde_json::{json, Value};
use umcp::types::CallToolResult;
use umcp::{CancelHandle, Client, Era, Error, HttpConfig, RequestOptions};

use crate::http_server::{serve, Reply, Server};
use crate::WAIT;

mod get_stream;

/// The calls' own timeout: a failure that waited for it would be no prompt failure.
const TIMEOUT: Duration = Duration::from_secs(20);

/// What a call that fails at once may take at most: a loose bound, far below [`TIMEOUT`].
const PROMPT: Duration = Duration::from_secs(5);

/// How the server answers the POST of a `tools/call`.
type Unanswered = fn(Reply);

/// The era a fake server speaks.
#[derive(Clone, Copy)]
enum Speaks {
    /// The handshake era, with a session; the GET stream is refused (405).
    Handshake,
    /// The stateless era (2026-07-28): no session, no GET stream.
    Stateless,
}

/// A server that answers `tools/call` with `unanswered`, and everything else as it should;
/// `calls` hears the body of every `tools/call` and `notifications/cancelled`.
fn server(speaks: Speaks, unanswered: Unanswered, calls: Sender<Value>) -> Server {
    serve(move |seen, reply| {
        let body = seen.json();
        let answer = |result: Value| {
            json!({"jsonrpc": "2.0", "id": body["id"], "result": result}).to_string()
        };
        match (seen.method.as_str(), body["method"].as_str(), speaks) {
            ("POST", Some("tools/call"), _) => {
                let _ = calls.send(body.clone());
                unanswered(reply);
            }
            ("POST", Some("notifications/cancelled"), _) => {
                let _ = calls.send(body.clone());
                reply.status(202, &[]);
            }
            ("POST", Some("server/discover"), Speaks::Stateless) => {
                let result = json!({"supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}}, "resultType": "complete"});
                reply.json(200, &[], &answer(result));
            }
            ("POST", Some("initialize"), Speaks::Handshake) => reply.json(
                200,
                &[("Mcp-Session-Id", "s-1")],
                &answer(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "unanswering", "version": "1.0.0"}
                })),
            ),
            ("POST", Some("ping"), _) => reply.json(200, &[], &answer(json!({}))),
            ("POST", Some(_), _) if !body["id"].is_null() => {
                let error = json!({"code": -32601, "message": "Method not found"});
                let message = json!({"jsonrpc": "2.0", "id": body["id"], "error": error});
                reply.json(200, &[], &message.to_string());
            }
            ("POST", _, _) => reply.status(202, &[]),
            _ => reply.status(405, &[]),
        }
    })
}

/// Calls a tool with [`TIMEOUT`]; returns the outcome and how long it took.
fn call(client: &Client) -> (umcp::Result<CallToolResult>, Duration) {
    call_with(client, RequestOptions::default())
}

/// Calls a tool with `options` and [`TIMEOUT`]; returns the outcome and how long it took.
fn call_with(client: &Client, options: RequestOptions) -> (umcp::Result<CallToolResult>, Duration) {
    let options = options.with_timeout(TIMEOUT);
    let started = Instant::now();
    let outcome = client.with(&options).call_tool("work", json!({}));
    (outcome, started.elapsed())
}

/// The id of the next `tools/call` the server saw.
fn next_call(calls: &Receiver<Value>) -> Value {
    let body = calls
        .recv_timeout(WAIT)
        .expect("the call reached the server");
    assert_eq!(body["method"], "tools/call", "{body}");
    body["id"].clone()
}

/// Asserts that `outcome` is the prompt protocol error for a request answered with `status`
/// and no response, naming the method and the request id the server saw.
fn assert_fails_at_once(
    outcome: umcp::Result<CallToolResult>,
    took: Duration,
    status: &str,
    id: &Value,
) {
    assert!(
        took < PROMPT,
        "the call waited {took:?} for a response that cannot come"
    );
    match outcome {
        Err(Error::Protocol(message)) => {
            for part in [
                status,
                "tools/call",
                &format!("request {id}"),
                "no response",
            ] {
                assert!(message.contains(part), "`{part}` missing from: {message}");
            }
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[test]
fn a_call_accepted_with_202_fails_at_once_without_a_get_stream() {
    let (calls_tx, calls) = crossbeam_channel::unbounded();
    let server = server(Speaks::Handshake, |reply| reply.status(202, &[]), calls_tx);
    // The GET stream is asked for, and refused with 405.
    let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    let (outcome, took) = call(&client);
    let id = next_call(&calls);
    assert_fails_at_once(outcome, took, "HTTP 202", &id);
    // The connection is still usable.
    client.ping().expect("ping after the failed call");
    client.close();
}

#[test]
fn a_call_answered_with_an_empty_200_fails_at_once_without_a_get_stream() {
    // Without a body at all, and with a JSON content type and nothing but white space.
    let answers: [Unanswered; 2] = [
        |reply| reply.status(200, &[]),
        |reply| reply.json(200, &[], " \r\n"),
    ];
    for unanswered in answers {
        let (calls_tx, calls) = crossbeam_channel::unbounded();
        let server = server(Speaks::Handshake, unanswered, calls_tx);
        let config = HttpConfig::new(server.url("/mcp")).standalone_stream(false);
        let client = Client::connect(config).expect("connect");
        let (outcome, took) = call(&client);
        let id = next_call(&calls);
        assert_fails_at_once(outcome, took, "HTTP 200 with an empty body", &id);
        client.ping().expect("ping after the failed call");
        client.close();
    }
}

#[test]
fn a_stateless_call_accepted_with_202_fails_at_once() {
    let (calls_tx, calls) = crossbeam_channel::unbounded();
    let server = server(Speaks::Stateless, |reply| reply.status(202, &[]), calls_tx);
    let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    let (outcome, took) = call(&client);
    let id = next_call(&calls);
    assert_fails_at_once(outcome, took, "HTTP 202", &id);
    client.ping().expect("ping after the failed call");
    client.close();
}

#[test]
fn a_call_accepted_without_a_response_and_no_get_stream_is_cancelled_on_the_server() {
    let answers: [(Unanswered, &str); 2] = [
        (|reply| reply.status(202, &[]), "HTTP 202"),
        (
            |reply| reply.status(200, &[]),
            "HTTP 200 with an empty body",
        ),
    ];
    for (unanswered, status) in answers {
        // Sent from the caller's thread, and (with a cancel handle) from a sending thread.
        for cancellable in [false, true] {
            let (calls_tx, calls) = crossbeam_channel::unbounded();
            let server = server(Speaks::Handshake, unanswered, calls_tx);
            let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
            let mut options = RequestOptions::default();
            if cancellable {
                options = options.with_cancel(CancelHandle::new());
            }
            let (outcome, took) = call_with(&client, options);
            let id = next_call(&calls);
            assert_fails_at_once(outcome, took, status, &id);
            // The server has the request and may be working on it: it is told to stop.
            let cancel = calls
                .recv_timeout(WAIT)
                .expect("notifications/cancelled reached the server");
            assert_eq!(cancel["method"], "notifications/cancelled", "{cancel}");
            assert_eq!(cancel["params"]["requestId"], id, "{cancel}");
            let reason = cancel["params"]["reason"].as_str().unwrap_or_default();
            assert!(!reason.is_empty(), "a reason: {cancel}");
            client.ping().expect("ping after the failed call");
            client.close();
            assert!(calls.try_recv().is_err(), "one cancellation");
        }
    }
}
