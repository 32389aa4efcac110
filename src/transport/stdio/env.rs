//! The server's environment: the parent's variables filtered by the policy, plus the configured ones.

use std::ffi::OsStr;
use std::process::Command;

use super::EnvPolicy;

/// What a server needs to find programs, its home, temp dir and locale, and nothing that
/// usually holds secrets.
#[cfg(not(windows))]
const ALLOWED: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG",
];

/// What Windows programs (and `npx.cmd`-style launchers through `COMSPEC`/`PATHEXT`) need.
#[cfg(windows)]
const ALLOWED: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "COMSPEC",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
    "WINDIR",
];

/// Sets up `cmd`'s environment for `policy`, then adds `configured` on top so it wins.
pub(super) fn apply(cmd: &mut Command, policy: EnvPolicy, configured: &[(String, String)]) {
    match policy {
        EnvPolicy::InheritAll => {}
        EnvPolicy::AllowList => {
            cmd.env_clear();
            cmd.envs(std::env::vars_os().filter(|(name, _)| is_allowed(name)));
        }
        EnvPolicy::Clear => {
            cmd.env_clear();
        }
    }
    cmd.envs(configured.iter().map(|(k, v)| (k, v)));
}

/// Whether the parent's variable `name` passes the allow-list.
fn is_allowed(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    if cfg!(windows) {
        // Windows variable names are case-insensitive (`Path` is `PATH`).
        ALLOWED
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(name))
    } else {
        ALLOWED.contains(&name) || name.starts_with("LC_")
    }
}

#[cfg(all(test, not(windows)))]
mod tests {
    use super::*;

    #[test]
    fn allow_list_keeps_basics_and_locale_only() {
        for name in ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR"] {
            assert!(is_allowed(OsStr::new(name)), "{name}");
        }
        for name in [
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "path",
            "LD_PRELOAD",
            "XLC_X",
        ] {
            assert!(!is_allowed(OsStr::new(name)), "{name}");
        }
    }
}
