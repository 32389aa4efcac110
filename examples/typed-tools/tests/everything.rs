//! The generated bindings against the real server-everything, the one `mcp.lock` was made
//! from: connecting checks its tools against the lock, and the typed methods call them.
//!
//! The server is the pinned npm install the library's interop tests use, under the
//! repository's `target/peers` (`tests/peers/install.sh`, run here when it is missing).
//! `UMCP_SKIP_INTEROP=1` skips these tests, saying so.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use umcp::{
    Client, Hidden, Manager, ManagerOptions, Options, ServerConfig, StdioConfig, ToolFilter,
};
use umcp_typed_tools_example::everything::{
    EchoArgs, Everything, GetStructuredContentArgs, GetStructuredContentArgsLocation, GetSumArgs,
};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// server-everything's entry point, installed on first use; `None` when the interop tests are
/// skipped.
fn server_everything() -> Option<PathBuf> {
    if std::env::var_os("UMCP_SKIP_INTEROP").is_some_and(|v| v == "1") {
        assert!(
            std::env::var_os("CI").is_none(),
            "UMCP_SKIP_INTEROP is refused under CI"
        );
        eprintln!("SKIPPED interop: UMCP_SKIP_INTEROP=1");
        return None;
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .unwrap_or_else(|| root().join("target"));
    let entry =
        target.join("peers/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !entry.exists() {
        let status = Command::new("bash")
            .arg(root().join("tests/peers/install.sh"))
            .arg("npm")
            .env("CARGO_TARGET_DIR", &target)
            .status();
        assert!(
            status.is_ok_and(|s| s.success()) && entry.exists(),
            "server-everything could not be installed: it needs Node.js 20 or newer and npm \
             (then `bash tests/peers/install.sh npm`), or set UMCP_SKIP_INTEROP=1"
        );
    }
    Some(entry)
}

fn stdio(entry: &Path) -> StdioConfig {
    StdioConfig::new("node").args([entry.to_string_lossy().as_ref(), "stdio"])
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
