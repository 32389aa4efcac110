//! What a server writes reaches the terminal escaped: its log messages, its progress
//! messages and the stderr lines quoted when it fails can neither drive the terminal nor
//! start a line that passes for umcp's own.

use crate::fake::{fake, run};
use crate::umcp::{on_a_terminal, stderr};

/// What `fake_server.py` writes (`HOSTILE`), as umcp shows it on one line.
const ON_ONE_LINE: &str = "one\\u{a}\\u{1b}[2Jumcp: forged \\u{202e}line";

/// Neither the escape character nor the right-to-left override made it through as such.
fn assert_inert(text: &str) {
    assert!(
        !text.contains("\u{1b}[2J") && !text.contains("\u{1b}[31m"),
        "{text:?}"
    );
    assert!(!text.contains('\u{202e}'), "{text:?}");
}

#[test]
fn log_messages_are_escaped_and_keep_to_their_lines() {
    let out = run(&[], &["--log", "debug", "call", "log"], 0);
    let shown = stderr(&out);
    assert_inert(&shown);
    assert!(
        shown.contains(
            "python3: error: fake\\u{1b}[31m: one\n  \\u{1b}[2Jumcp: forged \\u{202e}line"
        ),
        "{shown}"
    );
    assert!(
        !shown.lines().any(|l| l.starts_with("umcp: forged")),
        "{shown}"
    );
}

#[test]
fn the_stderr_of_a_failed_server_is_escaped() {
    let out = run(&["exit-on-init"], &["tools"], 3);
    let shown = stderr(&out);
    assert_inert(&shown);
    assert!(
        shown.contains("stderr: fatal\\u{1b}[31m: one\n  \\u{1b}[2Jumcp: forged"),
        "{shown}"
    );
}

#[test]
fn progress_messages_are_escaped() {
    let server = fake(&[]);
    let screen = on_a_terminal(&["--stdio", &server, "call", "progress"], "");
    assert_inert(&screen);
    assert!(screen.contains(ON_ONE_LINE), "{screen:?}");
    assert!(screen.contains("done"), "{screen:?}");
}
