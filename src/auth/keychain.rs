//! A [`TokenStore`] in the operating system's keychain: no token ever written to a file.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use keyring::Entry;
use serde::{Deserialize, Serialize};

use super::file_store::{lock_file, WRITE_WAIT};
use super::store::{self, StoreLock, StoredCredentials, TokenStore};
use crate::error::{Error, Result};

/// The keychain item listing the keys of the others (no secrets in it); never a server's key,
/// which is a URL, or a name and a URL with a space between.
const INDEX: &str = "umcp:index";
/// The item written and removed by [`KeychainStore::open`] to see that the keychain works.
const PROBE: &str = "umcp:probe";

/// Keeps credentials in the operating system's keychain (feature `keychain`): the macOS
/// Keychain, the Windows Credential Manager, or the Linux kernel keyring (keyutils: the user's
/// persistent keyring, kept a few days after the last use and across logins, but not across
/// reboots; the kernel limits a user to some 20 kB of keys by default). With the
/// `keychain-secret-service` feature, a Linux desktop's Secret Service (GNOME Keyring, KWallet)
/// comes first, where one answers on the session bus.
///
/// Each server's credentials are one item of the service `service`, the server's key as its
/// account; one more item lists those keys, so the store can list its sign-ins. The items are
/// JSON, as [`FileStore`] writes them, so a DPoP key is kept with its tokens. Processes sharing
/// the store take turns to refresh a token under a lock on `lock_file`, so they refresh it once,
/// and to save, under `lock_file` with `.write` added (only their locks are used; they hold
/// nothing).
///
/// [`FileStore`]: super::FileStore
///
/// [`open`](KeychainStore::open) tries the keychain first and fails where there is none (a
/// container without a keyring, a session without a keychain): fall back to a [`FileStore`]
/// then, and tell the user which is in use ([`TokenStore::location`]).
///
/// ```no_run
/// use std::sync::Arc;
/// use umcp::auth::{FileStore, KeychainStore, TokenStore};
///
/// let dir = std::env::temp_dir().join("my-agent");
/// let store: Arc<dyn TokenStore> = match KeychainStore::open("my-agent", dir.join("tokens.lock")) {
///     Ok(keychain) => {
///         log::info!("tokens go to the {}", keychain.backend());
///         Arc::new(keychain)
///     }
///     Err(e) => {
///         log::warn!("no keychain ({e}); keeping tokens in a file readable by you only");
///         Arc::new(FileStore::new(dir.join("tokens.json")))
///     }
/// };
/// log::info!("tokens live in {}", store.location());
/// ```
pub struct KeychainStore {
    backend: Backend,
    service: String,
    lock_file: PathBuf,
    /// Serialises the read-modify-write cycles of this process.
    turn: Mutex<()>,
}

/// Which keychain holds the items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    /// The platform's own: the macOS Keychain, the Windows Credential Manager, or the Linux
    /// kernel keyring.
    Native,
    /// The desktop's Secret Service over D-Bus (GNOME Keyring, KWallet), on Linux.
    #[cfg(all(target_os = "linux", feature = "keychain-secret-service"))]
    SecretService,
}

impl Backend {
    /// The keychains to try, the first that works chosen.
    const TRIED: &'static [Backend] = &[
        #[cfg(all(target_os = "linux", feature = "keychain-secret-service"))]
        Backend::SecretService,
        Backend::Native,
    ];

    fn name(self) -> &'static str {
        match self {
            #[cfg(all(target_os = "linux", feature = "keychain-secret-service"))]
            Backend::SecretService => "Secret Service (D-Bus)",
            Backend::Native if cfg!(target_os = "macos") => "macOS Keychain",
            Backend::Native if cfg!(windows) => "Windows Credential Manager",
            Backend::Native if cfg!(target_os = "linux") => "Linux kernel keyring (keyutils)",
            Backend::Native => "keychain (none on this platform)",
        }
    }

    /// The item `account` of `service` in this keychain.
    fn entry(self, service: &str, account: &str) -> keyring::Result<Entry> {
        match self {
            #[cfg(all(target_os = "linux", feature = "keychain-secret-service"))]
            Backend::SecretService => {
                let credential =
                    keyring::secret_service::SsCredential::new_with_target(None, service, account)?;
                Ok(Entry::new_with_credential(Box::new(credential)))
            }
            // Named, as the Secret Service would be the default with its feature on.
            #[cfg(target_os = "linux")]
            Backend::Native => {
                let credential =
                    keyring::keyutils::KeyutilsCredential::new_with_target(None, service, account)?;
                Ok(Entry::new_with_credential(Box::new(credential)))
            }
            #[cfg(not(target_os = "linux"))]
            Backend::Native => Entry::new(service, account),
        }
    }
}

/// One item: the credentials of one server key, one per authorization server, the last saved
/// last.
#[derive(Default, Serialize, Deserialize)]
struct Item {
    #[serde(default)]
    credentials: Vec<StoredCredentials>,
}

impl KeychainStore {
    /// The keychain of this platform under the service name `service`, with `lock_file` for the
    /// lock processes take turns by; fails when the keychain cannot store and read back an item.
    /// On Linux with the `keychain-secret-service` feature, the desktop's Secret Service is tried
    /// first, then the kernel keyring.
    ///
    /// See the example on [`KeychainStore`].
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming the keychain's failure: none on this platform, none reachable, or
    /// one that refused the probe.
    pub fn open(
        service: impl Into<String>,
        lock_file: impl Into<PathBuf>,
    ) -> Result<KeychainStore> {
        let mut store = KeychainStore {
            backend: Backend::Native,
            service: service.into(),
            lock_file: lock_file.into(),
            turn: Mutex::new(()),
        };
        let mut failures = Vec::new();
        for backend in Backend::TRIED {
            store.backend = *backend;
            match store.probe() {
                Ok(()) => return Ok(store),
                Err(e) => failures.push(e.to_string()),
            }
        }
        Err(Error::io(io::Error::other(failures.join("; "))))
    }

    /// Stores, reads back and removes an item, to see that the keychain works.
    fn probe(&self) -> Result<()> {
        let probe = self.entry(PROBE)?;
        probe
            .set_password("probe")
            .and_then(|()| probe.get_password())
            .and_then(|_| probe.delete_credential())
            .map_err(|e| keychain_error(self, "cannot store an item in", e))
    }

    /// The name of the keychain in use: `macOS Keychain`, `Windows Credential Manager`, `Linux
    /// kernel keyring (keyutils)` or `Secret Service (D-Bus)`.
    ///
    /// See the example on [`KeychainStore`].
    pub fn backend(&self) -> &'static str {
        self.backend.name()
    }

    fn entry(&self, account: &str) -> Result<Entry> {
        self.backend
            .entry(&self.service, account)
            .map_err(|e| keychain_error(self, "cannot address", e))
    }

    /// The text of the item `account`, `None` when there is none.
    fn read(&self, account: &str) -> Result<Option<String>> {
        match self.entry(account)?.get_password() {
            Ok(text) => Ok(Some(text)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keychain_error(self, "cannot read", e)),
        }
    }

    /// Writes the item `account`, or removes it when `text` is `None`.
    fn write(&self, account: &str, text: Option<&str>) -> Result<()> {
        let entry = self.entry(account)?;
        let done = match text {
            Some(text) => entry.set_password(text),
            None => match entry.delete_credential() {
                Err(keyring::Error::NoEntry) => Ok(()),
                other => other,
            },
        };
        done.map_err(|e| keychain_error(self, "cannot write", e))
    }

    fn item(&self, key: &str) -> Result<Item> {
        let Some(text) = self.read(key)? else {
            return Ok(Item::default());
        };
        serde_json::from_str(&text).map_err(|e| {
            let e = io::Error::new(io::ErrorKind::InvalidData, e);
            Error::io(io::Error::new(
                e.kind(),
                format!("token store: cannot parse the keychain item of {key}: {e}"),
            ))
        })
    }

    fn index(&self) -> Result<Vec<String>> {
        match self.read(INDEX)? {
            Some(text) => Ok(serde_json::from_str(&text).unwrap_or_default()),
            None => Ok(Vec::new()),
        }
    }

    /// Applies `change` to the entries of `key`, and keeps the index in step.
    fn update(
        &self,
        key: &str,
        change: impl FnOnce(&mut Vec<(String, StoredCredentials)>),
    ) -> Result<()> {
        let _turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        // One process at a time reads and writes back an item and the index.
        let mut write_lock = self.lock_file.clone().into_os_string();
        write_lock.push(".write");
        let _write = lock_file(std::path::Path::new(&write_lock), WRITE_WAIT)?;
        let mut entries: Vec<(String, StoredCredentials)> = self
            .item(key)?
            .credentials
            .into_iter()
            .map(|c| (key.to_owned(), c))
            .collect();
        change(&mut entries);
        let credentials: Vec<StoredCredentials> = entries.into_iter().map(|(_, c)| c).collect();
        let mut index = self.index()?;
        let listed = index.iter().any(|k| k == key);
        if credentials.is_empty() {
            self.write(key, None)?;
            if listed {
                index.retain(|k| k != key);
                self.write(INDEX, Some(&json(&index)?))?;
            }
            return Ok(());
        }
        self.write(key, Some(&json(&Item { credentials })?))?;
        if !listed {
            index.push(key.to_owned());
            self.write(INDEX, Some(&json(&index)?))?;
        }
        Ok(())
    }
}

fn json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::io(io::Error::other(e)))
}

fn keychain_error(store: &KeychainStore, what: &str, e: keyring::Error) -> Error {
    Error::io(io::Error::other(format!(
        "token store: {what} the {} (service `{}`): {e}",
        store.backend(),
        store.service
    )))
}

impl fmt::Debug for KeychainStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeychainStore")
            .field("backend", &self.backend())
            .field("service", &self.service)
            .finish_non_exhaustive()
    }
}

impl TokenStore for KeychainStore {
    fn load(&self, server: &str, issuer: Option<&str>) -> Result<Option<StoredCredentials>> {
        let _turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        let entries: Vec<(String, StoredCredentials)> = self
            .item(server)?
            .credentials
            .into_iter()
            .map(|c| (server.to_owned(), c))
            .collect();
        Ok(store::find(&entries, server, issuer).cloned())
    }

    fn save(&self, server: &str, credentials: &StoredCredentials) -> Result<()> {
        self.update(server, |entries| {
            store::upsert(entries, server, credentials)
        })
    }

    fn remove(&self, server: &str, issuer: Option<&str>) -> Result<()> {
        self.update(server, |entries| {
            store::retain_others(entries, server, issuer)
        })
    }

    fn entries(&self) -> Result<Vec<(String, StoredCredentials)>> {
        let _turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        let mut entries = Vec::new();
        for key in self.index()? {
            for credentials in self.item(&key)?.credentials {
                entries.push((key.clone(), credentials));
            }
        }
        Ok(entries)
    }

    fn location(&self) -> String {
        format!("the {} (service `{}`)", self.backend(), self.service)
    }

    fn lock(&self, wait: Duration) -> Result<Option<StoreLock>> {
        lock_file(&self.lock_file, wait).map(Some)
    }
}
