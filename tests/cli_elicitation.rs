//! Tests for the `umcp` binary as the host of a server's questions (elicitation): the server
//! that asks is named, and what it wrote is escaped before it reaches the terminal. Run end
//! to end against the bundled demo server, whose `ask_user` asks its `question`.

#[allow(dead_code)] // Only the binary's path is used here.
#[path = "common/demo.rs"]
mod demo;

#[path = "common/umcp.rs"]
mod umcp;

use umcp::{demo, demo_stdio, empty_home, on_a_terminal, stderr, stdout, umcp_in};

/// A configuration file of two demo servers, `alpha` and `beta`, in a directory of its own.
fn config(test: &str) -> std::path::PathBuf {
    let dir = empty_home().join(test);
    std::fs::create_dir_all(&dir).unwrap();
    let entry = serde_json::json!({ "command": demo::demo_binary(), "args": ["--server"] });
    let file = serde_json::json!({ "mcpServers": { "alpha": entry, "beta": entry } });
    let path = dir.join("mcp.json");
    std::fs::write(&path, file.to_string()).unwrap();
    path
}

#[test]
fn the_server_of_a_configuration_file_is_named_by_its_name() {
    let path = config("named");
    let path = path.to_str().unwrap();
    let question = r#"{"question": "Ready?"}"#;
    let args = [
        "--config", path, "--server", "beta", "call", "ask_user", question,
    ];
    let out = umcp_in(&empty_home()).args(args).output().unwrap();
    assert_eq!(stdout(&out), "declined\n", "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("umcp: server `beta` asks: Ready?"), "{err}");
    let screen = on_a_terminal(&args, "n\n");
    assert!(screen.contains("Server `beta` asks: Ready?"), "{screen}");
    assert!(screen.contains("declined"), "{screen}");
}

#[test]
fn what_the_server_wrote_cannot_drive_the_terminal() {
    // Clear the screen, move up a line, and a right-to-left override; then a line that
    // would pass for umcp's own.
    let question = "Ready?\u{1b}[2J\u{1b}[1A \u{202e}gnp.exe\numcp: server `trusted` asks: PIN?";
    let arguments = serde_json::json!({ "question": question }).to_string();
    let out = demo(&["call", "ask_user", &arguments], 0);
    let err = stderr(&out);
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{202e}'),
        "{err:?}"
    );
    assert!(
        err.contains("asks: Ready?\\u{1b}[2J\\u{1b}[1A \\u{202e}gnp.exe\n  umcp: server `trusted`"),
        "{err}"
    );
    let stdio = demo_stdio();
    let args = ["--stdio", &stdio, "call", "ask_user", &arguments];
    let screen = on_a_terminal(&args, "n\n");
    assert!(!screen.contains("\u{1b}[2J"), "{screen:?}");
    assert!(screen.contains("Ready?\\u{1b}[2J"), "{screen}");
}
