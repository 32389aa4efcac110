//! Era-dependent list rules: what an empty cursor means, and how roots and their changes are
//! offered.

use serde_json::{json, Value};
use umcp::jsonrpc::Request;
use umcp::types::{CallToolResult, ListRootsResult, Root, Tool, META_CLIENT_CAPABILITIES};
use umcp::{Client, Error, Options};

use crate::memory::FakeServer;
use crate::{legacy, modern, modern_server, requests, SOON};

/// The cursor a list request carried (`None` without one).
fn cursor(request: &Request) -> Option<String> {
    let cursor = request.params.as_ref().and_then(|p| p.get("cursor"));
    cursor.and_then(Value::as_str).map(String::from)
}

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

#[test]
fn an_empty_cursor_is_a_cursor_in_the_stateless_era() {
    let server = modern_server("spec-rules-empty-cursor");
    server.on("tools/list", |_, request| {
        Some(match cursor(request).as_deref() {
            None => json!({"tools": [tool("a")], "nextCursor": ""}),
            Some("") => json!({"tools": [tool("b")]}),
            Some(other) => panic!("unexpected cursor {other:?}"),
        })
    });
    // A server that keeps answering `""` repeats its cursor: that ends in an error, not a loop.
    server.on("prompts/list", |_, _| {
        Some(json!({"prompts": [], "nextCursor": ""}))
    });
    let client = Client::connect_with_options(server.clone(), modern(Options::default())).unwrap();
    let names: Vec<_> = client
        .list_all_tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b"]);
    let sent: Vec<_> = requests(&server, "tools/list").iter().map(cursor).collect();
    assert_eq!(sent, [None, Some(String::new())]);
    match client.list_all_prompts() {
        Err(Error::Protocol(message)) => assert!(message.contains("repeated"), "{message}"),
        other => panic!("expected a repeated-cursor error, got {other:?}"),
    }
    assert_eq!(requests(&server, "prompts/list").len(), 2);
}

#[test]
fn an_empty_cursor_ends_the_list_in_the_handshake_era() {
    let server = FakeServer::new();
    server.on("tools/list", |_, _| {
        Some(json!({"tools": [tool("a")], "nextCursor": ""}))
    });
    let client = Client::connect_with_options(server.clone(), legacy(Options::default())).unwrap();
    assert_eq!(client.list_all_tools().unwrap().len(), 1);
    assert_eq!(requests(&server, "tools/list").len(), 1);
}

/// A server whose `roots` tool returns the client's roots, speaking both eras.
fn roots_server() -> umcp::testing::FakeServer {
    let tool = Tool::new("roots", json!({"type": "object"}));
    umcp::testing::FakeServer::new("roots").with_tool(tool, |ctx, _| {
        let roots = serde_json::to_value(ctx.list_roots()?).unwrap_or_default();
        Ok(CallToolResult::default().with_structured_content(roots))
    })
}

#[test]
fn roots_list_answers_only_file_roots() {
    let mixed = || {
        vec![
            Root::new("file:///work").with_name("work"),
            Root::new("https://example.com/repo"),
            Root::new("relative/path"),
        ]
    };
    let uris = |client: &Client| {
        let result = client.call_tool("roots", Value::Null).unwrap();
        let roots = &result.structured_content.unwrap()["roots"];
        let roots = roots.as_array().unwrap().iter();
        roots
            .map(|r| r["uri"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let options = legacy(Options::default().with_roots(mixed()));
    let client = Client::connect_with_options(roots_server(), options).unwrap();
    assert_eq!(uris(&client), ["file:///work"]);
    let options = Options::default().with_roots_handler(move || Ok(ListRootsResult::new(mixed())));
    let client = Client::connect_with_options(roots_server(), legacy(options)).unwrap();
    assert_eq!(uris(&client), ["file:///work"]);
}

#[test]
fn the_roots_capability_has_list_changed_only_in_the_handshake_era() {
    let roots = || Options::default().with_roots(vec![Root::new("file:///work")]);
    let server = roots_server();
    let _client = Client::connect_with_options(server.clone(), legacy(roots())).unwrap();
    let declared = &server.requests("initialize")[0]["capabilities"]["roots"];
    assert_eq!(*declared, json!({"listChanged": true}));

    let client = Client::connect_with_options(server.clone(), modern(roots())).unwrap();
    client.list_tools(None).unwrap();
    let meta = &server.requests("tools/list")[0]["_meta"];
    assert_eq!(meta[META_CLIENT_CAPABILITIES]["roots"], json!({}));
}

#[test]
fn roots_list_changed_is_not_sent_in_the_stateless_era() {
    let roots = || Options::default().with_roots(vec![Root::new("file:///work")]);
    let changed = "notifications/roots/list_changed";
    let server = roots_server();
    let client = Client::connect_with_options(server.clone(), modern(roots())).unwrap();
    client.notify_roots_list_changed().unwrap();
    // A request after it: the server reads in order, so once it answered the request it has
    // read the notification too, had there been one.
    client.list_tools(None).unwrap();
    assert!(server.notifications(changed).is_empty());

    // The handshake era still sends it.
    let client = Client::connect_with_options(server.clone(), legacy(roots())).unwrap();
    client.notify_roots_list_changed().unwrap();
    assert!(server.wait_for(changed, SOON).is_some());
}
