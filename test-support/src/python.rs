//! The system's Python, for the tests' small scripted stdio servers.

use std::path::Path;

/// `/usr/bin/python3` when it exists, else `python3` from the `PATH`: the system interpreter
/// directly, so that no version-manager shim needs its environment. A missing Python fails
/// the test that starts it, with the spawn error naming the program.
pub fn system_python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}
