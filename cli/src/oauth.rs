//! OAuth in the `umcp` tool: the `--oauth…` flags of a `--url` server (the user's step and the
//! token store they choose are in [`crate::sign_in`]).

use std::io::Read;
use std::time::Duration;

use umcp::{ConfigFile, OAuthSettings};

/// How long the browser flow waits for the user (the loopback handler's limit).
pub const USER_WAIT: Duration = Duration::from_secs(300);

/// The variable the secret of `--oauth-client-id` is read from when no flag gives it.
pub const SECRET_VARIABLE: &str = "UMCP_OAUTH_CLIENT_SECRET";

/// The largest `--oauth-client-secret-file` read: a secret is short, and anything larger is
/// the wrong file.
const SECRET_FILE_BYTES: u64 = 64 * 1024;

/// The OAuth flags of the command line.
#[derive(Default)]
pub struct Flags {
    pub enabled: bool,
    pub client_id: Option<String>,
    /// `--oauth-client-secret`, as given (`${VAR}` not yet expanded).
    pub client_secret: Option<String>,
    /// `--oauth-client-secret-file`.
    pub client_secret_file: Option<String>,
    pub scopes: Option<String>,
    pub token_store: Option<String>,
    /// `--profile`: which of several sign-ins to one server.
    pub profile: Option<String>,
    /// `--flow`: how to sign in (`auto`, `device`, `browser`, `paste`).
    pub flow: Option<String>,
}

impl Flags {
    /// Whether any flag that configures a `--url` server's OAuth was given (each of them
    /// implies `--oauth`).
    pub fn for_server(&self) -> bool {
        self.enabled
            || self.client_id.is_some()
            || self.client_secret.is_some()
            || self.client_secret_file.is_some()
            || self.scopes.is_some()
            || self.profile.is_some()
    }

    /// The settings of the `--url` server, when it uses OAuth; an error names where the secret was
    /// looked for, never the secret.
    pub fn settings(&self) -> Result<Option<OAuthSettings>, String> {
        if !self.for_server() {
            return Ok(None);
        }
        self.settings_or_default().map(Some)
    }

    /// The settings of the `--url` server with OAuth on, whatever the flags say (a server
    /// signed in to before, or `umcp auth`).
    pub fn settings_or_default(&self) -> Result<OAuthSettings, String> {
        let mut settings = OAuthSettings::new();
        if let Some(profile) = &self.profile {
            settings = settings.with_profile(profile.clone());
        }
        if let Some(id) = &self.client_id {
            settings = settings.with_client_id(id.clone());
        }
        if let Some(secret) = self.secret(|name| std::env::var(name).ok())? {
            settings = settings.with_client_secret(secret);
        }
        if let Some(scopes) = &self.scopes {
            settings = settings.with_scopes(scopes.split_whitespace());
        }
        Ok(settings)
    }

    /// The client secret, from the first place that gives one: `--oauth-client-secret` (`${VAR}`
    /// expanded, to keep it out of `ps` and shell history), `--oauth-client-secret-file`, or with
    /// `--oauth-client-id` the [`SECRET_VARIABLE`] of `env`.
    fn secret(&self, env: impl Fn(&str) -> Option<String>) -> Result<Option<String>, String> {
        match (&self.client_secret, &self.client_secret_file) {
            (Some(_), Some(_)) => {
                Err("give only one of --oauth-client-secret and --oauth-client-secret-file".into())
            }
            (Some(text), None) => ConfigFile::expand(text)
                .map(Some)
                .map_err(|e| format!("--oauth-client-secret: {e}")),
            (None, Some(path)) => secret_file(path).map(Some),
            (None, None) if self.client_id.is_some() => {
                Ok(env(SECRET_VARIABLE).filter(|s| !s.is_empty()))
            }
            (None, None) => Ok(None),
        }
    }
}

/// The secret kept in the file at `path`: its text less the line end after it. An empty,
/// oversized or non-UTF-8 file is refused, its content never quoted.
fn secret_file(path: &str) -> Result<String, String> {
    let failed = |why: String| format!("--oauth-client-secret-file {path}: {why}");
    let file = std::fs::File::open(path).map_err(|e| failed(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(SECRET_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| failed(e.to_string()))?;
    if bytes.len() as u64 > SECRET_FILE_BYTES {
        return Err(failed(format!(
            "larger than {} KiB, not a secret",
            SECRET_FILE_BYTES / 1024
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| failed("not UTF-8 text".into()))?;
    let secret = text.trim_end_matches(['\n', '\r']);
    if secret.is_empty() {
        return Err(failed("empty".into()));
    }
    if secret.chars().any(char::is_control) {
        return Err(failed("holds a control character or several lines".into()));
    }
    Ok(secret.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(id: bool, secret: Option<&str>, file: Option<&str>) -> Flags {
        Flags {
            client_id: id.then(|| "client".to_owned()),
            client_secret: secret.map(str::to_owned),
            client_secret_file: file.map(str::to_owned),
            ..Flags::default()
        }
    }

    fn env(name: &str) -> Option<String> {
        (name == SECRET_VARIABLE).then(|| "from the environment".to_owned())
    }

    #[test]
    fn the_secret_comes_from_the_flag_a_file_or_the_environment() {
        let dir = std::env::temp_dir().join(format!("umcp-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("secret");
        std::fs::write(&file, "from a file\r\n").unwrap();
        let file = file.to_str().unwrap();
        let secret = |f: Flags| f.secret(env);
        assert_eq!(
            secret(flags(true, Some("literal"), None)),
            Ok(Some("literal".into()))
        );
        assert_eq!(
            secret(flags(true, None, Some(file))),
            Ok(Some("from a file".into()))
        );
        assert_eq!(
            secret(flags(true, None, None)),
            Ok(Some("from the environment".into()))
        );
        // The variable is the secret of a pre-registered client only.
        assert_eq!(secret(flags(false, None, None)), Ok(None));
        let both = secret(flags(true, Some("x"), Some(file))).unwrap_err();
        assert!(both.contains("only one of"), "{both}");
        // `${VAR}` in the flag: a variable that is not set is named, and nothing else.
        let unset = secret(flags(true, Some("${UMCP_TEST_UNSET_SECRET}"), None)).unwrap_err();
        assert!(unset.contains("UMCP_TEST_UNSET_SECRET"), "{unset}");
        for (content, why) in [("\n", "empty"), ("two\nlines", "control character")] {
            std::fs::write(dir.join("bad"), content).unwrap();
            let bad = dir.join("bad").display().to_string();
            let error = secret(flags(true, None, Some(&bad))).unwrap_err();
            assert!(error.contains(why) && error.contains(&bad), "{error}");
            assert!(!error.contains("two"), "the content is not quoted: {error}");
        }
        std::fs::write(dir.join("big"), vec![b'a'; 65 * 1024]).unwrap();
        let big = dir.join("big").display().to_string();
        assert!(secret(flags(true, None, Some(&big)))
            .unwrap_err()
            .contains("larger"));
        let missing = secret(flags(true, None, Some("/nonexistent/secret"))).unwrap_err();
        assert!(missing.contains("/nonexistent/secret"), "{missing}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
