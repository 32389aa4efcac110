//! A request the server accepts without answering it (HTTP 202, or a 200 with an empty body),
//! which a request must never get over Streamable HTTP: the call fails at once when no GET
//! stream could carry the response, and waits for it there when one is open.

use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use serde_json::{json, Value};
use umcp::types::CallToolResult;
use umcp::{Client, Era, Error, HttpConfig, RequestOptions};

use crate::http_server::{serve, Reply, Server};
use crate::WAIT;

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
/// `calls` hears the id of every `tools/call`.
fn server(speaks: Speaks, unanswered: Unanswered, calls: Sender<Value>) -> Server {
    serve(move |seen, reply| {
        let body = seen.json();
        let answer = |result: Value| {
            json!({"jsonrpc": "2.0", "id": body["id"], "result": result}).to_string()
        };
        match (seen.method.as_str(), body["method"].as_str(), speaks) {
            ("POST", Some("tools/call"), _) => {
                let _ = calls.send(body["id"].clone());
                unanswered(reply);
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
    let options = RequestOptions::default().with_timeout(TIMEOUT);
    let started = Instant::now();
    let outcome = client.call_tool_with("work", json!({}), &options);
    (outcome, started.elapsed())
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
    let id = calls
        .recv_timeout(WAIT)
        .expect("the call reached the server");
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
        let config = HttpConfig::new(server.url("/mcp")).get_stream(false);
        let client = Client::connect(config).expect("connect");
        let (outcome, took) = call(&client);
        let id = calls
            .recv_timeout(WAIT)
            .expect("the call reached the server");
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
    let id = calls
        .recv_timeout(WAIT)
        .expect("the call reached the server");
    assert_fails_at_once(outcome, took, "HTTP 202", &id);
    client.ping().expect("ping after the failed call");
    client.close();
}

#[test]
fn a_call_accepted_with_202_is_answered_on_the_open_get_stream() {
    let (calls_tx, calls) = crossbeam_channel::unbounded::<Value>();
    let server = serve(move |seen, reply| {
        let body = seen.json();
        let answer = |result: Value| {
            json!({"jsonrpc": "2.0", "id": body["id"], "result": result}).to_string()
        };
        match (seen.method.as_str(), body["method"].as_str()) {
            ("GET", _) => {
                let mut sse = reply.sse(&[]);
                let _ = sse.send(": open\n\n");
                // The answer to the call goes here, after its POST was accepted with 202.
                if let Ok(id) = calls.recv_timeout(WAIT) {
                    let result =
                        json!({"content": [{"type": "text", "text": "on the GET stream"}]});
                    let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
                    let _ = sse.message(&message.to_string());
                }
                std::thread::sleep(WAIT);
            }
            ("POST", Some("initialize")) => reply.json(
                200,
                &[("Mcp-Session-Id", "s-1")],
                &answer(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "elsewhere", "version": "1.0.0"}
                })),
            ),
            ("POST", Some("tools/call")) => {
                reply.status(202, &[]);
                let _ = calls_tx.send(body["id"].clone());
            }
            ("POST", Some(_)) if !body["id"].is_null() => {
                let error = json!({"code": -32601, "message": "Method not found"});
                let message = json!({"jsonrpc": "2.0", "id": body["id"], "error": error});
                reply.json(200, &[], &message.to_string());
            }
            ("POST", _) => reply.status(202, &[]),
            _ => reply.status(405, &[]),
        }
    });
    let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
    let (outcome, _) = call(&client);
    assert_eq!(
        outcome.expect("answered on the GET stream").text(),
        "on the GET stream"
    );
    client.close();
}
