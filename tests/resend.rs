//! What the stateless era sends again over HTTP, and what it never does: a `tools/call` goes
//! again after -32020 only when the server refused its POST (the spec's HTTP 400), never
//! after a -32020 that came as a response on a stream that carried progress first; after a
//! lost response, only methods safe to repeat go again, never a vendor's method.

#![cfg(feature = "http")]

use umcp_test_support::http_server;
#[path = "common/scenario.rs"]
mod scenario;

use serde_json::{json, Value};
use umcp::jsonrpc::ErrorCode;
use umcp::{Client, Era, Error, HttpConfig};

/// How the mock answers `tools/call` (and the vendor method `acme/transfer`).
#[derive(Clone, Copy)]
enum Answer {
    /// Progress ("money moved"), then -32020, as the last message of a 200 event stream;
    /// the second call gets a result.
    MismatchAfterProgress,
    /// HTTP 400 with -32020, before anything ran; the second call gets a result.
    MismatchRefused,
    /// Progress, then the stream ends with no response (the response is lost).
    StreamBreaks,
}

/// A stateless server answering `tools/call` and `acme/transfer` as `answer` says, the
/// second time with a result; its `tools/list` is answered plainly.
fn mock(answer: Answer) -> http_server::Server {
    let calls = std::sync::atomic::AtomicUsize::new(0);
    http_server::serve(move |seen, reply| {
        let Some(reply) = scenario::base(&seen, reply) else {
            return;
        };
        let body = seen.json();
        let id = &body["id"];
        let result = match body["method"].as_str().unwrap_or_default() {
            "server/discover" => json!({
                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "bank", "version": "1"}},
            }),
            "tools/list" => json!({"resultType": "complete", "tools": [
                {"name": "transfer", "inputSchema": {"type": "object"}},
                {"name": "balance", "inputSchema": {"type": "object"},
                 "annotations": {"readOnlyHint": true}},
            ]}),
            "tools/call" | "acme/transfer" => {
                let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if n == 0 {
                    return first_answer(answer, reply, id);
                }
                json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}]})
            }
            _ => json!({"resultType": "complete"}),
        };
        scenario::answer(reply, id, result)
    })
}

fn first_answer(answer: Answer, reply: http_server::Reply, id: &Value) {
    if let Answer::MismatchRefused = answer {
        return scenario::refuse(reply, 400, id, -32020, "header mismatch");
    }
    let mut stream = reply.sse(&[]);
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": "t", "progress": 1, "message": "money moved (call #1)"}});
    let _ = stream.message(&progress.to_string());
    let error = match answer {
        Answer::MismatchAfterProgress => json!({"code": -32020, "message": "header mismatch"}),
        Answer::StreamBreaks | Answer::MismatchRefused => return stream.end(),
    };
    let _ = stream.message(&json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string());
    stream.end();
}

fn connect(server: &http_server::Server) -> Client {
    let client = Client::connect(HttpConfig::new(server.url("/mcp"))).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    client
}

/// How many times the server was asked `method`.
fn asked(server: &http_server::Server, method: &str) -> usize {
    let methods = scenario::methods(&scenario::posts(server));
    methods.iter().filter(|m| *m == method).count()
}

#[test]
fn a_header_mismatch_after_progress_on_a_stream_is_the_calls_outcome_not_a_reason_to_resend() {
    let server = mock(Answer::MismatchAfterProgress);
    let client = connect(&server);
    let outcome = client.call_tool("transfer", json!({}));
    let Err(Error::Rpc(error)) = &outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(error.code, ErrorCode::HEADER_MISMATCH);
    assert_eq!(
        asked(&server, "tools/call"),
        1,
        "the transfer was not repeated"
    );
    client.close();
}

#[test]
fn a_header_mismatch_refusing_the_post_re_lists_and_resends_once() {
    let server = mock(Answer::MismatchRefused);
    let client = connect(&server);
    let result = client.call_tool("transfer", json!({})).expect("sent again");
    assert_eq!(result.text(), "done");
    let methods = scenario::methods(&scenario::posts(&server));
    let calls: Vec<&String> = methods.iter().filter(|m| m.starts_with("tools/")).collect();
    assert_eq!(calls, ["tools/call", "tools/list", "tools/call"]);
    client.close();
}

#[test]
fn a_vendor_method_whose_response_is_lost_is_not_sent_again() {
    let server = mock(Answer::StreamBreaks);
    let client = connect(&server);
    let outcome = client.request_raw("acme/transfer", Some(json!({"amount": 100})));
    assert!(
        matches!(outcome, Err(Error::ResponseLost(_))),
        "{outcome:?}"
    );
    assert_eq!(asked(&server, "acme/transfer"), 1);
    client.close();
}

#[test]
fn a_tool_call_whose_response_is_lost_goes_again_only_for_a_read_only_tool() {
    let server = mock(Answer::StreamBreaks);
    let client = connect(&server);
    client.list_tools(None).expect("tools/list");
    let outcome = client.call_tool("transfer", json!({}));
    assert!(
        matches!(outcome, Err(Error::ResponseLost(_))),
        "{outcome:?}"
    );
    assert_eq!(asked(&server, "tools/call"), 1);
    client.close();

    let server = mock(Answer::StreamBreaks);
    let client = connect(&server);
    client.list_tools(None).expect("tools/list");
    let result = client.call_tool("balance", json!({})).expect("sent again");
    assert_eq!(result.text(), "done");
    assert_eq!(asked(&server, "tools/call"), 2);
    client.close();
}
