//! Tools chosen and pinned against the TypeScript reference server `server-everything` over
//! stdio: a denied tool is neither listed nor sent, through a client and through a manager,
//! and a lock of its tools pins them, refusing one whose definition drifted.

#[path = "common/mod.rs"]
mod common;
#[path = "common/log_capture.rs"]
mod log_capture;

use std::path::Path;

use serde_json::json;
use umcp::lock::{Lockfile, ServerIdentity, ServerLock};
use umcp::types::Tool;
use umcp::{
    Client, Error, Hidden, Manager, ManagerOptions, Options, ServerConfig, StdioConfig, ToolField,
    ToolFilter,
};

use common::interop::{options, text_of, tool_names};
use common::peers;
use log_capture::logged;

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn everything_config() -> StdioConfig {
    StdioConfig::new(path_arg(&peers::node()))
        .arg(path_arg(&peers::server_everything()))
        .arg("stdio")
}

fn everything(options: Options) -> Client {
    Client::connect_with_options(everything_config(), options)
        .unwrap_or_else(|e| panic!("connecting to server-everything over stdio failed: {e}"))
}

fn why(error: &Error) -> &Hidden {
    &error
        .hidden_tool()
        .unwrap_or_else(|| panic!("not hidden: {error}"))
        .why
}

/// The `tools/call` requests of `tool` this test binary wrote to a server.
fn calls_sent(tool: &str) -> usize {
    logged("> ")
        .iter()
        .filter(|line| line.contains(r#""method":"tools/call""#))
        .filter(|line| line.contains(&format!(r#""name":"{tool}""#)))
        .count()
}

#[test]
fn a_denied_tool_is_neither_listed_nor_sent() {
    if peers::skip_interop() {
        return;
    }
    log_capture::capture_logs();
    let filter = ToolFilter::new().with_denied(["echo"]);
    let client = everything(options().with_tool_filter(filter));
    let names = tool_names(&client);
    assert!(!names.contains("echo"), "{names:?}");
    assert!(names.contains("get-sum"), "{names:?}");
    let refused = client
        .call_tool("echo", json!({"message": "hi"}))
        .unwrap_err();
    assert_eq!(why(&refused), &Hidden::Filtered);
    let sum = client
        .call_tool("get-sum", json!({"a": 2, "b": 3}))
        .unwrap();
    assert!(text_of(&sum).contains('5'), "{sum:?}");
    assert_eq!(calls_sent("echo"), 0);
    assert!(calls_sent("get-sum") >= 1);
    client.close();

    // The same through a manager, from the server's configuration.
    let server = ServerConfig::new("everything", everything_config())
        .with_tool_filter(ToolFilter::new().with_denied(["echo"]));
    let manager = Manager::start(vec![server], ManagerOptions::default().without_cache());
    assert!(manager.wait_ready(std::time::Duration::from_secs(60)));
    let names: Vec<String> = manager.known_tools().into_iter().map(|e| e.name).collect();
    assert!(!names.contains(&"everything__echo".to_owned()), "{names:?}");
    assert!(
        names.contains(&"everything__get-sum".to_owned()),
        "{names:?}"
    );
    let refused = manager
        .call_tool("everything__echo", json!({"message": "hi"}))
        .unwrap_err();
    assert_eq!(why(&refused), &Hidden::Filtered);
    assert_eq!(
        refused.hidden_tool().unwrap().server.as_deref(),
        Some("everything")
    );
    assert_eq!(calls_sent("echo"), 0);
    manager.close();
}

#[test]
fn a_lock_of_the_server_pins_its_tools_and_refuses_a_drifted_one() {
    if peers::skip_interop() {
        return;
    }
    log_capture::capture_logs();
    let client = everything(options());
    let tools = client.list_all_tools().unwrap();
    let identity = ServerIdentity::from(&client.server_info());
    assert_eq!(identity.name, "mcp-servers/everything");
    client.close();
    // Locked twice from the live server: the same bytes.
    let lock_text = |tools: &[Tool]| {
        let mut lock = Lockfile::new();
        lock.insert(ServerLock::new("everything", identity.clone(), tools));
        lock.to_json_string()
    };
    let again = everything(options());
    assert_eq!(
        lock_text(&tools),
        lock_text(&again.list_all_tools().unwrap())
    );
    again.close();

    // The lock remembers `echo` differently: as if the server changed it since.
    let remembered: Vec<Tool> = tools
        .iter()
        .map(|tool| match tool.name.as_str() {
            "echo" => tool.clone().with_description("Echoes back the input."),
            _ => tool.clone(),
        })
        .collect();
    let lock = Lockfile::parse(&lock_text(&remembered)).unwrap();
    let pinned = lock.server("everything").cloned().unwrap();
    let client = everything(options().with_tool_lock(pinned));
    let refused = client
        .call_tool("echo", json!({"message": "hi"}))
        .unwrap_err();
    assert_eq!(
        why(&refused),
        &Hidden::Changed(vec![ToolField::Description])
    );
    let sum = client
        .call_tool("get-sum", json!({"a": 2, "b": 3}))
        .unwrap();
    assert!(text_of(&sum).contains('5'), "{sum:?}");
    assert!(!tool_names(&client).contains("echo"));
    assert_eq!(calls_sent("echo"), 0);
    let warned = logged("`echo` of server `everything` differs from the lock");
    assert!(!warned.is_empty());
    client.close();
}
