//! The MCP Inspector's command line as a host of the bridge, over stdio and over `--listen`.

use std::process::Command;

use serde_json::Value;
use umcp_test_support::installed::empty_home;
use umcp_test_support::peers;

use crate::listen::listening;
use crate::support::{demo, everything, umcp};

/// Runs the Inspector's CLI with `args` and reads its JSON output.
fn inspect(args: &[&str]) -> Value {
    let output = Command::new(peers::node())
        .arg(peers::inspector())
        .arg("--cli")
        .args(args)
        .args(["--format", "json"])
        .current_dir(empty_home())
        .env("HOME", empty_home())
        .output()
        .expect("run the Inspector");
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {stdout}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn the_inspector_lists_and_calls_through_the_bridge() {
    if peers::skip_interop() {
        return;
    }
    let bridge = umcp();
    let server = everything();
    let listed = inspect(&[
        &bridge,
        "bridge",
        "--stdio",
        &server,
        "--method",
        "tools/list",
    ]);
    let tools = listed["result"]["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t["name"] == "get-sum"), "{listed}");
    let called = inspect(&[
        &bridge,
        "bridge",
        "--stdio",
        &server,
        "--method",
        "tools/call",
        "--tool-name",
        "get-sum",
        "--tool-arg",
        "a=40",
        "--tool-arg",
        "b=2",
    ]);
    assert!(called.to_string().contains("42"), "{called}");

    let (_listening, url, token) = listening(&["--stdio", &demo(false)], "inspector");
    let header = format!("Authorization: Bearer {token}");
    let over_http = inspect(&[
        &url,
        "--transport",
        "http",
        "--header",
        &header,
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=2",
        "--tool-arg",
        "b=3",
    ]);
    assert!(over_http.to_string().contains('5'), "{over_http}");
}
