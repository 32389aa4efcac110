//! A request accepted without its response while the GET stream is open waits for the
//! response there, and fails at once when that stream ends for good before bringing it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::transport::http::ReconnectPolicy;
use umcp::types::CallToolResult;
use umcp::{Client, Error, HttpConfig, RequestOptions};

use super::{call, PROMPT, TIMEOUT};
use crate::http_server::{serve, Server};
use crate::WAIT;

/// The JSON-RPC response to `body` with `result`.
fn answer(body: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": body["id"], "result": result}).to_string()
}

/// The `initialize` result of the fake servers here.
fn initialized(body: &Value) -> String {
    answer(
        body,
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "elsewhere", "version": "1.0.0"}
        }),
    )
}

/// Calls tool `name` with [`TIMEOUT`]; returns the outcome and how long it took.
fn call_tool(client: &Client, name: &str) -> (umcp::Result<CallToolResult>, Duration) {
    let options = RequestOptions::default().with_timeout(TIMEOUT);
    let started = Instant::now();
    let outcome = client.with(&options).call_tool(name, json!({}));
    (outcome, started.elapsed())
}

/// A tool result carrying `text`.
fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// Asserts that `outcome` is the prompt failure of a call accepted with 202 whose GET stream
/// ended for good (`why`) before the response.
fn assert_lost(outcome: umcp::Result<CallToolResult>, took: Duration, id: &Value, why: &str) {
    assert!(
        took < PROMPT,
        "the call waited {took:?} for a stream that ended"
    );
    match outcome {
        Err(Error::ResponseLost(message)) => {
            for part in [
                "HTTP 202",
                "tools/call",
                &format!("request {id}"),
                "GET stream",
                why,
            ] {
                assert!(message.contains(part), "`{part}` missing from: {message}");
            }
        }
        other => panic!("expected a lost response, got {other:?}"),
    }
}

/// Closes `client`, then asserts that `server` never heard `notifications/cancelled`: the
/// session the request ran in is gone, and no other knows it. (Closing waits for the client's
/// sending threads, which send such notices.)
fn close_without_cancelling(client: &Client, server: &Server) {
    client.close();
    while let Some(seen) = server.next_within(Duration::ZERO) {
        let method = seen.rpc_method();
        assert_ne!(
            method.as_deref(),
            Some("notifications/cancelled"),
            "{seen:?}"
        );
    }
}

#[test]
fn a_call_accepted_with_202_is_answered_on_the_open_get_stream() {
    let (calls_tx, calls) = crossbeam_channel::unbounded::<Value>();
    let server = serve(move |seen, reply| {
        let body = seen.json();
        match (seen.method.as_str(), body["method"].as_str()) {
            ("GET", _) => {
                let mut sse = reply.sse(&[]);
                let _ = sse.send(": open\n\n");
                // The answer to the call goes here, after its POST was accepted with 202.
                if let Ok(id) = calls.recv_timeout(WAIT) {
                    let result = text_result("on the GET stream");
                    let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
                    let _ = sse.message(&message.to_string());
                }
                std::thread::sleep(WAIT);
            }
            ("POST", Some("initialize")) => {
                reply.json(200, &[("Mcp-Session-Id", "s-1")], &initialized(&body))
            }
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

#[test]
fn a_call_waiting_on_the_get_stream_fails_when_reopening_it_finds_the_session_expired() {
    // `parked` is accepted with 202; `streamed` is answered on its own event stream, which
    // the end of the GET stream must not touch.
    let (parked_tx, parked) = crossbeam_channel::unbounded::<Value>();
    let (accepted_tx, accepted) = crossbeam_channel::unbounded::<Value>();
    let (streamed_tx, streamed) = crossbeam_channel::unbounded::<Value>();
    let (refused_tx, refused) = crossbeam_channel::unbounded::<()>();
    let gets = AtomicUsize::new(0);
    let server = serve(move |seen, reply| {
        let body = seen.json();
        let tool = body["params"]["name"].as_str().unwrap_or_default();
        match (seen.method.as_str(), body["method"].as_str()) {
            ("GET", _) if gets.fetch_add(1, Ordering::SeqCst) == 0 => {
                // Reopened 100 ms after it ends: time for the client to read the 202.
                let mut sse = reply.sse(&[]);
                let _ = sse.send("retry: 100\n\n");
                let _ = parked.recv_timeout(WAIT);
                sse.end();
            }
            ("GET", _) => {
                // The server forgot the session meanwhile.
                reply.status(404, &[]);
                let _ = refused_tx.send(());
            }
            ("POST", Some("initialize")) => {
                reply.json(200, &[("Mcp-Session-Id", "s-1")], &initialized(&body))
            }
            ("POST", Some("tools/call")) if tool == "streamed" => {
                let mut sse = reply.sse(&[]);
                let _ = streamed_tx.send(body["id"].clone());
                if refused.recv_timeout(WAIT).is_ok() {
                    let _ = sse.message(&answer(&body, text_result("on its own stream")));
                }
            }
            ("POST", Some("tools/call")) => {
                reply.status(202, &[]);
                let _ = parked_tx.send(body["id"].clone());
                let _ = accepted_tx.send(body["id"].clone());
            }
            ("POST", _) => reply.status(202, &[]),
            _ => reply.status(405, &[]),
        }
    });
    let policy = ReconnectPolicy::new(3, Duration::from_millis(20), Duration::from_millis(100));
    let config = HttpConfig::new(server.url("/mcp")).reconnect(policy);
    let client = Arc::new(Client::connect(config).expect("connect"));
    let other = Arc::clone(&client);
    let on_its_stream = std::thread::spawn(move || call_tool(&other, "streamed"));
    streamed
        .recv_timeout(WAIT)
        .expect("the streamed call is out");
    let (outcome, took) = call_tool(&client, "parked");
    let id = accepted.recv_timeout(WAIT).expect("the call was accepted");
    assert_lost(outcome, took, &id, "the session expired");
    let (answered, _) = on_its_stream.join().expect("the streamed call's thread");
    assert_eq!(
        answered.expect("answered on its own stream").text(),
        "on its own stream"
    );
    close_without_cancelling(&client, &server);
}

#[test]
fn a_call_waiting_on_the_get_stream_fails_when_another_request_finds_the_session_expired() {
    let (accepted_tx, accepted) = crossbeam_channel::unbounded::<Value>();
    let sessions = AtomicUsize::new(0);
    let server = serve(move |seen, reply| {
        let body = seen.json();
        let session = seen.header("mcp-session-id").map(str::to_owned);
        match (seen.method.as_str(), body["method"].as_str()) {
            ("POST", Some("initialize")) => {
                let id = format!("s-{}", sessions.fetch_add(1, Ordering::SeqCst) + 1);
                reply.json(200, &[("Mcp-Session-Id", &id)], &initialized(&body));
            }
            // Each session's GET stream stays open; the client drops the first one.
            ("GET", _) => {
                let mut sse = reply.sse(&[]);
                let _ = sse.send(": open\n\n");
                std::thread::sleep(WAIT);
            }
            ("POST", Some("tools/call")) => {
                reply.status(202, &[]);
                let _ = accepted_tx.send(body["id"].clone());
            }
            // The first session expires once the call is accepted: the next request finds it.
            ("POST", Some("ping")) if session.as_deref() == Some("s-1") => reply.status(404, &[]),
            ("POST", Some("ping")) => reply.json(200, &[], &answer(&body, json!({}))),
            ("POST", _) => reply.status(202, &[]),
            _ => reply.status(405, &[]),
        }
    });
    let client = Arc::new(Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect"));
    let caller = Arc::clone(&client);
    let waiting = std::thread::spawn(move || call(&caller));
    let id = accepted.recv_timeout(WAIT).expect("the call was accepted");
    // Answered 404: the client sets up a new session, and sends the ping again there.
    client.ping().expect("ping on a new session");
    let (outcome, took) = waiting.join().expect("the calling thread");
    assert_lost(outcome, took, &id, "the session expired");
    close_without_cancelling(&client, &server);
}
