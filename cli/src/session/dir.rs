//! Where sessions live: a directory only the user can reach, with one socket per session.
//!
//! The directory is `$UMCP_RUNTIME_DIR` when set, else `umcp` in `$XDG_RUNTIME_DIR` (a
//! per-user directory the system empties at logout), else `umcp-UID` in the temporary
//! directory. It is created with mode 0700; one that exists must be a directory (not a link),
//! belong to the user, and is given mode 0700 if it had more. Nobody else can then connect to
//! a session's socket, nor plant one of their own in its place.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use crate::exit::Exit;

/// The longest session name.
const MAX_NAME: usize = 64;

/// The file name a session's socket ends with.
const SUFFIX: &str = ".sock";

/// Checks a session's name: 1 to 64 letters, digits, `.`, `_` and `-`, not starting with a
/// dot or dash (it names a file).
pub fn check_name(name: &str) -> Result<(), Exit> {
    let fits = !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    match fits {
        true => Ok(()),
        false => Err(crate::exit::usage(format!(
            "`{}`: a session's name is 1 to {MAX_NAME} letters, digits, dots, dashes and \
             underscores, not starting with a dot or dash",
            crate::shown::line(name)
        ))),
    }
}

/// The user's effective id, which owns the directory.
#[allow(unsafe_code)]
fn user_id() -> u32 {
    // SAFETY: geteuid(2) takes no arguments, touches no memory of ours and cannot fail.
    unsafe { libc::geteuid() }
}

/// The sessions' directory, created or checked (see the module's description).
pub fn runtime_dir() -> Result<PathBuf, Exit> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let dir = match (set("UMCP_RUNTIME_DIR"), set("XDG_RUNTIME_DIR")) {
        (Some(dir), _) => PathBuf::from(dir),
        (None, Some(runtime)) if Path::new(&runtime).is_absolute() => {
            PathBuf::from(runtime).join("umcp")
        }
        _ => std::env::temp_dir().join(format!("umcp-{}", user_id())),
    };
    private(&dir).map_err(|why| {
        Exit(
            1,
            format!("the sessions' directory {}: {why}", dir.display()),
        )
    })?;
    Ok(dir)
}

/// Makes sure `dir` is a directory of the user's that only the user can reach.
fn private(dir: &Path) -> Result<(), String> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot be created: {e}"))?,
        Err(e) => return Err(e.to_string()),
        Ok(_) => {}
    }
    let meta = fs::symlink_metadata(dir).map_err(|e| e.to_string())?;
    if !meta.file_type().is_dir() {
        return Err("is not a directory (a link is not taken)".into());
    }
    if meta.uid() != user_id() {
        return Err(format!(
            "belongs to user {}, not to you ({})",
            meta.uid(),
            user_id()
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot be made private: {e}"))?;
    }
    Ok(())
}

/// The socket of session `name` in `dir`.
pub fn socket(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}{SUFFIX}"))
}

/// The names of the sessions that have a socket in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let name = name.strip_suffix(SUFFIX)?.to_owned();
            check_name(&name).is_ok().then_some(name)
        })
        .collect();
    names.sort();
    names
}

/// What is at a session's socket.
pub enum Found {
    /// A process listening: the connection made to it.
    Live(UnixStream),
    /// A socket nobody listens on (its process ended without removing it), removed now.
    Stale,
    /// Nothing.
    Missing,
}

/// Connects to the socket at `path`; a stale one (its process crashed) is removed.
pub fn connect(path: &Path) -> Result<Found, Exit> {
    match UnixStream::connect(path) {
        Ok(stream) => Ok(Found::Live(stream)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Found::Missing),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            let _ = fs::remove_file(path);
            Ok(Found::Stale)
        }
        Err(e) => Err(Exit(1, format!("cannot reach {}: {e}", path.display()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_file_names() {
        for good in ["s", "my-session_2", "a.b", &"x".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            ".hidden",
            "-x",
            "a/b",
            "a b",
            "é",
            "..",
            &"x".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_directory_is_made_private_and_a_foreign_one_refused() {
        let base = std::env::temp_dir().join(format!("umcp-dir-test-{}", std::process::id()));
        let dir = base.join("sessions");
        private(&dir).unwrap();
        let mode = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        private(&dir).unwrap();
        let mode = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "loosened permissions are taken back");
        let link = base.join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(private(&link).unwrap_err().contains("not a directory"));
        // A socket left by a process that ended is found stale and removed.
        let path = socket(&dir, "gone");
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        assert!(matches!(connect(&path), Ok(Found::Stale)));
        assert!(!path.exists());
        assert!(matches!(connect(&path), Ok(Found::Missing)));
        fs::remove_dir_all(&base).unwrap();
    }
}
