//! How the user signs in and where the tokens live: the flow (`--flow`: a browser here, a device
//! code, or an address pasted back from a browser elsewhere, chosen by whether there is a display)
//! and the token store (the operating system's keychain where it works, else an owner-only file).

use std::io;
use std::sync::{Arc, OnceLock};

use umcp::auth::{
    AuthorizationHandler, DeviceAuthorization, FileStore, KeychainStore, LoopbackHandler,
    MemoryStore, PasteHandler, PastePrompt, StoreLock, StoredCredentials, TokenStore,
};
use umcp::{AuthError, AuthStep, ManagerOptions};

use crate::oauth::{Flags, USER_WAIT};
use crate::output::warn;
use crate::shown;

/// The service name of umcp's items in the keychain.
const KEYCHAIN_SERVICE: &str = "umcp";

/// The ways to sign in `--flow` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// With a display, the browser here; without, the device grant where the server offers it,
    /// else a pasted address.
    Auto,
    /// The device grant only.
    Device,
    /// A browser on this machine, redirected to 127.0.0.1.
    Browser,
    /// A browser anywhere; the address it ends on pasted back.
    Paste,
}

impl Flow {
    /// The flow of `--flow` (`auto` when not given).
    pub fn of(flags: &Flags) -> Result<Flow, String> {
        match flags.flow.as_deref().unwrap_or("auto") {
            "auto" => Ok(Flow::Auto),
            "device" => Ok(Flow::Device),
            "browser" => Ok(Flow::Browser),
            "paste" => Ok(Flow::Paste),
            other => Err(format!(
                "--flow {}: auto, device, browser or paste",
                shown::line(other)
            )),
        }
    }

    /// What `Auto` comes to here.
    fn resolved(self) -> Flow {
        match self {
            Flow::Auto if has_display() => Flow::Browser,
            other => other,
        }
    }
}

/// The token store: `--token-store FILE`, else the operating system's keychain where it takes
/// an item, else the owner-only file beside the tool cache. Chosen once per run.
pub fn store(flags: &Flags) -> Arc<dyn TokenStore> {
    opened(flags.token_store.as_deref())
}

fn opened(token_store: Option<&str>) -> Arc<dyn TokenStore> {
    static STORE: OnceLock<Arc<dyn TokenStore>> = OnceLock::new();
    Arc::clone(STORE.get_or_init(|| open_store(token_store)))
}

fn open_store(token_store: Option<&str>) -> Arc<dyn TokenStore> {
    if let Some(path) = token_store {
        return Arc::new(FileStore::new(path));
    }
    let file = ManagerOptions::default_token_file();
    if let Some(lock) = file.as_ref().map(|f| f.with_file_name("keychain.lock")) {
        // Where there is none (a container, a session without a keyring), the file.
        if let Ok(keychain) = KeychainStore::open(KEYCHAIN_SERVICE, lock) {
            return Arc::new(keychain);
        }
    }
    match file {
        Some(path) => Arc::new(FileStore::new(path)),
        None => Arc::new(MemoryStore::new()),
    }
}

/// Whether the token store holds a sign-in for the `--url` server `url` named `name` (after its
/// host), which then gets OAuth without `--oauth`: an entry keyed `name url` (the manager's key),
/// of any profile, with a token.
pub fn signed_in(flags: &Flags, name: &str, url: &str) -> bool {
    let url = url.trim_end_matches('/');
    let entries = store(flags).entries().unwrap_or_default();
    entries.iter().any(|(key, credentials)| {
        let Some(rest) = key.strip_prefix(name).and_then(|k| k.strip_prefix(' ')) else {
            return false;
        };
        let server = rest.split('#').next().unwrap_or_default();
        server.eq_ignore_ascii_case(url) && credentials.token.is_some()
    })
}

/// Whether a browser on this machine can be shown a page: a graphical session on Linux and the
/// BSDs, and on macOS and Windows anything but a login over SSH.
pub fn has_display() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    if cfg!(any(target_os = "macos", windows)) {
        return !set("SSH_CONNECTION") && !set("SSH_TTY");
    }
    set("DISPLAY") || set("WAYLAND_DISPLAY")
}

/// The manager's user step for `flags`: the token store, the handler of the flow, and the
/// device grant where the flow prefers it.
pub fn configure(options: ManagerOptions, flags: &Flags) -> Result<ManagerOptions, String> {
    let flow = Flow::of(flags)?.resolved();
    // The keychain is only opened (and probed) when a server needs OAuth.
    let deferred = Deferred(flags.token_store.clone());
    let options = options.with_token_store(Arc::new(deferred));
    let options = match flow {
        Flow::Browser => {
            return Ok(options.with_loopback_authorization(|server, url| {
                show_url(server, url);
                Ok(())
            }))
        }
        _ => options.with_authorization_handler(handler(flags)?),
    };
    Ok(match flow {
        Flow::Paste => options,
        _ => options.with_device_authorization(show_code),
    })
}

/// The manager's options for `umcp auth`: the token store and the device prompt where the flow
/// prefers the device grant, but no user step, which [`handler`] gives the one sign-in.
pub fn for_sign_in(options: ManagerOptions, flags: &Flags) -> Result<ManagerOptions, String> {
    let flow = Flow::of(flags)?.resolved();
    let options = options.with_token_store(store(flags));
    Ok(match flow {
        Flow::Auto | Flow::Device => options.with_device_authorization(show_code),
        Flow::Browser | Flow::Paste => options,
    })
}

/// The handler of the flow, for one sign-in (`umcp auth login`).
pub fn handler(flags: &Flags) -> Result<Arc<dyn AuthorizationHandler>, String> {
    Ok(match Flow::of(flags)?.resolved() {
        Flow::Browser => Arc::new(
            LoopbackHandler::new(|url: &str| {
                show_url("", url);
                Ok(())
            })
            .timeout(USER_WAIT),
        ),
        Flow::Device => Arc::new(DeviceOnly),
        Flow::Auto | Flow::Paste => Arc::new(
            PasteHandler::new(|prompt: PastePrompt<'_>| {
                // The URL is the authorization server's: escaped, as a browser gets it.
                warn(&shown::block(&prompt.to_string()));
                Ok(())
            })
            .timeout(USER_WAIT),
        ),
    })
}

fn show_url(server: &str, url: &str) {
    if !server.is_empty() {
        warn(&format!("umcp: server `{server}` needs authorization."));
    }
    // The URL comes from the server's metadata: escaped, so it shows what a browser gets.
    warn(&format!(
        "Open this page to authorize: {}",
        shown::line(url)
    ));
}

/// Shows a device code: the page and the code, every word the authorization server's and so
/// escaped.
pub fn show_code(server: &str, device: &DeviceAuthorization) -> io::Result<()> {
    warn(&format!("umcp: server `{server}` needs authorization."));
    warn(&format!(
        "On any device, open {} and enter the code {}",
        shown::line(&device.verification_uri),
        shown::line(&device.user_code)
    ));
    if let Some(complete) = &device.verification_uri_complete {
        warn(&format!(
            "(or open {}, which carries the code)",
            shown::line(complete)
        ));
    }
    warn(&format!(
        "The code is valid for {} minutes; waiting for you to finish there.",
        device.expires_in.as_secs().div_ceil(60)
    ));
    Ok(())
}

/// The handler of `--flow device`: where the server offers no device grant, it says so rather
/// than fall back to another flow.
struct DeviceOnly;

impl DeviceOnly {
    fn refuse() -> umcp::Error {
        AuthError::new(
            AuthStep::Authorization,
            "the server's authorization server offers no device flow; sign in with --flow \
             browser or --flow paste",
        )
        .into()
    }
}

impl AuthorizationHandler for DeviceOnly {
    fn redirect_uri(&self) -> umcp::Result<String> {
        Err(DeviceOnly::refuse())
    }

    fn authorize(&self, _: &str) -> umcp::Result<String> {
        Err(DeviceOnly::refuse())
    }
}

/// The token store, opened on first use: a run whose servers need no OAuth never touches the
/// keychain (which may ask the user for access).
struct Deferred(Option<String>);

impl Deferred {
    fn store(&self) -> Arc<dyn TokenStore> {
        opened(self.0.as_deref())
    }
}

impl TokenStore for Deferred {
    fn load(&self, server: &str, issuer: Option<&str>) -> umcp::Result<Option<StoredCredentials>> {
        self.store().load(server, issuer)
    }

    fn save(&self, server: &str, credentials: &StoredCredentials) -> umcp::Result<()> {
        self.store().save(server, credentials)
    }

    fn remove(&self, server: &str, issuer: Option<&str>) -> umcp::Result<()> {
        self.store().remove(server, issuer)
    }

    fn entries(&self) -> umcp::Result<Vec<(String, StoredCredentials)>> {
        self.store().entries()
    }

    fn location(&self) -> String {
        self.store().location()
    }

    fn lock(&self, wait: std::time::Duration) -> umcp::Result<Option<StoreLock>> {
        self.store().lock(wait)
    }
}
