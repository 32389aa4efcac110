//! A stdio server described by one command line, and how its connection reads once closed.

use umcp_test_support::demo;
use umcp_test_support::installed::{fixtures_stdio, stderr, stdout};

use umcp::{Client, Error, StdioConfig};

/// The demo server behind `sh`, which first prints a start-up banner on stderr, as many
/// servers do. The binary's path is quoted, so a path with spaces survives the split.
#[cfg(unix)]
fn bannered_demo() -> StdioConfig {
    let line = format!(
        r#"sh -c 'echo "Demo MCP server running on stdio" >&2; exec "$0" --server' '{}'"#,
        demo::demo_binary().display()
    );
    StdioConfig::from_command_line(&line).unwrap()
}

#[cfg(unix)]
#[test]
fn a_command_line_starts_the_server_and_a_clean_close_reads_plainly() {
    let config = bannered_demo();
    assert_eq!(config.get_command(), "sh");
    assert_eq!(config.get_args().len(), 3);
    assert!(config.get_args()[1].contains(r#"exec "$0" --server"#));
    let client = Client::connect(config).unwrap();
    assert!(!client.list_all_tools().unwrap().is_empty());
    assert!(client.closed().is_none());
    client.close();
    let closed = client.closed().expect("closed after close()");
    assert!(closed.is_client_close(), "{closed:?}");
    assert_eq!(closed.to_string(), "closed: closed by client");
    // The banner is still there for whoever wants it (the close drains stderr first), just
    // not in the message.
    let tail = closed.stderr_tail.as_deref().unwrap_or_default();
    assert!(tail.contains("running on stdio"), "{closed:?}");
    match client.ping() {
        Err(Error::Closed(info)) => assert_eq!(info.to_string(), "closed: closed by client"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn broken_command_lines_are_config_errors() {
    for line in [
        "",
        "   ",
        "npx 'unterminated",
        "npx \"also",
        "npx trailing\\",
    ] {
        match StdioConfig::from_command_line(line) {
            Err(Error::Config(message)) => assert!(!message.is_empty()),
            other => panic!("{line:?}: {:?}", other.map(|c| c.get_command().to_owned())),
        }
    }
}

/// `Debug` shows the arguments as messages show the command line: secret-looking values
/// redacted, the rest as given.
#[test]
fn debug_redacts_secret_arguments() {
    let config = StdioConfig::new("server")
        .args([
            "--token",
            "tok-123",
            "--api-key=key-456",
            "API_SECRET=sec-789",
            "https://h/?key=url-000",
            "--verbose",
        ])
        .env("API_KEY", "env-secret");
    let shown = format!("{config:?}");
    for secret in ["tok-123", "key-456", "sec-789", "url-000", "env-secret"] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    assert!(
        shown.contains("--verbose") && shown.contains("API_KEY"),
        "{shown}"
    );
}

/// `examples/cli.rs`, the short version: a server from one command line, its tools, a call.
#[test]
fn the_short_example_lists_and_calls() {
    let example =
        demo::demo_binary().with_file_name(format!("cli{}", std::env::consts::EXE_SUFFIX));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = std::process::Command::new(cargo);
    build.args(["build", "--quiet", "--example", "cli"]);
    if example.to_string_lossy().contains("release") {
        build.arg("--release");
    }
    let status = build
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo build --example cli");
    assert!(status.success(), "cargo build --example cli failed");
    let run = |args: &[&str]| {
        std::process::Command::new(&example)
            .args(args)
            .output()
            .unwrap()
    };
    let stdio = fixtures_stdio();
    let out = run(&[&stdio]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).lines().any(|l| l.starts_with("add  ")),
        "{}",
        stdout(&out)
    );
    let out = run(&[&stdio, "add", r#"{"a": 2, "b": 3}"#]);
    assert_eq!(stdout(&out), "5\n", "{}", stderr(&out));
    let out = run(&[&stdio, "fail", r#"{"message": "no"}"#]);
    assert!(!out.status.success());
}
