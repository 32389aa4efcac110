//! The tools a manager offers: each server's tool filter and the manager's lock hide tools
//! from the aggregated list and refuse calls to them before anything reaches the server; a
//! tool-list change that brings drift is hidden, not taken in.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::lock::{Lockfile, ServerIdentity, ServerLock};
use umcp::{Client, Error, Hidden, Manager, ServerConfig, ToolField, ToolFilter};

use crate::{demo, demo_server, options, text, BOUND};

fn tool_names(manager: &Manager) -> Vec<String> {
    manager.known_tools().into_iter().map(|e| e.name).collect()
}

fn why(error: &Error) -> &Hidden {
    &error
        .hidden_tool()
        .unwrap_or_else(|| panic!("not hidden: {error}"))
        .why
}

/// How many requests of `method` the demo server named `server` has received.
fn seen(manager: &Manager, server: &str, method: &str) -> u64 {
    let result = manager
        .call_tool(&format!("{server}__requests_seen"), json!({}))
        .unwrap();
    let counts: Value = result.structured().unwrap();
    counts[method].as_u64().unwrap_or(0)
}

/// A lock of the demo server as it lists its tools now, under the name `name`.
fn lock_of_demo(name: &str) -> Lockfile {
    let client = Client::connect(demo()).unwrap();
    let tools = client.list_all_tools().unwrap();
    let mut lock = Lockfile::new();
    let identity = ServerIdentity::from(&client.server_info());
    lock.insert(ServerLock::new(name, identity, &tools));
    lock
}

#[test]
fn a_filtered_tool_is_not_offered_and_its_call_never_reaches_the_server() {
    let filtered = demo_server("demo").with_tool_filter(ToolFilter::new().with_denied(["echo"]));
    let manager = Manager::start(vec![filtered, demo_server("open")], options());
    assert!(manager.wait_ready(BOUND));
    let names = tool_names(&manager);
    assert!(!names.contains(&"demo__echo".to_owned()), "{names:?}");
    assert!(names.contains(&"demo__add".to_owned()), "{names:?}");
    assert!(names.contains(&"open__echo".to_owned()), "{names:?}");

    let refused = manager
        .call_tool("demo__echo", json!({"message": "hi"}))
        .unwrap_err();
    assert_eq!(why(&refused), &Hidden::Filtered);
    assert_eq!(
        refused.to_string(),
        "tool `echo` of server `demo` is filtered out by the server's allowed and excluded \
         tools; it is not called"
    );
    // Through the server's client too.
    let refused = manager
        .client("demo")
        .unwrap()
        .call_tool("echo", json!({"message": "hi"}))
        .unwrap_err();
    assert_eq!(why(&refused), &Hidden::Filtered);
    // The only call the server saw is the one asking what it saw.
    assert_eq!(seen(&manager, "demo", "tools/call"), 1);
    assert_eq!(
        text(
            &manager
                .call_tool("open__echo", json!({"message": "hi"}))
                .unwrap()
        ),
        "hi"
    );
    let hidden = manager.hidden_tools();
    assert_eq!(hidden.len(), 1, "{hidden:?}");
    assert_eq!(hidden[0].server.as_deref(), Some("demo"));
}

#[test]
fn a_locked_manager_offers_what_matches_and_names_what_changed() {
    let lock = lock_of_demo("demo");
    let described = demo().args(["--describe", "echo=Echoes, and more."]);
    let changed = ServerConfig::new("demo", described);
    // `other` is not in the lock: it offers nothing.
    let manager = Manager::start(
        vec![changed, demo_server("other")],
        options().with_tool_lock(lock),
    );
    assert!(manager.wait_ready(BOUND));
    let names = tool_names(&manager);
    assert!(!names.contains(&"demo__echo".to_owned()), "{names:?}");
    assert!(names.contains(&"demo__add".to_owned()), "{names:?}");
    assert!(
        !names.iter().any(|name| name.starts_with("other__")),
        "{names:?}"
    );

    let refused = manager
        .call_tool("demo__echo", json!({"message": "hi"}))
        .unwrap_err();
    assert_eq!(
        why(&refused),
        &Hidden::Changed(vec![ToolField::Description])
    );
    assert!(refused
        .to_string()
        .contains("`echo` of server `demo` differs from the lock"));
    let refused = manager
        .call_tool("other__echo", json!({"message": "hi"}))
        .unwrap_err();
    assert_eq!(why(&refused), &Hidden::NotLocked);
    let sum = manager
        .call_tool("demo__add", json!({"a": 2, "b": 3}))
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 5})));
    assert_eq!(seen(&manager, "demo", "tools/call"), 2);
    let hidden = manager.hidden_tools();
    assert!(hidden
        .iter()
        .any(|h| h.server.as_deref() == Some("demo") && h.tool == "echo"));
    assert!(hidden
        .iter()
        .any(|h| h.server.as_deref() == Some("other") && h.why == Hidden::NotLocked));
}

#[test]
fn a_list_change_that_brings_drift_hides_the_tool() {
    let manager = Manager::start(
        vec![demo_server("demo")],
        options().with_tool_lock(lock_of_demo("demo")),
    );
    assert!(manager.wait_ready(BOUND));
    assert_eq!(
        text(
            &manager
                .call_tool("demo__echo", json!({"message": "a"}))
                .unwrap()
        ),
        "a"
    );
    let pulled = json!({"tool": "echo", "description": "Echoes. Then mails your notes away."});
    manager.call_tool("demo__redescribe", pulled).unwrap();
    // The supervisor lists again on the change and hides the drifted tool.
    let deadline = Instant::now() + BOUND;
    while tool_names(&manager).contains(&"demo__echo".to_owned()) {
        assert!(Instant::now() < deadline, "echo still offered");
        std::thread::sleep(Duration::from_millis(20));
    }
    let refused = manager
        .call_tool("demo__echo", json!({"message": "b"}))
        .unwrap_err();
    assert_eq!(
        why(&refused),
        &Hidden::Changed(vec![ToolField::Description])
    );
    // echo once, redescribe, requests_seen.
    assert_eq!(seen(&manager, "demo", "tools/call"), 3);
}

#[test]
fn cached_tools_offered_while_a_server_starts_are_filtered_and_pinned_too() {
    let dir = crate::tools::temp_dir("pinned-cache");
    let deny_echo = ToolFilter::new().with_denied(["echo"]);
    let filtered = crate::stuck_server("f", BOUND).with_tool_filter(deny_echo);
    // Another command line than `f`'s, so that the two cache files differ.
    let locked = ServerConfig::new("l", crate::stuck().arg("1001")).with_startup_timeout(BOUND);
    let cached = options().with_cache_dir(&dir);
    crate::tools::write_cache(&cached, &filtered, &["echo", "add"]);
    crate::tools::write_cache(&cached, &locked, &["echo", "add"]);
    // Both servers stay in start-up: what is offered is their cached tools.
    let manager = Manager::start(vec![filtered.clone(), locked.clone()], cached.clone());
    assert_eq!(tool_names(&manager), ["f__add", "l__echo", "l__add"]);
    manager.close();

    let echo = umcp::types::Tool::new("echo", json!({"type": "object"}));
    let mut lock = Lockfile::new();
    lock.insert(ServerLock::new("l", ServerIdentity::default(), &[echo]));
    // `f` has no entry in the lock: nothing of it is offered, cached or not.
    let manager = Manager::start(vec![filtered, locked], cached.with_tool_lock(lock));
    assert_eq!(tool_names(&manager), ["l__echo"]);
    manager.close();
    let _ = std::fs::remove_dir_all(dir);
}
