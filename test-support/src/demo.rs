//! Locates (and if needed builds) the bundled demo server that the stdio tests run.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use umcp::{Client, Era, Error, RequestOptions, StdioConfig};

/// The demo example binary, built by `cargo test` alongside the tests.
pub fn demo_binary() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            // target/<profile>/deps/<test binary> -> target/<profile>/examples/demo
            let exe = std::env::current_exe().expect("test binary path");
            let profile_dir = exe
                .parent()
                .and_then(|deps| deps.parent())
                .expect("target profile dir")
                .to_path_buf();
            let binary = profile_dir
                .join("examples")
                .join(format!("demo{}", std::env::consts::EXE_SUFFIX));
            if !binary.exists() {
                // `cargo test --test x` builds only that target, and the tests of another
                // package none of the library's examples: build it.
                let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
                let mut build = Command::new(cargo);
                build.args(["build", "-p", "umcp", "--example", "demo"]);
                if profile_dir.ends_with("release") {
                    build.arg("--release");
                }
                let status = build
                    .current_dir(crate::workspace_root())
                    .status()
                    .expect("run cargo build --example demo");
                assert!(status.success(), "cargo build --example demo failed");
            }
            binary
        })
        .clone()
}

/// A stdio config that runs the demo server, with the tools only tests need, and a scripted
/// behaviour.
pub fn demo(behaviour: &str) -> StdioConfig {
    StdioConfig::new(demo_binary().to_string_lossy().into_owned()).args([
        "--server",
        "--fixtures",
        "--behaviour",
        behaviour,
    ])
}

/// Calls the `report` tool of the demo's `--modern` mode, which runs as a task (the tasks
/// extension), then one given up on, which must be cancelled on the server.
pub fn check_report_task(client: &Client) {
    use serde_json::json;
    assert_eq!(client.era(), Era::Modern);
    let result = client
        .call_tool("report", json!({"topic": "the weather", "ms": 200}))
        .expect("report");
    assert_eq!(result.text(), "report on the weather: all quiet");
    let options = RequestOptions::default().with_timeout(std::time::Duration::from_millis(100));
    let outcome = client
        .with(&options)
        .call_tool("report", json!({"ms": 60000}));
    assert!(matches!(outcome, Err(Error::Timeout { .. })), "{outcome:?}");
    // The demo numbers its tasks from 1.
    let asked = json!({"taskId": "task-2"});
    let task = client
        .request_raw("tasks/get", Some(asked))
        .expect("tasks/get");
    assert_eq!(task["status"], "cancelled");
}
