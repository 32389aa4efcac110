//! A stdio server sending requests whose `id` has a type JSON-RPC and MCP forbid: each gets
//! `-32600 Invalid Request` with a null id on the server's stdin, no handler runs, and a
//! flood of them from a server that does not read meanwhile leaves calls working. A request
//! whose `method` is not a string gets the same error with its own id, and one with an integer
//! id beyond `i64` is served like any other; beyond 64 bits, it gets the error with its own
//! digits. In a batch (protocol 2025-03-26), each of them gets its own reply all the same.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::types::{ListRootsResult, Root};
use umcp::{Client, Options, StdioConfig};

use crate::python;

/// Bound for anything that should happen at once.
const SOON: Duration = Duration::from_secs(10);

/// A handshake-era server, at the protocol version its first argument names, with these
/// tools: `ask` sends a `roots/list` request with each id of a forbidden type, `flood` sends
/// `n` of them without reading its input meanwhile, `bad-methods` sends requests whose
/// `method` is not a string, `big-id` a `roots/list` request with the id 2^64 - 1, `wide-id`
/// one with the id 2^64, `batch` a batch of a valid `roots/list` request (id `"fine"`), a
/// notification and one request of each kind above, `batch-flood` a batch of `n` requests
/// with ids of a forbidden type, and `replies` reports every response the server has read so
/// far, as it read it, with its id as written (`id_text`).
const SERVER: &str = r#"
import json, sys
VERSION = sys.argv[1]
FORBIDDEN = [1.5, {"n": 1}, [1], True, None]
BAD_METHODS = [[7, 42], ["s-1", None], [8, {"name": "roots/list"}]]
replies = []
def roots(rid):
    return {"jsonrpc": "2.0", "id": rid, "method": "roots/list"}
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
def ask(rid):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "roots/list"}) + "\n")
for line in sys.stdin:
    message = json.loads(line)
    if "method" not in message:
        replies.append(dict(message, id_text=json.dumps(message.get("id"))))
        continue
    if "id" not in message:
        continue
    method, rid = message["method"], message["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": VERSION,
              "capabilities": {"tools": {}}, "serverInfo": {"name": "bad-ids", "version": "1"}}})
    elif method == "tools/call":
        name = message["params"]["name"]
        arguments = message["params"].get("arguments") or {}
        if name == "ask":
            for bad in FORBIDDEN:
                ask(bad)
        elif name == "bad-methods":
            for bad, method in BAD_METHODS:
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": bad, "method": method}) + "\n")
        elif name == "big-id":
            ask(2**64 - 1)
        elif name == "wide-id":
            ask(2**64)
        elif name == "batch":
            note = {"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "batched"}}
            bad_method = {"jsonrpc": "2.0", "id": 7, "method": 42}
            send([roots("fine"), note, roots(1.5), roots(None), bad_method, roots(2**64)])
        elif name == "batch-flood":
            send([roots(FORBIDDEN[k % len(FORBIDDEN)]) for k in range(arguments["n"])])
        elif name == "flood":
            for k in range(arguments["n"]):
                ask(FORBIDDEN[k % len(FORBIDDEN)])
        structured = {"replies": replies} if name == "replies" else {}
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": name}],
              "structuredContent": structured}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
"#;

/// A client of the server above whose roots handler counts its calls in `asked`.
fn connect(asked: &Arc<AtomicUsize>) -> Client {
    connect_at("2025-11-25", asked)
}

/// A client of the server above at protocol `version`.
fn connect_at(version: &str, asked: &Arc<AtomicUsize>) -> Client {
    let asked = asked.clone();
    let options = Options::default().with_roots_handler(move || {
        asked.fetch_add(1, Ordering::SeqCst);
        Ok(ListRootsResult::new(vec![Root::new("file:///tmp")]))
    });
    let config = StdioConfig::new(python::system_python()).args(["-c", SERVER, version]);
    let client = Client::connect_with_options(config, options).expect("the Python server starts");
    assert_eq!(client.protocol_version(), version);
    client
}

/// The responses the server has read, once there are at least `count` (or the wait ran out).
fn replies(client: &Client, count: usize) -> Vec<Value> {
    let until = Instant::now() + SOON;
    loop {
        let result = client.call_tool("replies", json!({})).expect("replies");
        let replies = result.structured_content.unwrap_or_default()["replies"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if replies.len() >= count || Instant::now() >= until {
            return replies;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}}`,
/// perhaps with `data`.
fn assert_invalid_request(reply: &Value) {
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
    assert_eq!(reply.get("id"), Some(&Value::Null), "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["error"]["message"], "Invalid Request", "{reply}");
    assert!(reply.get("result").is_none(), "{reply}");
}

#[test]
fn requests_with_ids_of_forbidden_types_are_answered_invalid_request_on_stdin() {
    let asked = Arc::new(AtomicUsize::new(0));
    let client = connect(&asked);
    assert_eq!(client.call_tool("ask", json!({})).unwrap().text(), "ask");
    let replies = replies(&client, 5);
    assert_eq!(replies.len(), 5, "{replies:?}");
    replies.iter().for_each(assert_invalid_request);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "the roots handler ran");
    client.close();
}

#[test]
fn a_flood_of_invalid_requests_from_a_server_that_does_not_read_leaves_calls_working() {
    const FLOOD: usize = 20_000;
    let asked = Arc::new(AtomicUsize::new(0));
    let client = connect(&asked);
    // The server reads nothing while it writes the flood: the replies fill the pipe, then the
    // transport's queue, and the rest are dropped rather than held.
    survives_flood(&client, "flood", FLOOD, &asked);
}

#[test]
fn requests_whose_method_is_not_a_string_are_answered_invalid_request_with_their_id() {
    let asked = Arc::new(AtomicUsize::new(0));
    let client = connect(&asked);
    let result = client.call_tool("bad-methods", json!({})).unwrap();
    assert_eq!(result.text(), "bad-methods");
    let replies = replies(&client, 3);
    let ids: Vec<&Value> = replies.iter().map(|reply| &reply["id"]).collect();
    assert_eq!(ids, [&json!(7), &json!("s-1"), &json!(8)], "{replies:?}");
    for reply in &replies {
        assert_eq!(reply["error"]["code"], -32600, "{reply}");
        assert_eq!(reply["error"]["message"], "Invalid Request", "{reply}");
        assert!(reply.get("result").is_none(), "{reply}");
    }
    assert_eq!(asked.load(Ordering::SeqCst), 0, "the roots handler ran");
    client.close();
}

#[test]
fn a_request_with_an_integer_id_beyond_i64_is_served_and_answered_with_that_id() {
    let asked = Arc::new(AtomicUsize::new(0));
    let client = connect(&asked);
    assert_eq!(
        client.call_tool("big-id", json!({})).unwrap().text(),
        "big-id"
    );
    let replies = replies(&client, 1);
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(replies[0]["id"], json!(u64::MAX), "{}", replies[0]);
    assert_eq!(replies[0]["result"]["roots"][0]["uri"], "file:///tmp");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "the roots handler did not run once"
    );
    client.close();
}

#[test]
fn a_request_with_an_integer_id_beyond_64_bits_is_answered_invalid_request_with_that_id() {
    let asked = Arc::new(AtomicUsize::new(0));
    let client = connect(&asked);
    let result = client.call_tool("wide-id", json!({})).unwrap();
    assert_eq!(result.text(), "wide-id");
    let replies = replies(&client, 1);
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(
        replies[0]["id_text"], "18446744073709551616",
        "{}",
        replies[0]
    );
    assert_eq!(replies[0]["error"]["code"], -32600, "{}", replies[0]);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "the roots handler ran");
    client.close();
}

#[test]
fn each_invalid_request_in_a_batch_is_answered_invalid_request_on_stdin() {
    let asked = Arc::new(AtomicUsize::new(0));
    let client = connect_at("2025-03-26", &asked);
    assert_eq!(
        client.call_tool("batch", json!({})).unwrap().text(),
        "batch"
    );
    let replies = replies(&client, 5);
    let mut ids: Vec<&str> = replies
        .iter()
        .map(|reply| reply["id_text"].as_str().unwrap_or_default())
        .collect();
    ids.sort_unstable();
    let expected = ["\"fine\"", "18446744073709551616", "7", "null", "null"];
    assert_eq!(ids, expected, "{replies:?}");
    for reply in replies.iter().filter(|reply| reply["id"] != "fine") {
        assert_eq!(reply["error"]["code"], -32600, "{reply}");
        assert_eq!(reply["error"]["message"], "Invalid Request", "{reply}");
        assert!(reply.get("result").is_none(), "{reply}");
    }
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "the roots handler ran but once"
    );
    client.close();
}

#[test]
fn a_batch_flood_of_invalid_requests_from_a_server_that_does_not_read_leaves_calls_working() {
    const FLOOD: usize = 20_000;
    let asked = Arc::new(AtomicUsize::new(0));
    let client = connect_at("2025-03-26", &asked);
    survives_flood(&client, "batch-flood", FLOOD, &asked);
}

/// Has the server send `flood` invalid requests through `tool` without reading its input,
/// then checks that calls still work, that only `Invalid Request` replies (at most one per
/// request) reached it, that no handler ran, and closes the client.
fn survives_flood(client: &Client, tool: &str, flood: usize, asked: &AtomicUsize) {
    let result = client.call_tool(tool, json!({"n": flood})).unwrap();
    assert_eq!(result.text(), tool);
    for i in 0..20 {
        let name = format!("echo-{i}");
        assert_eq!(client.call_tool(&name, json!({})).unwrap().text(), name);
    }
    let replies = replies(client, 1);
    assert!(!replies.is_empty(), "no reply to the flood");
    assert!(replies.len() <= flood, "{} replies", replies.len());
    replies.iter().for_each(assert_invalid_request);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "the roots handler ran");
    client.close();
}
