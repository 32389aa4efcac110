//! How a command ends: its exit code and message, and the usage error every part raises.
//!
//! The ground floor of the tool: every command returns `Result<(), Exit>`, and `main` reports
//! it. The codes are documented in `umcp --help` (`EXIT CODES`).

use crate::help;
use crate::output::{say, warn};

/// How the program ends: the exit code and a message (stdout for 0, stderr otherwise).
pub struct Exit(pub u8, pub String);

/// A usage error: exit code 2 with the short usage.
pub fn usage(message: impl Into<String>) -> Exit {
    Exit(2, format!("{}\n{}", message.into(), help::usage()))
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
