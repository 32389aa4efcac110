//! What a server writes reaches the terminal escaped: its listings, results, completions,
//! identity, errors, notifications, log messages, progress messages and the stderr lines
//! quoted when it fails can neither drive the terminal nor start a line that passes for
//! umcp's own, on stdout (piped too) as on stderr; `--json` stays JSON, with the characters
//! serde_json leaves raw written as `\u` escapes.

use std::process::Output;

use serde_json::Value;

use crate::fake::{fake, run};
use umcp_test_support::installed::{on_a_terminal, stderr, stdout};

/// What `fake_server.py` puts in every text in its `hostile` mode (`TERMINAL`).
const TERMINAL: &str = "\u{1b}]0;x\u{7}\u{1b}[31m\u{9b}1m\u{202e}\u{2066}\u{200f}\u{e0041}\u{7f}";

/// `TERMINAL` as umcp's text output shows it.
const ESCAPED: &str = r"\u{1b}]0;x\u{7}\u{1b}[31m\u{9b}1m\u{202e}\u{2066}\u{200f}\u{e0041}\u{7f}";

/// `TERMINAL` as umcp's JSON output writes it inside a string.
const JSON_ESCAPED: &str =
    r"\u001b]0;x\u0007\u001b[31m\u009b1m\u202e\u2066\u200f\udb40\udc41\u007f";

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
            "fake_server: error: fake\\u{1b}[31m: one\n  \\u{1b}[2Jumcp: forged \\u{202e}line"
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

/// No character a terminal acts on, or that hides or reorders text, in either stream: only
/// newlines and tabs among the controls.
fn assert_no_raw_controls(out: &Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        let raw = text.chars().find(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
                || ('\u{e0000}'..='\u{e007f}').contains(&c)
        });
        assert_eq!(raw, None, "{stream}: {text:?}");
    }
}

/// Runs umcp against the hostile server, checks the exit code and that nothing raw came out.
fn hostile(args: &[&str], code: i32) -> Output {
    let out = run(&["hostile"], args, code);
    assert_no_raw_controls(&out);
    out
}

/// `--json` output: valid JSON whose strings hold what the server sent, exactly.
fn parsed(out: &Output) -> Value {
    let text = stdout(out);
    assert!(text.contains(JSON_ESCAPED), "{text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn tool_listings_and_calls_carry_no_raw_escape_or_bell() {
    let out = hostile(&["tools"], 0);
    let shown = stdout(&out);
    assert!(
        shown.contains(&format!("paint()  Paints.{ESCAPED}\n")),
        "{shown}"
    );
    assert!(shown.contains(&format!("odd{ESCAPED}()\n")), "{shown}");
    let tools = parsed(&hostile(&["--json", "tools"], 0));
    assert_eq!(tools[0]["tool"]["title"], format!("Paint{TERMINAL}"));

    let out = hostile(&["call", "paint"], 0);
    let shown = stdout(&out);
    for line in [
        format!("painted{ESCAPED}\nline two\\u{{d}}over\n"),
        format!("[image image/png{ESCAPED}: 4 base64 bytes]\n"),
        format!("[audio audio/wav{ESCAPED}: 4 base64 bytes]\n"),
        format!("[resource file:///link{ESCAPED}]\n"),
        format!("embedded{ESCAPED}\n"),
        format!("[blob file:///b{ESCAPED}: 4 base64 bytes]\n"),
        format!("\"data\": \"unknown{JSON_ESCAPED}\""),
    ] {
        assert!(shown.contains(&line), "{line}: {shown}");
    }
    let result = parsed(&hostile(&["--json", "call", "paint"], 0));
    assert_eq!(
        result["content"][0]["text"],
        format!("painted{TERMINAL}\r\nline two\rover")
    );

    let out = hostile(&["call", "bare"], 0);
    assert!(
        stdout(&out).contains(&format!("\"note\": \"structured{JSON_ESCAPED}\"")),
        "{}",
        stdout(&out)
    );
}

#[test]
fn resource_and_prompt_listings_are_escaped() {
    let out = hostile(&["resources"], 0);
    // One row per resource, with the first line of its description.
    assert_eq!(stdout(&out), format!("file:///r{ESCAPED}  {ESCAPED}\n"));
    parsed(&hostile(&["--json", "resources"], 0));
    let out = hostile(&["templates"], 0);
    assert_eq!(stdout(&out), format!("file:///{{x}}{ESCAPED}  {ESCAPED}\n"));
    parsed(&hostile(&["--json", "templates"], 0));
    let out = hostile(&["prompts"], 0);
    assert_eq!(
        stdout(&out),
        format!("greet()  Greets.{ESCAPED}\np{ESCAPED}()\n")
    );
    parsed(&hostile(&["--json", "prompts"], 0));
}

#[test]
fn prompts_resources_completions_and_identity_are_escaped() {
    let out = hostile(&["prompt", "greet"], 0);
    assert_eq!(
        stdout(&out),
        format!("# A greeting.{ESCAPED}\nhello{ESCAPED}\n")
    );
    let uri = format!("file:///r{TERMINAL}");
    let out = hostile(&["read", &uri], 0);
    assert_eq!(
        stdout(&out),
        format!("read{ESCAPED}\n[blob file:///b{ESCAPED}: 4 base64 bytes]\n")
    );
    parsed(&hostile(&["--json", "read", &uri], 0));
    let out = hostile(&["complete", "prompt", "greet", "name"], 0);
    assert_eq!(stdout(&out), format!("done{ESCAPED}\nplain\n"));
    parsed(&hostile(
        &["--json", "complete", "prompt", "greet", "name"],
        0,
    ));
    let out = hostile(&["info"], 0);
    let shown = stdout(&out);
    assert!(
        shown.contains(&format!("instructions: Use me.\n  {ESCAPED}\n")),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("\"name\":\"fake{JSON_ESCAPED}\"")),
        "{shown}"
    );
    let info = parsed(&hostile(&["--json", "info"], 0));
    assert_eq!(info[0]["instructions"], format!("Use me.\n{TERMINAL}"));
}

#[test]
fn a_servers_errors_are_escaped() {
    let out = hostile(&["call", "fail"], 1);
    let shown = stderr(&out);
    assert!(
        shown.contains(&format!("failed{ESCAPED}\n  umcp: forged")),
        "{shown}"
    );
    let out = hostile(&["ping"], 1);
    let shown = stdout(&out);
    assert!(
        shown.contains("  failed  ") && shown.contains(&format!("no ping{ESCAPED}")),
        "{shown}"
    );
    parsed(&hostile(&["--json", "ping"], 1));
}

#[test]
fn watched_notifications_are_escaped() {
    // The server sends updates of the resource once it is subscribed to: its URI is the one
    // asked for, which came from the server's listing.
    let uri = format!("file:///r{TERMINAL}");
    let args = ["watch", "--resource", &uri, "--for", "3"];
    let out = hostile(&args, 0);
    assert!(
        stdout(&out).contains(&format!(
            "notifications/resources/updated file:///r{ESCAPED}"
        )),
        "{}",
        stdout(&out)
    );
    let out = hostile(&[&["--json"][..], &args].concat(), 0);
    let text = stdout(&out);
    assert!(text.contains(JSON_ESCAPED), "{text}");
    let first: Value = serde_json::from_str(text.lines().next().unwrap_or_default()).unwrap();
    assert_eq!(first["params"]["uri"], uri, "{text}");
}
