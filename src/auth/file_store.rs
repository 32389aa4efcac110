//! A [`TokenStore`] in one JSON file, written atomically and readable by its owner only.

use std::fmt;
use std::fs;
use std::fs::TryLockError;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::store::{self, StoreLock, StoredCredentials, TokenStore};
use crate::error::{Error, Result};
use crate::private_file;

/// Keeps credentials in a JSON file, so they survive restarts.
///
/// Every save writes a temporary file next to it (mode 0600 on unix) and renames it over the
/// old one, so a crash never leaves a half-written store and other users never see it. The
/// directory is created (mode 0700 on unix) when missing. Processes that share the file
/// should not save at the same moment: the last rename wins.
///
/// See the example on
/// [`ManagerOptions::with_token_store`](crate::ManagerOptions::with_token_store).
pub struct FileStore {
    path: PathBuf,
    /// Serialises read-modify-write cycles within the process.
    lock: Mutex<()>,
}

/// The file's contents.
#[derive(Default, Serialize, Deserialize)]
struct Contents {
    #[serde(default)]
    entries: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    server: String,
    credentials: StoredCredentials,
}

impl FileStore {
    /// A store in the file at `path` (created on the first save).
    ///
    /// ```
    /// use umcp::auth::{FileStore, StoredCredentials, TokenStore};
    ///
    /// # let dir = std::env::temp_dir().join(format!("umcp-doc-store-{}", std::process::id()));
    /// let store = FileStore::new(dir.join("tokens.json"));
    /// let server = "https://mcp.example.com/mcp";
    /// store.save(server, &StoredCredentials::new("https://auth.example.com"))?;
    /// assert!(store.path().exists());
    /// let saved = store.load(server, None)?;
    /// assert_eq!(saved.map(|c| c.issuer).as_deref(), Some("https://auth.example.com"));
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), umcp::Error>(())
    /// ```
    pub fn new(path: impl Into<PathBuf>) -> FileStore {
        FileStore {
            path: path.into(),
            lock: Mutex::new(()),
        }
    }

    /// The file's path.
    ///
    /// See the example on [`FileStore::new`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<Vec<(String, StoredCredentials)>> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io_error("cannot read", e)),
        };
        let contents: Contents = serde_json::from_str(&text).map_err(|e| {
            self.io_error(
                "cannot parse",
                io::Error::new(io::ErrorKind::InvalidData, e),
            )
        })?;
        Ok(contents
            .entries
            .into_iter()
            .map(|e| (e.server, e.credentials))
            .collect())
    }

    fn write(&self, entries: Vec<(String, StoredCredentials)>) -> Result<()> {
        let contents = Contents {
            entries: entries
                .into_iter()
                .map(|(server, credentials)| Entry {
                    server,
                    credentials,
                })
                .collect(),
        };
        let text = serde_json::to_string_pretty(&contents)
            .map_err(|e| self.io_error("cannot encode", io::Error::other(e)))?;
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        private_file::create_dir(&dir)
            .map_err(|e| self.io_error("cannot create the directory of", e))?;
        private_file::replace(&self.path, text.as_bytes())
            .map_err(|e| self.io_error("cannot write", e))
    }

    fn io_error(&self, what: &str, e: io::Error) -> Error {
        Error::io(io::Error::new(
            e.kind(),
            format!("token store: {what} {}: {e}", self.path.display()),
        ))
    }

    /// A read-modify-write of the file, one process at a time (under `<path>.write-lock`, not
    /// the refresh's lock, which a refresh holds while it saves), so that no process writes
    /// back entries it read before another's save, such as a rotated refresh token.
    fn update(&self, change: impl FnOnce(&mut Vec<(String, StoredCredentials)>)) -> Result<()> {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let _write = lock_file(&self.beside(".write-lock"), WRITE_WAIT)?;
        let mut entries = self.read()?;
        change(&mut entries);
        self.write(entries)
    }

    /// The path of the file named as the store's with `suffix` added.
    fn beside(&self, suffix: &str) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    }
}

/// How long a save waits for another process's: a read and a write of a small file.
pub(crate) const WRITE_WAIT: Duration = Duration::from_secs(10);

impl fmt::Debug for FileStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileStore")
            .field("path", &self.path)
            .finish()
    }
}

impl TokenStore for FileStore {
    fn load(&self, server: &str, issuer: Option<&str>) -> Result<Option<StoredCredentials>> {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let entries = self.read()?;
        Ok(store::find(&entries, server, issuer).cloned())
    }

    fn save(&self, server: &str, credentials: &StoredCredentials) -> Result<()> {
        self.update(|entries| store::upsert(entries, server, credentials))
    }

    fn remove(&self, server: &str, issuer: Option<&str>) -> Result<()> {
        self.update(|entries| store::retain_others(entries, server, issuer))
    }

    fn entries(&self) -> Result<Vec<(String, StoredCredentials)>> {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.read()
    }

    fn location(&self) -> String {
        format!(
            "the file {} (readable by its owner only)",
            self.path.display()
        )
    }

    fn lock(&self, wait: Duration) -> Result<Option<StoreLock>> {
        lock_file(&self.beside(".lock"), wait).map(Some)
    }
}

/// Takes the lock on the file at `path` (created owner-only, in an owner-only directory when
/// that is missing), waiting at most `wait` for another process to release it.
pub(crate) fn lock_file(path: &Path, wait: Duration) -> Result<StoreLock> {
    let failed = |what: &str, e: io::Error| {
        Error::io(io::Error::new(
            e.kind(),
            format!("token store: {what} {}: {e}", path.display()),
        ))
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    private_file::create_dir(&dir).map_err(|e| failed("cannot create the directory of", e))?;
    let file = open_lock(path).map_err(|e| failed("cannot open", e))?;
    let deadline = crate::sync::deadline_in(wait);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(StoreLock::new(file)),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(failed("cannot lock", e)),
        }
        if Instant::now() >= deadline {
            let busy = io::Error::new(
                io::ErrorKind::TimedOut,
                format!("another process held it for {wait:?}"),
            );
            return Err(failed("cannot lock", busy));
        }
        std::thread::sleep(LOCK_POLL);
    }
}

/// How often a lock held by another process is tried again.
const LOCK_POLL: Duration = Duration::from_millis(20);

/// Opens (creating, owner-only) the lock file at `path`; its content is never read.
fn open_lock(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}
