//! The generated bindings against the real server-everything, the one `mcp.lock` was made
//! from: connecting checks its tools against the lock, and the typed methods call them.
//!
//! The server is the pinned npm install the library's interop tests use (installed under
//! `target/peers` on first use); `UMCP_SKIP_INTEROP=1` skips these tests, saying so.

use std::path::{Path, PathBuf};
use std::time::Duration;

use umcp::{
    Client, Hidden, Manager, ManagerOptions, Options, ServerConfig, StdioConfig, ToolFilter,
};
use umcp_test_support::peers;
use umcp_typed_tools_example::everything::{
    EchoArgs, Everything, GetStructuredContentArgs, GetStructuredContentArgsLocation, GetSumArgs,
};

/// server-everything's entry point, installed on first use; `None` when the interop tests are
/// skipped.
fn server_everything() -> Option<PathBuf> {
    (!peers::skip_interop()).then(peers::server_everything)
}

fn stdio(entry: &Path) -> StdioConfig {
    StdioConfig::new(peers::node().to_string_lossy())
        .args([entry.to_string_lossy().as_ref(), "stdio"])
}

#[test]
fn typed_methods_call_the_locked_tools() {
    let Some(entry) = server_everything() else {
        return;
    };
    let client = Client::connect(stdio(&entry)).expect("server-everything");
    let tools = Everything::connect(&client).expect("the server's tools are as locked");
    let echoed = tools
        .echo(&EchoArgs {
            message: "typed hello".into(),
        })
        .unwrap();
    assert_eq!(echoed.text(), "Echo: typed hello");
    let sum = tools.get_sum(&GetSumArgs { a: 2.5, b: 4.0 }).unwrap();
    assert!(sum.text().contains("6.5"), "{}", sum.text());
    // A typed result, from the tool's output schema.
    let weather = tools
        .get_structured_content(&GetStructuredContentArgs {
            location: GetStructuredContentArgsLocation::Chicago,
        })
        .unwrap();
    assert!(!weather.conditions.is_empty());
    assert!((0.0..=100.0).contains(&weather.humidity), "{weather:?}");
    let _: f64 = weather.temperature;
    client.close();
}

#[test]
fn a_server_that_does_not_list_a_bound_tool_as_locked_is_refused() {
    let Some(entry) = server_everything() else {
        return;
    };
    let hiding = Options::default().with_tool_filter(ToolFilter::new().with_denied(["get-sum"]));
    let client = Client::connect_with_options(stdio(&entry), hiding).unwrap();
    let refused = Everything::connect(&client).unwrap_err();
    let hidden = refused.hidden_tool().expect("a hidden tool");
    assert_eq!(
        (hidden.tool.as_str(), &hidden.why),
        ("get-sum", &Hidden::Missing)
    );
    assert_eq!(hidden.server.as_deref(), Some("everything"));
    client.close();
}

#[test]
fn the_bindings_work_over_a_manager_too() {
    let Some(entry) = server_everything() else {
        return;
    };
    let config = ServerConfig::new("everything", stdio(&entry));
    let manager = Manager::start(vec![config], ManagerOptions::default().without_cache());
    assert!(manager.wait_ready(Duration::from_secs(60)));
    let tools = Everything::connect_manager(&manager).unwrap();
    let sum = tools.get_sum(&GetSumArgs { a: 1.0, b: 2.0 }).unwrap();
    assert!(sum.text().contains('3'), "{}", sum.text());
    manager.close();
}
