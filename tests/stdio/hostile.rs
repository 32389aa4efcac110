//! A scripted stdio server answering in hostile ways: lines at and past the size limit, CRLF
//! endings, a byte order mark, NUL bytes, invalid UTF-8, deep nesting, duplicate, unknown,
//! late and mistyped response ids, and closing its input while it runs on. Each affects its
//! own request only, and the connection goes on wherever it can.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::{Client, Error, Options, RequestOptions, StdioConfig};

use crate::python;

/// The size limit the client is given.
const LIMIT: usize = 4096;

/// Bound for anything that should happen at once.
const SOON: Duration = Duration::from_secs(10);

/// A handshake-era server whose `tools/call` answers as the tool's name says; with the
/// argument `bom` its output starts with a UTF-8 byte order mark.
const SERVER: &str = r#"
import json, os, sys, time
out = sys.stdout.buffer
if "bom" in sys.argv:
    out.write(b"\xef\xbb\xbf")
def line(data, end=b"\n"):
    out.write(data + end)
    out.flush()
def result(rid, text):
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}
def sized(rid, n):
    base = len(json.dumps(result(rid, "")))
    return json.dumps(result(rid, "x" * (n - base))).encode()
for raw in sys.stdin.buffer:
    message = json.loads(raw)
    if "method" not in message or "id" not in message:
        continue
    method, rid = message["method"], message["id"]
    if method == "initialize":
        line(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "1"}}}).encode())
        continue
    if method != "tools/call":
        line(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}}).encode())
        continue
    name = message["params"]["name"]
    args = message["params"].get("arguments") or {}
    plain = json.dumps(result(rid, name)).encode()
    if name == "sized":
        line(sized(rid, args["n"]), args["end"].encode())
    elif name == "bom":
        line(b"\xef\xbb\xbf" + plain)
    elif name == "nul":
        line(plain.replace(b'"nul"', b'"n\x00l"'))
    elif name == "bad-utf8":
        line(plain.replace(b'"bad-utf8"', b'"bad\xffutf8"'))
    elif name == "deep":
        d = args["depth"]
        line(b'{"jsonrpc": "2.0", "id": %d, "result": {"content": [], "structuredContent": {"a": %s%s}}}'
             % (rid, b"[" * d, b"]" * d))
    elif name == "brackets":
        line(b"[" * 10_000_000)
        line(plain)
    elif name == "twice":
        line(plain)
        line(plain)
    elif name == "unknown":
        line(json.dumps(result(rid + 1000, "stray")).encode())
        line(plain)
    elif name == "bare-id":
        # Objects that borrow the pending request's id and answer nothing, then the answer.
        line(json.dumps({"id": rid}).encode())
        line(json.dumps({"jsonrpc": "2.0", "id": rid}).encode())
        line(plain)
    elif name == "string-id":
        line(json.dumps(result(str(rid), name)).encode())
    elif name == "late":
        time.sleep(args["ms"] / 1000)
        line(plain)
    elif name == "close-stdin":
        line(plain)
        sys.stderr.write("closing stdin\n")
        sys.stderr.flush()
        os.close(0)
        time.sleep(1000)
    else:
        line(plain)
"#;

fn connect(args: &[&str]) -> Client {
    let config = StdioConfig::new(python::system_python())
        .args(["-c", SERVER])
        .args(args.iter().copied())
        .max_message_size(LIMIT)
        .close_grace(Duration::from_millis(200))
        .kill_grace(Duration::from_millis(200));
    Client::connect_with_options(config, Options::default().with_startup_timeout(SOON))
        .expect("the Python server starts")
}

fn call(client: &Client, name: &str, args: Value, timeout: Duration) -> umcp::Result<String> {
    let options = RequestOptions::default().with_timeout(timeout);
    client
        .with(&options)
        .call_tool(name, args)
        .map(|result| result.text())
}

#[test]
fn a_byte_order_mark_before_a_message_is_skipped() {
    // At the start of the output (where a UTF-8 writer puts it) and before a later line.
    let client = connect(&["bom"]);
    assert_eq!(call(&client, "bom", json!({}), SOON).unwrap(), "bom");
    assert_eq!(call(&client, "after", json!({}), SOON).unwrap(), "after");
}

#[test]
fn a_line_of_exactly_the_limit_is_accepted_whatever_its_line_ending() {
    let client = connect(&[]);
    for end in ["\n", "\r\n"] {
        let args = json!({"n": LIMIT, "end": end});
        let text = call(&client, "sized", args, SOON).unwrap_or_else(|e| panic!("{end:?}: {e}"));
        assert!(
            text.len() > LIMIT / 2 && text.bytes().all(|b| b == b'x'),
            "{end:?}"
        );
        let args = json!({"n": LIMIT + 1, "end": end});
        let err = call(&client, "sized", args, SOON).unwrap_err();
        assert!(
            matches!(err, Error::MessageTooLarge { limit: LIMIT }),
            "{end:?}: {err:?}"
        );
    }
    assert_eq!(call(&client, "after", json!({}), SOON).unwrap(), "after");
}

#[test]
fn a_hostile_response_fails_only_its_own_request() {
    let client = connect(&[]);
    let quick = Duration::from_millis(300);
    for name in ["nul", "bad-utf8"] {
        let err = call(&client, name, json!({}), SOON).unwrap_err();
        assert!(
            matches!(&err, Error::Protocol(m) if m.contains("unreadable")),
            "{name}: {err:?}"
        );
    }
    let err = call(&client, "deep", json!({"depth": 1000}), SOON).unwrap_err();
    assert!(
        matches!(&err, Error::Protocol(m) if m.contains("recursion")),
        "{err:?}"
    );
    // A line of ten million `[` is not JSON-RPC (and over the limit): skipped.
    assert_eq!(
        call(&client, "brackets", json!({}), SOON).unwrap(),
        "brackets"
    );
    // A second response, or one for a request never sent, is dropped.
    assert_eq!(call(&client, "twice", json!({}), SOON).unwrap(), "twice");
    assert_eq!(
        call(&client, "unknown", json!({}), SOON).unwrap(),
        "unknown"
    );
    // The id "2" does not answer the request 2.
    let err = call(&client, "string-id", json!({}), quick).unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    // A response after its request timed out is dropped; the next call gets its own.
    let err = call(&client, "late", json!({"ms": 600}), quick).unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert_eq!(call(&client, "after", json!({}), SOON).unwrap(), "after");
    assert!(client.closed().is_none());
}

#[test]
fn an_id_without_result_or_error_settles_nothing_and_is_counted_as_noise() {
    let client = connect(&[]);
    assert_eq!(
        call(&client, "bare-id", json!({}), SOON).unwrap(),
        "bare-id"
    );
    assert_eq!(call(&client, "after", json!({}), SOON).unwrap(), "after");
    // The skipped lines are counted as stdout noise, whose first lines join the stderr tail.
    client.close();
    let closed = client.closed().expect("closed");
    let tail = closed.stderr_tail.clone().unwrap_or_default();
    assert!(
        tail.contains(r#"[stdout, not JSON-RPC] {"id": "#)
            && tail.contains(r#"[stdout, not JSON-RPC] {"jsonrpc": "2.0", "id": "#),
        "{tail}"
    );
}

#[test]
fn a_server_that_closes_its_input_is_reported_closed() {
    let client = connect(&[]);
    assert_eq!(
        call(&client, "close-stdin", json!({}), SOON).unwrap(),
        "close-stdin"
    );
    // The first request sent afterwards finds stdin broken.
    let err = call(&client, "next", json!({}), SOON).unwrap_err();
    assert!(matches!(err, Error::Closed(_)), "{err:?}");
    // The connection is over, and says so: later calls fail at once.
    let until = Instant::now() + SOON;
    while client.closed().is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let closed = client.closed().expect("the connection is reported closed");
    assert!(closed.reason.contains("input"), "{closed:?}");
    assert_eq!(closed.stderr_tail.as_deref(), Some("closing stdin\n"));
    let started = Instant::now();
    let err = call(&client, "again", json!({}), SOON).unwrap_err();
    assert!(matches!(err, Error::Closed(_)), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "{:?}",
        started.elapsed()
    );
    let started = Instant::now();
    client.close();
    assert!(started.elapsed() < SOON);
}
