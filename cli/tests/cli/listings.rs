//! Names checked against what the server lists, and listings that fail: a mistyped tool or
//! prompt name is a usage error however the server refuses it, and a failed listing is an
//! error, not an empty list.

use crate::fake::run;
use umcp_test_support::installed::{stderr, stdout};

/// The SDKs refuse an unknown tool with an `isError` result, not a JSON-RPC error: the name
/// is still checked against the listing, before anything is called.
#[test]
fn a_tool_the_server_does_not_list_is_a_usage_error_however_it_refuses() {
    let out = run(&[], &["call", "helo", "n=1"], 2);
    let shown = stderr(&out);
    assert!(
        shown.contains("umcp: no tool named `helo`; did you mean `hello`?"),
        "{shown}"
    );
    assert_eq!(stdout(&out), "");
    let out = run(&[], &["call", "frobnicate"], 2);
    assert!(
        stderr(&out).contains("no tool named `frobnicate`"),
        "{}",
        stderr(&out)
    );
    // A listed tool is called, its arguments typed by its schema.
    let out = run(&[], &["call", "hello", "n=1"], 0);
    assert_eq!(stdout(&out), "{\"n\": 1}\n");
}

/// With one server as with several, an unknown prompt is a usage error.
#[test]
fn an_unknown_prompt_of_one_server_is_a_usage_error() {
    let out = run(&[], &["prompt", "gret"], 2);
    assert!(
        stderr(&out).contains("umcp: no prompt named `gret`; did you mean `greet`?"),
        "{}",
        stderr(&out)
    );
    let out = run(&[], &["prompt", "greet"], 0);
    assert_eq!(stdout(&out), "hello\n");
}

/// A listing the server answers with an error is shown, with exit code 1, for every list;
/// nothing is printed as if the server had nothing.
#[test]
fn a_failed_listing_is_reported_and_fails() {
    for (command, what) in [
        ("tools", "tools"),
        ("resources", "resources"),
        ("prompts", "prompts"),
    ] {
        for json in [&[][..], &["--json"][..]] {
            let out = run(&["list-error"], &[json, &[command]].concat(), 1);
            let shown = stderr(&out);
            assert!(
                shown.contains(&format!(
                    "umcp: server `fake_server`: listing {what} failed: server error -32603: \
                     listing is broken"
                )),
                "{command} {json:?}: {shown}"
            );
            match (command, json.is_empty()) {
                ("tools", true) => assert_eq!(stdout(&out), ""),
                // Nothing listed: the failure is told as JSON too, on stdout.
                ("tools", false) => {
                    let error: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                    assert_eq!(error["isError"], true, "{error}");
                    assert_eq!(error["error"]["code"], 1, "{error}");
                    let message = error["error"]["message"].as_str().unwrap_or_default();
                    assert!(message.contains("listing is broken"), "{error}");
                }
                _ => {}
            }
        }
    }
    // Without the tool's schema, KEY=VALUE is text: the call says so.
    let out = run(&["list-error"], &["call", "hello", "n=5"], 0);
    assert_eq!(stdout(&out), "{\"n\": \"5\"}\n");
    assert!(
        stderr(&out).contains("KEY=VALUE arguments are sent as text"),
        "{}",
        stderr(&out)
    );
}
