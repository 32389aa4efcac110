//! Notifications tagged with their server, and resources and prompts listed across the group's
//! servers.

use std::time::Instant;

use serde_json::{json, Value};
use umcp::types::ServerNotification;
use umcp::{Manager, ServerConfig};

use crate::{demo_server, options, BOUND};

#[test]
fn notifications_are_tagged_with_their_server() {
    let manager = Manager::start(vec![demo_server("a"), demo_server("b")], options());
    assert!(manager.wait_ready(BOUND));
    let notifications = manager.notifications();
    manager
        .call_tool("b__log", json!({"level": "warning", "message": "from b"}))
        .unwrap();
    let deadline = Instant::now() + BOUND;
    loop {
        let tagged = notifications
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("the log notification arrives");
        if let ServerNotification::LoggingMessage(params) = &tagged.notification {
            assert_eq!(tagged.server, "b");
            assert_eq!(params.data, json!("from b"));
            break;
        }
    }
    manager
        .call_tool("a__list_changed", json!({"what": "tools"}))
        .unwrap();
    let tagged = notifications
        .recv_timeout(BOUND)
        .expect("list_changed arrives");
    assert_eq!(tagged.server, "a");
    assert!(matches!(
        tagged.notification,
        ServerNotification::ToolListChanged
    ));
}

#[test]
fn resources_and_prompts_are_listed_across_servers() {
    let manager = Manager::start(
        vec![
            demo_server("a"),
            demo_server("b"),
            ServerConfig::stdio("missing", "/nonexistent/umcp-no-such-server"),
        ],
        options(),
    );
    let (resources, errors) = manager.list_resources();
    let mut found: Vec<(String, String)> = resources
        .iter()
        .map(|e| (e.server.clone(), e.resource.uri.clone()))
        .collect();
    found.sort();
    assert_eq!(found.len(), 4, "{found:?}");
    assert_eq!(found[0], ("a".to_owned(), "demo://blob/bytes".to_owned()));
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].server, "missing");

    let (templates, errors) = manager.list_resource_templates();
    let mut found: Vec<(&str, &str)> = templates
        .iter()
        .map(|e| (e.server.as_str(), e.template.uri_template.as_str()))
        .collect();
    found.sort_unstable();
    assert_eq!(
        found,
        [("a", "demo://note/{name}"), ("b", "demo://note/{name}")]
    );
    assert_eq!(errors.len(), 1);
    let note = manager.read_resource("a", "demo://note/Ada").unwrap();
    assert!(!note.contents.is_empty());

    let read = manager.read_resource("b", "demo://text/readme").unwrap();
    let value = serde_json::to_value(&read).unwrap();
    assert_eq!(
        value["contents"][0]["text"],
        "Hello from the umcp demo server."
    );

    let (prompts, _) = manager.list_prompts();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a__greet", "a__haiku", "b__greet", "b__haiku"]);
    let prompt = manager
        .get_prompt("b__greet", json!({"name": "Ada"}))
        .unwrap();
    let value = serde_json::to_value(&prompt).unwrap();
    assert_eq!(
        value["messages"][0]["content"]["text"],
        "Say hello to Ada in a casual way."
    );
    let err = manager.get_prompt("c__greet", Value::Null).unwrap_err();
    assert_eq!(err.to_string(), "no prompt named `c__greet`");
}
