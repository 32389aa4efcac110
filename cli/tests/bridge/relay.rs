//! Everything a host and a server say to each other through the bridge, seen on the wire by
//! a host of our own: the server's questions (sampling and roots as requests to a 2025 host,
//! as input rounds to a 2026 one), a question the host did not declare it takes, resource
//! subscriptions and listen streams, log lines under the host's level, and completions.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{demo, RawHost};

const MODERN: &str = "2026-07-28";

/// The `_meta` of a 2026-07-28 request declaring `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-host", "version": "1.0.0"},
    })
}

/// The text of a tool's result.
fn text(response: &Value) -> String {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {response}"))
        .to_owned()
}

/// Waits for the bridge's request for the host of `method`, keeping what comes before it.
fn asked(host: &mut RawHost, method: &str) -> Value {
    for _ in 0..50 {
        let message = host
            .next(Duration::from_secs(10))
            .expect("a request for the host");
        if message["method"] == method && message.get("id").is_some() {
            return message;
        }
        host.seen.push(message);
    }
    panic!("no {method} came; seen: {:?}", host.seen)
}

#[test]
fn a_2025_host_answers_sampling_and_roots_for_either_era_of_server() {
    for modern in [false, true] {
        let mut host = RawHost::start(&["--stdio", &demo(modern)]);
        host.initialize(json!({"sampling": {}, "roots": {"listChanged": true}}));
        host.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "ask_llm", "arguments": {"prompt": "Capital of France?"}}}));
        let sampling = asked(&mut host, "sampling/createMessage");
        let prompt = &sampling["params"]["messages"][0]["content"]["text"];
        assert_eq!(prompt, "Capital of France?", "{sampling}");
        let reply = json!({"role": "assistant", "model": "m",
            "content": {"type": "text", "text": "Paris"}});
        host.send(json!({"jsonrpc": "2.0", "id": sampling["id"], "result": reply}));
        assert!(
            text(&host.response(1)).contains("Paris"),
            "modern: {modern}"
        );
        host.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "list_roots", "arguments": {}}}));
        let roots = asked(&mut host, "roots/list");
        let listed = json!({"roots": [{"uri": "file:///work", "name": "work"}]});
        host.send(json!({"jsonrpc": "2.0", "id": roots["id"], "result": listed}));
        assert!(
            text(&host.response(2)).contains("file:///work"),
            "modern: {modern}"
        );
    }
}

#[test]
fn a_2026_host_answers_a_handshake_era_servers_sampling_in_an_input_round() {
    let mut host = RawHost::start(&["--stdio", &demo(false)]);
    let declared = meta(json!({"sampling": {}}));
    let params = json!({"name": "ask_llm", "arguments": {"prompt": "2+2?"}, "_meta": declared});
    let round = host.request(1, "tools/call", params.clone());
    let result = &round["result"];
    assert_eq!(result["resultType"], "input_required", "{round}");
    let (key, request) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(request["method"], "sampling/createMessage");
    let mut retry = params;
    retry["requestState"] = result["requestState"].clone();
    retry["inputResponses"] = json!({ key.as_str(): {"role": "assistant", "model": "m",
        "content": {"type": "text", "text": "4"}} });
    let done = host.request(2, "tools/call", retry.clone());
    assert!(text(&done).contains('4'), "{done}");
    assert_eq!(done["result"]["resultType"], "complete");
    // The round is over: its state answers nothing now.
    let stale = host.request(3, "tools/call", retry);
    assert_eq!(stale["error"]["code"], -32602, "{stale}");
}

#[test]
fn a_question_the_host_did_not_declare_is_refused_saying_so() {
    // Over HTTP the bridge declares every question to the servers, so what a host did not
    // declare is refused when it comes.
    let (_bridge, url, token) = crate::listen::listening(&["--stdio", &demo(false)], "undeclared");
    let session = crate::listen::Session::open(&url, &token, json!({}));
    let result = session.call("ask_user", json!({"question": "Ready?"}));
    let said = result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        said.contains("did not declare form elicitation"),
        "{result}"
    );
}

#[test]
fn resource_updates_reach_a_subscribed_host_of_either_era() {
    let mut host = RawHost::start(&["--stdio", &demo(true)]);
    host.initialize(json!({}));
    let uri = "demo://text/readme";
    let subscribed = host.request(1, "resources/subscribe", json!({"uri": uri}));
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    let touched = host.request(
        2,
        "tools/call",
        json!({"name": "touch", "arguments": {"uri": uri}}),
    );
    assert!(touched.get("result").is_some(), "{touched}");
    let mut heard = host.seen.clone();
    heard.extend((0..3).filter_map(|_| host.next(Duration::from_secs(2))));
    let updated = heard
        .into_iter()
        .find(|m| m["method"] == "notifications/resources/updated");
    assert_eq!(updated.expect("an update")["params"]["uri"], uri);

    let mut modern = RawHost::start(&["--stdio", &demo(false)]);
    let filter = json!({"toolsListChanged": true, "resourceSubscriptions": [uri]});
    let params = json!({"notifications": filter, "_meta": meta(json!({}))});
    modern.send(
        json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params}),
    );
    let acknowledged = modern
        .next(Duration::from_secs(30))
        .expect("an acknowledgement");
    assert_eq!(
        acknowledged["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(
        acknowledged["params"]["notifications"]["resourceSubscriptions"],
        json!([uri])
    );
    assert_eq!(
        acknowledged["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    let call = |what: &str, args: Value| json!({"name": what, "arguments": args, "_meta": meta(json!({}))});
    modern.request(8, "tools/call", call("touch", json!({"uri": uri})));
    modern.request(
        9,
        "tools/call",
        call("list_changed", json!({"what": "tools"})),
    );
    let mut heard: Vec<Value> = modern.seen.clone();
    heard.extend((0..4).filter_map(|_| modern.next(Duration::from_secs(3))));
    for method in [
        "notifications/resources/updated",
        "notifications/tools/list_changed",
    ] {
        let note = heard.iter().find(|m| m["method"] == method);
        let note = note.unwrap_or_else(|| panic!("no {method} in {heard:?}"));
        assert_eq!(
            note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            7
        );
    }
    // Cancelled by the host: the stream ends, without an answer.
    modern.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}),
    );
    modern.request(
        10,
        "tools/call",
        call("list_changed", json!({"what": "tools"})),
    );
    let after: Vec<Value> = (0..3)
        .filter_map(|_| modern.next(Duration::from_secs(1)))
        .collect();
    assert!(
        !after
            .iter()
            .any(|m| m["method"] == "notifications/tools/list_changed"),
        "{after:?}"
    );
    assert!(!after.iter().any(|m| m["id"] == 7), "{after:?}");
}

#[test]
fn log_lines_reach_the_host_from_the_level_it_set() {
    let mut host = RawHost::start(&["--stdio", &demo(false)]);
    host.initialize(json!({}));
    host.request(1, "logging/setLevel", json!({"level": "warning"}));
    let log = |level: &str| json!({"name": "log", "arguments": {"level": level, "message": level}});
    let quiet = host.request(2, "tools/call", log("info"));
    assert!(
        text(&quiet).contains("suppressed"),
        "the server was told the level: {quiet}"
    );
    host.request(3, "tools/call", log("error"));
    let heard: Vec<Value> = (0..3)
        .filter_map(|_| host.next(Duration::from_secs(2)))
        .collect();
    let all: Vec<&Value> = host.seen.iter().chain(&heard).collect();
    let line = all.iter().find(|m| m["method"] == "notifications/message");
    assert_eq!(
        line.expect("the error line")["params"]["data"],
        "error",
        "{all:?}"
    );
}

#[test]
fn prompts_resources_and_completions_pass_through() {
    let mut host = RawHost::start(&["--stdio", &demo(true)]);
    host.initialize(json!({}));
    let reference = json!({"type": "ref/prompt", "name": "greet"});
    let completed = host.request(
        1,
        "completion/complete",
        json!({"ref": reference, "argument": {"name": "style", "value": "p"}}),
    );
    assert_eq!(
        completed["result"]["completion"]["values"],
        json!(["pirate"]),
        "{completed}"
    );
    let prompts = host.request(2, "prompts/list", json!({}));
    assert!(
        prompts["result"]["prompts"].to_string().contains("greet"),
        "{prompts}"
    );
    let read = host.request(3, "resources/read", json!({"uri": "demo://note/ada"}));
    assert!(
        read["result"]["contents"][0]["uri"] == "demo://note/ada",
        "{read}"
    );
    let missing = host.request(4, "resources/read", json!({"uri": "demo://nowhere"}));
    assert!(missing.get("error").is_some(), "{missing}");
}
