//! OAuth in the `umcp` tool: the `--oauth…` flags of a `--url` server, the token store, and
//! the browser flow (the authorization URL on stderr, the redirect on 127.0.0.1).

use std::time::Duration;

use umcp::{ManagerOptions, OAuthSettings};

/// How long the browser flow waits for the user (the loopback handler's limit).
pub const USER_WAIT: Duration = Duration::from_secs(300);

/// The OAuth flags of the command line.
#[derive(Default)]
pub struct Flags {
    pub enabled: bool,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub scopes: Option<String>,
    pub token_store: Option<String>,
}

impl Flags {
    /// Whether any flag that configures a `--url` server's OAuth was given (each of them
    /// implies `--oauth`).
    pub fn for_server(&self) -> bool {
        self.enabled
            || self.client_id.is_some()
            || self.client_secret.is_some()
            || self.scopes.is_some()
    }

    /// The settings of the `--url` server, when it uses OAuth.
    pub fn settings(&self) -> Option<OAuthSettings> {
        if !self.for_server() {
            return None;
        }
        let mut settings = OAuthSettings::new();
        if let Some(id) = &self.client_id {
            settings = settings.with_client_id(id.clone());
        }
        if let Some(secret) = &self.client_secret {
            settings = settings.with_client_secret(secret.clone());
        }
        if let Some(scopes) = &self.scopes {
            settings = settings.with_scopes(scopes.split_whitespace());
        }
        Some(settings)
    }
}

/// Gives the manager the browser flow and the token store.
#[cfg(feature = "oauth")]
pub fn configure(options: ManagerOptions, flags: &Flags) -> Result<ManagerOptions, String> {
    use std::sync::Arc;
    let mut options = options.with_loopback_authorization(|server, url| {
        crate::output::warn(&format!("umcp: server `{server}` needs authorization."));
        // The URL comes from the server's metadata: escaped, so it shows what a browser gets.
        let url = crate::shown::line(url);
        crate::output::warn(&format!("Open this page to authorize: {url}"));
        Ok(())
    });
    if let Some(path) = &flags.token_store {
        options = options.with_token_store(Arc::new(umcp::auth::FileStore::new(path)));
    }
    Ok(options)
}

/// Without the `oauth` feature, OAuth flags are a usage error.
#[cfg(not(feature = "oauth"))]
pub fn configure(options: ManagerOptions, flags: &Flags) -> Result<ManagerOptions, String> {
    if flags.for_server() || flags.token_store.is_some() {
        return Err("OAuth needs umcp's `oauth` feature".into());
    }
    Ok(options)
}
