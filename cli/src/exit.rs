//! How a command ends: its exit code and message, and the usage error every part raises.
//!
//! The ground floor of the tool: every command returns `Result<(), Exit>`, and `main` reports
//! it. The codes are documented in `umcp --help` (`EXIT CODES`).

use crate::help;
use crate::output::{pretty, say, take_said, warn};
use crate::spec::EXIT_CODES;

/// The exit code of a command whose requests ran out of their `--timeout`, as timeout(1)
/// ends.
pub const TIMED_OUT: u8 = 124;

/// How the program ends: the exit code and a message (stdout for 0, stderr otherwise).
#[derive(Debug)]
pub struct Exit(pub u8, pub String);

/// The exit code of drift: `lock --check` found a change, or a call was refused for one.
pub const DRIFTED: u8 = 6;

/// A usage error: exit code 2 with the short usage.
pub fn usage(message: impl Into<String>) -> Exit {
    Exit(2, format!("{}\n{}", message.into(), help::usage()))
}

/// [`report`] for a command run with `--json` when `json`: a failure that printed nothing on
/// stdout prints `{"isError": true, "error": {"code", "message"}}` there instead of its
/// message on stderr, the message being the command's, or the last warning it gave, or what
/// the exit code means. A failure that printed its result (a tool's error, a listing of which
/// a part failed) adds nothing, so stdout stays one JSON document.
pub fn report_as(result: Result<(), Exit>, json: bool) -> u8 {
    let (printed, warned) = take_said();
    match result {
        Err(Exit(code, message)) if json && code != 0 && !printed => {
            let usage_line = format!("\n{}", help::usage());
            let message = match message.strip_suffix(&usage_line).unwrap_or(&message) {
                "" => warned
                    .map(|w| w.trim_start_matches("umcp: ").to_owned())
                    .unwrap_or_else(|| meaning(code).to_owned()),
                message => message.to_owned(),
            };
            let error = serde_json::json!({
                "isError": true,
                "error": {"code": code, "message": message},
            });
            say(&pretty(&error));
            code
        }
        other => report(other),
    }
}

/// What exit code `code` means, from the help's table.
fn meaning(code: u8) -> &'static str {
    (EXIT_CODES.iter())
        .find(|(c, _)| *c == code)
        .map_or("failed", |(_, meaning)| meaning)
}

/// Prints how a command ended (its message on stdout for 0, on stderr otherwise) and returns
/// its exit code.
pub fn report(result: Result<(), Exit>) -> u8 {
    match result {
        Ok(()) => 0,
        Err(Exit(0, message)) => {
            say(message.trim_end());
            0
        }
        Err(Exit(code, message)) => {
            if !message.is_empty() {
                warn(&format!("umcp: {message}"));
            }
            code
        }
    }
}
