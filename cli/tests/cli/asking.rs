//! The server's questions (elicitation) on the command line: asked only where the user can
//! see and answer them, naming the server as the user knows it, and with the user's time not
//! counted against `--timeout`.

use std::time::Duration;

use crate::fake::fake;
use umcp_test_support::installed::{empty_home, stderr, stdout, terminal_session, umcp_in};

/// A question shown on a stderr that is not the terminal would be invisible: it is declined,
/// and the reason given where stderr goes.
#[test]
fn a_question_is_declined_when_stderr_is_not_a_terminal() {
    let server = fake(&[]);
    let log = empty_home().join("asking-stderr.log");
    let redirect = format!("2>'{}'", log.display());
    let args = ["--stdio", &server, "--timeout", "10", "call", "ask"];
    let out = terminal_session(&args, &redirect, "y\nAda\n", Duration::ZERO);
    let screen = stdout(&out);
    let log = std::fs::read_to_string(&log).unwrap();
    assert_eq!(out.status.code(), Some(0), "{screen}\n{log}");
    assert!(screen.contains("decline"), "{screen}");
    assert!(!screen.contains("accept"), "{screen}");
    assert!(
        log.contains("asks: Who are you?\numcp: declined (stderr is not a terminal)"),
        "{log}"
    );
}

/// A configuration file found in the folder (`.vscode/mcp.json`), once trusted, names its
/// servers as one given with `--config` does, not by their command lines.
#[test]
fn a_found_configuration_file_names_the_server_that_asks() {
    let dir = empty_home().join("asking-found");
    std::fs::create_dir_all(dir.join(".vscode")).unwrap();
    let entry = serde_json::json!({ "command": umcp_test_support::demo::demo_binary(), "args": ["--server"] });
    let file = serde_json::json!({ "servers": { "alpha": entry } });
    std::fs::write(dir.join(".vscode/mcp.json"), file.to_string()).unwrap();
    let trusted = umcp_in(&dir).arg("trust").output().unwrap();
    assert_eq!(trusted.status.code(), Some(0), "{}", stderr(&trusted));
    let out = umcp_in(&dir)
        .args(["call", "ask_user", r#"{"question": "Ready?"}"#])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("umcp: server `alpha` asks: Ready?"), "{err}");
}

/// The user answers after longer than `--timeout`: the call still gets its answer, the
/// server's time being what the timeout bounds.
#[test]
fn the_time_spent_answering_does_not_count_against_the_timeout() {
    let server = fake(&[]);
    let args = ["--stdio", &server, "--timeout", "2", "call", "ask"];
    let out = terminal_session(&args, "", "y\nAda\n", Duration::from_secs(4));
    let screen = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{screen}");
    assert!(screen.trim_end().ends_with("accept"), "{screen}");
}
