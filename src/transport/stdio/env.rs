//! The server's environment: the parent's variables filtered by the policy, plus the configured ones.

use std::ffi::OsStr;
use std::process::Command;

/// How the server's environment is built from the parent's (the configured variables are
/// always added on top, and win).
///
/// See the example on [`StdioConfig`](super::StdioConfig).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EnvPolicy {
    /// Pass only a short allow-list of the parent's variables, so secrets in the parent's
    /// environment do not leak to servers: on Unix `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`,
    /// `USER`, `TMPDIR`, `TZ`, `LANG`, `LC_*` and `XDG_*`; on Windows `APPDATA`, `HOMEDRIVE`,
    /// `HOMEPATH`, `LOCALAPPDATA`, `PATH`, `PATHEXT`, `COMSPEC`, `PROCESSOR_ARCHITECTURE`,
    /// `PROGRAMDATA`, `PROGRAMFILES`, `SYSTEMDRIVE`, `SYSTEMROOT`, `TEMP`, `TMP`, `USERNAME`,
    /// `USERPROFILE` and `WINDIR`. On both, what a server needs to reach the network where the
    /// parent does: the proxy variables (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`,
    /// also in lower case) and the certificate-bundle paths (`SSL_CERT_FILE`, `SSL_CERT_DIR`,
    /// `NODE_EXTRA_CA_CERTS`, `REQUESTS_CA_BUNDLE`). Anything else (a token a server expects
    /// from its environment, say) is passed by name in the configuration, or with
    /// [`EnvPolicy::InheritAll`].
    #[default]
    AllowList,
    /// Pass the parent's whole environment.
    InheritAll,
    /// Pass nothing of the parent's environment; the server sees only the configured variables.
    Clear,
}

/// What a server needs to find programs, its home, temp dir, time zone and locale, and
/// nothing that usually holds secrets.
#[cfg(not(windows))]
const ALLOWED: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "TZ", "LANG",
];

/// What a server needs to reach the network as its parent does (a proxy, which `npx` and `uvx`
/// download through; an added CA). A proxy URL may hold credentials, but without it the server
/// cannot start.
const NETWORK: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
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
            .chain(NETWORK)
            .any(|allowed| allowed.eq_ignore_ascii_case(name))
    } else {
        // `XDG_*` are the base directories (config, cache, data, runtime) a server keeps its
        // files in.
        ALLOWED.contains(&name)
            || NETWORK.contains(&name)
            || name.starts_with("LC_")
            || name.starts_with("XDG_")
    }
}

#[cfg(all(test, not(windows)))]
mod tests {
    use super::*;

    #[test]
    fn allow_list_keeps_basics_and_locale_only() {
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "LC_ALL",
            "LC_CTYPE",
            "TMPDIR",
            "TZ",
            "XDG_RUNTIME_DIR",
            "XDG_CONFIG_HOME",
            "HTTPS_PROXY",
            "https_proxy",
            "NO_PROXY",
            "NODE_EXTRA_CA_CERTS",
            "SSL_CERT_FILE",
        ] {
            assert!(is_allowed(OsStr::new(name)), "{name}");
        }
        for name in [
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "path",
            "LD_PRELOAD",
            "XLC_X",
            "NPM_TOKEN",
            "Https_Proxy",
        ] {
            assert!(!is_allowed(OsStr::new(name)), "{name}");
        }
    }
}
