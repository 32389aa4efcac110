//! The lock a run's servers are pinned to (`--frozen`, `"frozen": true`), read as `lock
//! --check` reads it too, and the tools it hides said on stderr.

use std::path::Path;

use umcp::lock::Lockfile;
use umcp::{Hidden, Manager};

use crate::exit::Exit;
use crate::output::warn;
use crate::shown;

/// The lockfile at `path`, for `what` (`--frozen`, `lock --check`): a missing or malformed
/// one is an error that says how to write it.
pub fn load(path: &Path, what: &str) -> Result<Lockfile, Exit> {
    match Lockfile::load(path) {
        Ok(lock) => Ok(lock),
        Err(_) if !path.exists() => Err(Exit(
            1,
            format!(
                "{what}: there is no lockfile {}: write it with umcp lock",
                shown::line(&path.display().to_string())
            ),
        )),
        Err(error) => Err(Exit(
            1,
            format!("{what}: {}", shown::block(&error.to_string())),
        )),
    }
}

/// Says on stderr each tool the lock hides, and why: drift, not filtering (the configuration's
/// own choice, said when such a tool is called).
pub fn report_hidden(manager: &Manager) {
    for hidden in manager.hidden_tools() {
        if hidden.why != Hidden::Filtered {
            warn(&format!("umcp: {}", shown::line(&hidden.to_string())));
        }
    }
}
