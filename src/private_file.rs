//! Files only their owner may read, written so that no other user of the machine can read,
//! hijack or half-read them: what a program keeps about its user (tokens, trusted files,
//! history, recordings) and what it edits for them.
//!
//! Directories are created 0700 ([`create_dir`]); a file is written whole under an
//! unpredictable temporary name, created exclusively with mode 0600, then renamed into place
//! ([`replace`], or [`replace_keeping_permissions`] for a file that is not private, such as a
//! configuration file); a file written as it goes is opened by [`create_or_truncate`]; and
//! [`read`] refuses a file others may read or write.
//!
//! What this guards against is another user of a shared directory: a symbolic link planted
//! at the temporary path (an exclusive create never follows one, and the name cannot be
//! guessed beforehand), a reader of a file half written or readable by all, and a file
//! planted for the program to trust. The permissions are unix ones; elsewhere the files get
//! the directory's defaults.
//!
//! ```
//! use umcp::private_file;
//!
//! let dir = std::env::temp_dir().join(format!("umcp-private-doc-{}", std::process::id()));
//! private_file::create_dir(&dir)?;
//! let state = dir.join("state.json");
//! private_file::replace(&state, b"{\"trusted\": []}")?;
//! assert_eq!(private_file::read(&state)?, "{\"trusted\": []}");
//! # #[cfg(unix)]
//! # {
//! use std::os::unix::fs::PermissionsExt;
//! assert_eq!(std::fs::metadata(&state)?.permissions().mode() & 0o777, 0o600);
//! // A configuration file keeps the permissions it had.
//! let config = dir.join("mcp.json");
//! std::fs::write(&config, "{}")?;
//! std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o640))?;
//! private_file::replace_keeping_permissions(&config, b"{\"servers\": {}}")?;
//! assert_eq!(std::fs::metadata(&config)?.permissions().mode() & 0o777, 0o640);
//! # }
//! // A file written as it goes: owner-only, never through a planted link.
//! use std::io::Write;
//! let mut log = private_file::create_or_truncate(&dir.join("session.jsonl"))?;
//! writeln!(log, "{{\"line\": 1}}")?;
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::collections::hash_map::RandomState;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Creates a directory (and its missing parents) readable by its owner only. An existing
/// directory is left as it is: it may be shared on purpose, and is not the program's to
/// change.
///
/// See the example on the [module](crate::private_file).
pub fn create_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Replaces the file at `path` with `data` in one step: a reader sees the old file or the new
/// one, never a part. The temporary file lives next to `path`, named `.{name}.{random}.tmp`;
/// it is removed again when anything fails. The new file is the owner's only (0600); a
/// symbolic link at `path` is replaced, never followed.
///
/// See the example on the [module](crate::private_file).
pub fn replace(path: &Path, data: &[u8]) -> io::Result<()> {
    replace_with(path, data, None)
}

/// Writes `data` beside `path`, gives it `permissions` (when some), and renames it over
/// `path`.
fn replace_with(path: &Path, data: &[u8], permissions: Option<fs::Permissions>) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.{}.tmp", unpredictable()));
    let written = write_new(&temp, data)
        .and_then(|()| match permissions {
            Some(permissions) => fs::set_permissions(&temp, permissions),
            None => Ok(()),
        })
        .and_then(|()| fs::rename(&temp, path));
    if written.is_err() {
        // An exclusive create that failed made nothing: what is there is someone else's.
        if !matches!(&written, Err(e) if e.kind() == io::ErrorKind::AlreadyExists) {
            let _ = fs::remove_file(&temp);
        }
    }
    written
}

/// [`replace`] for a file that is not private (a configuration file, a project's file): the
/// new file gets the permissions the one it replaces had, or the owner's only when there was
/// none. The temporary file is the owner's only until it is complete.
///
/// See the example on the [module](crate::private_file).
pub fn replace_keeping_permissions(path: &Path, data: &[u8]) -> io::Result<()> {
    let permissions = match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_file() => Some(metadata.permissions()),
        _ => None,
    };
    replace_with(path, data, permissions)
}

/// Creates `path` with owner-only permissions, failing if anything is there (a symbolic
/// link included, which is not followed), writes `data` and flushes it to disk.
///
/// See the example on the [module](crate::private_file).
pub fn write_new(path: &Path, data: &[u8]) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file: File = options.open(path)?;
    file.write_all(data)?;
    file.sync_all()
}

/// Opens `path` to be written from its start, a line at a time, readable by its owner only:
/// created exclusively with mode 0600 when nothing is there; an existing file is taken only
/// when it is a regular file of the user's own with no other name (no symbolic link is
/// followed, and no hard link planted in a shared directory leads the writing elsewhere), then
/// made owner-only and emptied. Anything else is refused (`PermissionDenied`, or the
/// system's error), and left as it was.
///
/// See the example on the [module](crate::private_file).
pub fn create_or_truncate(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => take_existing(path),
        other => other,
    }
}

/// The existing file at `path` for [`create_or_truncate`], emptied, or refused.
fn take_existing(path: &Path) -> io::Result<File> {
    let refuse = |why: &str| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{}: {why}; not written", path.display()),
        )
    };
    let mut options = OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO without a reader fails at once rather than block the open.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| match e.raw_os_error() {
        #[cfg(unix)]
        Some(libc::ELOOP) => refuse("it is a symbolic link"),
        _ => e,
    })?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(refuse("it is not a regular file"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if metadata.nlink() > 1 {
            return Err(refuse("it has another name (a hard link)"));
        }
        // Only the owner may change the mode: this fails for another user's file.
        file.set_permissions(fs::Permissions::from_mode(0o600))
            .map_err(|_| refuse("it belongs to another user"))?;
    }
    file.set_len(0)?;
    Ok(file)
}

/// The text of the file at `path`, refused (`PermissionDenied`) when it is not a regular
/// file only its owner may read and write: such a file was not written by [`replace`], and
/// may have been planted by another user. A symbolic link at `path` is not followed.
///
/// See the example on the [module](crate::private_file).
pub fn read(path: &Path) -> io::Result<String> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    let mut file = options.open(path)?;
    let metadata = file.metadata()?;
    let refuse = |why: &str| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{}: {why}", path.display()),
        ))
    };
    if !metadata.is_file() {
        return refuse("not a regular file");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if metadata.permissions().mode() & 0o077 != 0 {
            return refuse("others may read or write it");
        }
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

/// 128 bits no other process can predict, as 32 hex digits, from std's per-process random
/// hash keys (SipHash keyed from the operating system's random source): enough for a
/// temporary name, without a dependency for it.
fn unpredictable() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    (0..2u8)
        .map(|half| {
            let mut hasher = RandomState::new().build_hasher();
            hasher.write_u8(half);
            hasher.write_u64(count);
            hasher.write_u32(std::process::id());
            hasher.write_u128(nanos);
            format!("{:016x}", hasher.finish())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "umcp-private-{name}-{}-{}",
            std::process::id(),
            unpredictable()
        ));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn temporary_names_differ_every_time() {
        let names: std::collections::HashSet<String> = (0..64).map(|_| unpredictable()).collect();
        assert_eq!(names.len(), 64);
        assert!(names.iter().all(|n| n.len() == 32));
    }

    #[cfg(unix)]
    #[test]
    fn directories_and_files_are_owner_only_and_replaced_whole() {
        use std::os::unix::fs::PermissionsExt;
        let root = scratch("modes");
        let dir = root.join("a/b");
        create_dir(&dir).unwrap();
        for created in [&root.join("a"), &dir] {
            let mode = fs::metadata(created).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", created.display());
        }
        let path = dir.join("f.json");
        replace(&path, b"one").unwrap();
        replace(&path, b"two").unwrap();
        assert_eq!(read(&path).unwrap(), "two");
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left"
        );
        // A file others may read is not trusted.
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let refused = read(&path).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::PermissionDenied);
        let _ = fs::remove_dir_all(&root);
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_are_never_followed() {
        let root = scratch("links");
        create_dir(&root).unwrap();
        let victim = root.join("victim");
        fs::write(&victim, "precious").unwrap();
        // At an exclusive create's path: refused, and the target is left alone.
        let planted = root.join("planted.tmp");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let error = write_new(&planted, b"overwritten").unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        // At the path read: not followed.
        let private = root.join("private");
        write_new(&private, b"mine").unwrap();
        let link = root.join("link.json");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        assert!(read(&link).is_err());
        // At the final path of a replacement: the link is replaced, its target untouched.
        replace(&link, b"new").unwrap();
        assert_eq!(fs::read_to_string(&private).unwrap(), "mine");
        assert_eq!(read(&link).unwrap(), "new");
        let _ = fs::remove_dir_all(&root);
    }

    #[cfg(unix)]
    #[test]
    fn a_file_written_as_it_goes_is_owner_only_and_never_reached_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let root = scratch("stream");
        create_dir(&root).unwrap();
        let path = root.join("rec.jsonl");
        let mut file = create_or_truncate(&path).unwrap();
        file.write_all(b"one\n").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        // One's own file again: emptied, and made owner-only if it was not.
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        drop(create_or_truncate(&path).unwrap());
        assert_eq!((fs::read(&path).unwrap().len(), mode(&path)), (0, 0o600));
        // A symbolic or hard link to another file: refused, the file left as it was.
        let victim = root.join("notes.txt");
        fs::write(&victim, "precious").unwrap();
        let symlink = root.join("sym.jsonl");
        std::os::unix::fs::symlink(&victim, &symlink).unwrap();
        let hardlink = root.join("hard.jsonl");
        fs::hard_link(&victim, &hardlink).unwrap();
        for link in [&symlink, &hardlink] {
            let error = create_or_truncate(link).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::PermissionDenied, "{error}");
        }
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        // A directory or a FIFO (whose open would wait for a reader) is no file to write.
        assert!(create_or_truncate(&root).is_err());
        let fifo = root.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|status| status.success()) {
            assert!(create_or_truncate(&fifo).is_err());
        }
        let _ = fs::remove_dir_all(&root);
    }
}
