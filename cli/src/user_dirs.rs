//! Where the user's own files are: directories named by the environment, taken only when
//! absolute, since a relative one would be read from the working directory, which may be a
//! checkout.

use std::path::PathBuf;

/// The variable that names the state directory, overriding the platform's.
pub const STATE_DIR_VARIABLE: &str = "UMCP_STATE_DIR";

/// The directory the variable `name` names, when it names one absolutely: an unset, empty or
/// relative value is none (the XDG spec asks the same of its variables).
pub fn user_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
}

/// Where umcp keeps its per-user state (the trusted files, the shell's history):
/// `$UMCP_STATE_DIR`; else on Windows `%LOCALAPPDATA%\umcp`, elsewhere
/// `$XDG_STATE_HOME/umcp` or `~/.local/state/umcp`. Each only when absolute.
pub fn state_dir() -> Option<PathBuf> {
    if let Some(dir) = user_path(STATE_DIR_VARIABLE) {
        return Some(dir);
    }
    if cfg!(windows) {
        return user_path("LOCALAPPDATA").map(|d| d.join("umcp"));
    }
    let xdg = user_path("XDG_STATE_HOME");
    let base = xdg.or_else(|| user_path("HOME").map(|h| h.join(".local/state")));
    base.map(|d| d.join("umcp"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absolute_directories_are_the_users() {
        std::env::set_var("UMCP_TEST_DIR_ABSOLUTE", "/home/me");
        std::env::set_var("UMCP_TEST_DIR_RELATIVE", ".");
        std::env::set_var("UMCP_TEST_DIR_EMPTY", "");
        assert_eq!(
            user_path("UMCP_TEST_DIR_ABSOLUTE"),
            Some(PathBuf::from("/home/me"))
        );
        for name in [
            "UMCP_TEST_DIR_RELATIVE",
            "UMCP_TEST_DIR_EMPTY",
            "UMCP_TEST_DIR_UNSET",
        ] {
            assert_eq!(user_path(name), None, "{name}");
        }
    }
}
