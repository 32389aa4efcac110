//! Tests for the multi-server manager against real server processes: the bundled demo
//! server, a command that does not exist, and a command that never answers.

use std::time::Duration;

use umcp::{ManagerOptions, ServerConfig, StdioConfig};

#[path = "../common/mod.rs"]
mod common;
use umcp_test_support::demo;
#[path = "../common/status.rs"]
mod status;

mod hostile;
#[cfg(feature = "http")]
mod http;
mod lifecycle;
mod listings;
mod pinned;
mod tools;

/// Generous bound for anything that should be quick: proves "does not hang", not speed.
const BOUND: Duration = Duration::from_secs(30);

/// The demo binary, serving its fixtures over stdio.
fn demo() -> StdioConfig {
    let binary = demo::demo_binary().to_string_lossy().into_owned();
    StdioConfig::new(binary).args(["--server", "--fixtures"])
}

fn demo_server(name: &str) -> ServerConfig {
    ServerConfig::new(name, demo())
}

/// A command that never answers `initialize`.
fn stuck() -> StdioConfig {
    StdioConfig::new("sleep").arg("1000")
}

/// A server that never answers `initialize`.
fn stuck_server(name: &str, startup: Duration) -> ServerConfig {
    ServerConfig::new(name, stuck()).with_startup_timeout(startup)
}

fn options() -> ManagerOptions {
    ManagerOptions::default()
        .without_cache()
        .with_reconnect_attempts(3)
        .with_reconnect_delay(Duration::from_millis(50), Duration::from_millis(500))
}

fn text(result: &umcp::types::CallToolResult) -> String {
    result.text()
}
