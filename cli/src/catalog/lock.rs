//! The lock an edit of a configuration file holds from reading the file to replacing it, so
//! that of several `umcp servers add` at once none loses another's entry.
//!
//! It is an advisory lock (the system's `flock`, or its Windows equivalent) on a file of its
//! own: in umcp's state directory, named after the configuration file's canonical path, so a
//! checkout gets no extra file; beside the configuration file when there is no state
//! directory. The system lets go of it when the process ends, however it ends.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// How long an edit waits for another to finish before it gives up.
const WAIT: Duration = Duration::from_secs(10);

/// How often a waiting edit tries again.
const RETRY: Duration = Duration::from_millis(10);

/// The lock of one configuration file, held until dropped.
pub struct EditLock {
    _file: File,
}

impl EditLock {
    /// Takes the lock of the file at `path` (its canonical path, when it exists), waiting for
    /// another edit to finish; an error after waiting [`WAIT`], or when the lock's own file
    /// cannot be opened.
    pub fn take(path: &Path) -> io::Result<EditLock> {
        let file = open(&lock_path(path))?;
        let until = Instant::now() + WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(EditLock { _file: file }),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < until => {
                    std::thread::sleep(RETRY);
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("another umcp has been editing it for {} s", WAIT.as_secs()),
                    ))
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
    }
}

/// Where the lock of the configuration file at `path` is.
fn lock_path(path: &Path) -> PathBuf {
    let target = std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_owned());
    let in_state = crate::user_dirs::state_dir().and_then(|state| {
        let dir = state.join("locks");
        umcp::private_file::create_dir(&dir).ok()?;
        let digest = Sha256::digest(target.as_os_str().as_encoded_bytes());
        Some(dir.join(format!("{:x}.lock", digest)))
    });
    in_state.unwrap_or_else(|| {
        let name = target.file_name().unwrap_or_default().to_string_lossy();
        target.with_file_name(format!(".{name}.umcp-lock"))
    })
}

/// Opens (creating, owner-only) the lock's file, never through a link.
fn open(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_edit_waits_for_the_first() {
        let dir = std::env::temp_dir().join(format!("umcp-edit-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("mcp.json");
        std::fs::write(&config, "{}").unwrap();
        let first = EditLock::take(&config).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiting = config.clone();
        let second = std::thread::spawn(move || {
            let lock = EditLock::take(&waiting);
            tx.send(()).unwrap();
            lock.map(drop)
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(200)).is_err(),
            "it waits"
        );
        drop(first);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("then it takes the lock");
        second.join().unwrap().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
