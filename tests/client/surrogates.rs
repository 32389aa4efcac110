//! Text holding a lone UTF-16 surrogate escape (`"\ud83d"`, what JavaScript's `JSON.stringify`
//! writes for half an emoji) is read with U+FFFD in its place, as a UTF-16 to UTF-8 conversion
//! does, instead of failing the whole result or losing the block.

use serde_json::json;
use umcp::types::ContentBlock;

use crate::memory::FakeServer;

/// A response to the client's request `id` whose result is `result` (JSON text).
fn response(id: &umcp::jsonrpc::RequestId, result: &str) -> String {
    // The client's ids are integers, written as such.
    let id = id.as_u64().expect("an integer id");
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

#[test]
fn lone_surrogates_in_a_result_read_as_replacement_characters() {
    let server = FakeServer::new();
    server.on("tools/call", |peer, req| {
        // Lone high, lone low, high at the end, a valid pair, and an escaped backslash
        // before `ud83d`, which is text and no escape at all.
        let text = r#""a\ud83d b\udc00 c\u00e9 \ud83d\ude00 \\ud83d d\ud83d""#;
        let result = format!(r#"{{"content":[{{"type":"text","text":{text}}}]}}"#);
        assert!(peer.send_text(&response(&req.id, &result)));
        None
    });
    server.on("tools/list", |peer, req| {
        let tool = r#"{"name":"t","description":"half \udbff","inputSchema":{"type":"object"}}"#;
        assert!(peer.send_text(&response(&req.id, &format!(r#"{{"tools":[{tool}]}}"#))));
        None
    });
    let client = crate::connect(&server);
    let result = client.call_tool("t", json!({})).expect("the call succeeds");
    match result.content.first() {
        Some(ContentBlock::Text(block)) => {
            assert_eq!(
                block.text,
                "a\u{FFFD} b\u{FFFD} c\u{e9} \u{1F600} \\ud83d d\u{FFFD}"
            )
        }
        other => panic!("a text block was expected: {other:?}"),
    }
    let tools = client.list_tools(None).expect("the listing succeeds");
    assert_eq!(tools.tools[0].description.as_deref(), Some("half \u{FFFD}"));
}

#[test]
fn lone_surrogates_in_a_notification_read_as_replacement_characters() {
    use std::time::Duration;
    use umcp::types::ServerNotification;
    let server = FakeServer::new();
    server.on("tools/call", |peer, _| {
        let line = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"cut \ud83d"}}"#;
        assert!(peer.send_text(line));
        Some(json!({"content": []}))
    });
    let client = crate::connect(&server);
    let notifications = client.notifications();
    client
        .call_tool("log", json!({}))
        .expect("the call succeeds");
    match notifications.recv_timeout(Duration::from_secs(10)) {
        Some(ServerNotification::LoggingMessage(message)) => {
            assert_eq!(message.data, json!("cut \u{FFFD}"))
        }
        other => panic!("a log message was expected: {other:?}"),
    }
}
