//! Servers and names a manager must survive: names no thread may carry, and a server slow to
//! stop whose name is taken again at once.

use std::time::Duration;

use serde_json::json;
use umcp::{ConfigFile, Manager, ServerConfig, ServerStatus, StdioConfig};

use crate::status::wait_for;
use crate::{demo, options, text, BOUND};

/// A name is whatever the configuration's key is, a NUL byte included (JSON allows
/// `\u0000`): it names the server, not its thread, and neither starting nor adding panics.
#[test]
fn a_server_name_with_a_nul_byte_is_served_like_any_other() {
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    let text_of_file = format!(
        r#"{{"mcpServers": {{"a\u0000b": {{"command": {}, "args": ["--server", "--fixtures"]}}}}}}"#,
        serde_json::to_string(&binary).unwrap()
    );
    let file = ConfigFile::parse(&text_of_file).expect("parses");
    assert_eq!(file.servers.len(), 1, "{:?}", file.errors);
    let manager = Manager::start(file.servers, options());
    manager
        .add(ServerConfig::new(
            "c\0d",
            StdioConfig::new(binary).args(["--server", "--fixtures"]),
        ))
        .expect("added");
    assert!(manager.wait_ready(BOUND));
    for server in ["a\0b", "c\0d"] {
        let result = manager
            .call_tool(&format!("{server}__echo"), json!({"message": "hi"}))
            .expect("call");
        assert_eq!(text(&result), "hi");
    }
}

/// A server that outlives the close timeout is reported stopped when `remove` returns, and
/// its late end says nothing more: a server added again under its name is not shown as
/// stopped by the old one's supervisor.
#[test]
fn a_removed_server_slow_to_stop_says_nothing_about_its_successor() {
    // It never answers, and ignores both the end of its input and SIGTERM.
    let stubborn = ServerConfig::new(
        "x",
        StdioConfig::new("sh").args(["-c", "trap '' TERM; sleep 1000"]),
    )
    .with_startup_timeout(BOUND);
    let manager = Manager::start(
        vec![stubborn],
        options().with_close_timeout(Duration::from_millis(100)),
    );
    let events = manager.status_events();
    wait_for(&events, "x", |s| {
        matches!(s, ServerStatus::Connecting { .. })
    });
    manager.remove("x").expect("remove");
    // The old server is reported stopped before `remove` returns.
    assert!(matches!(
        events.try_recv().map(|e| e.status),
        Some(ServerStatus::Stopped)
    ));
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    manager
        .add(ServerConfig::new(
            "x",
            StdioConfig::new(binary).args(["--server", "--fixtures"]),
        ))
        .expect("added again");
    wait_for(&events, "x", ServerStatus::is_connected);
    // The old server is killed after its close grace and kill grace; its supervisor ends
    // then, without a word.
    let late = events.recv_timeout(Duration::from_secs(8));
    assert!(
        late.is_none(),
        "{:?} after the new server connected",
        late.map(|e| format!("{}: {}", e.server, e.status))
    );
    assert!(manager.status("x").is_some_and(|s| s.is_connected()));
}
