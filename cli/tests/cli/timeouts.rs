//! `--timeout` bounds a command's server interaction as a whole, the listings run as the
//! server connects included: a server that hangs a listing or a request fails the command
//! within one timeout, not one per request, and the user's time answering a question of the
//! server is not counted, whichever request it came with.

use std::time::{Duration, Instant};

use crate::fake::{fake, run};
use umcp_test_support::installed::{install_dir, stderr, stdout, terminal_session};

/// The `--timeout` of these runs, in seconds.
const TIMEOUT: &str = "2";

/// Runs `args` with `--timeout 2` against the fake server hanging the methods of `hangs`,
/// checks the exit code and that the run ended after about one timeout, well before two, and
/// returns its stderr.
fn hung(hangs: &[&str], args: &[&str], code: i32) -> String {
    let modes: Vec<String> = hangs.iter().map(|m| format!("hang={m}")).collect();
    let modes: Vec<&str> = modes.iter().map(String::as_str).collect();
    // Installed before the clock starts (the first test to get here installs it).
    install_dir();
    let started = Instant::now();
    let out = run(&modes, &[&["--timeout", TIMEOUT][..], args].concat(), code);
    let elapsed = started.elapsed();
    let shown = stderr(&out);
    assert!(
        elapsed > Duration::from_millis(1500) && elapsed < Duration::from_millis(3500),
        "{hangs:?} {args:?}: {elapsed:?}\n{shown}"
    );
    shown
}

/// The tools listed at connect are listed again for the error when that failed: a listing
/// that hung then is not waited for a second time, by `tools` or by `call`, which calls
/// nothing once its time is up.
#[test]
fn a_hanging_tool_listing_fails_tools_and_call_within_one_timeout() {
    for args in [&["tools"][..], &["call", "hello", "n=1"][..]] {
        let shown = hung(&["tools/list"], args, 124);
        assert!(
            shown.contains("listing tools failed: timeout: request `tools/list` after 2.0s"),
            "{args:?}: {shown}"
        );
        assert!(!shown.contains("tools/call"), "{args:?}: {shown}");
    }
}

/// The prompts listed at connect hung: `prompts` and `prompt` (which checks the name against
/// the listing) fail within the same timeout.
#[test]
fn a_hanging_prompt_listing_fails_prompts_and_prompt_within_one_timeout() {
    let shown = hung(&["prompts/list"], &["prompts"], 124);
    assert!(
        shown.contains("listing prompts failed: timeout: request `prompts/list` after 2.0s"),
        "{shown}"
    );
    let shown = hung(&["prompts/list"], &["prompt", "greet"], 124);
    assert!(
        shown.contains("timeout: request `prompts/list` after 2.0s"),
        "{shown}"
    );
}

/// A request of the command gets what is left of the timeout after a listing that hung at
/// connect, not a timeout of its own.
#[test]
fn a_hanging_request_after_a_hanging_listing_fails_within_one_timeout() {
    let hangs = ["prompts/list", "resources/list", "resources/read"];
    let shown = hung(&hangs, &["resources"], 124);
    assert!(
        shown.contains("listing resources failed: timeout"),
        "{shown}"
    );
    let shown = hung(&hangs, &["read", "file:///x"], 124);
    assert!(
        shown.contains("timeout: request `resources/read` after 2.0s"),
        "{shown}"
    );
}

/// The user answers a question that came with a prompt, or with a resource read, after
/// longer than `--timeout`: the request still gets its answer, as a tool call does.
#[test]
fn the_time_spent_answering_does_not_count_against_the_timeout_of_any_request() {
    let server = fake(&[]);
    for command in [&["prompt", "ask"][..], &["read", "ask:"][..]] {
        let args = [&["--stdio", &server, "--timeout", TIMEOUT][..], command].concat();
        let out = terminal_session(&args, "", "y\nAda\n", Duration::from_secs(4));
        let screen = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{command:?}: {screen}");
        assert!(
            screen.trim_end().ends_with("accept"),
            "{command:?}: {screen}"
        );
    }
}
