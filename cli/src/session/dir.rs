//! Where sessions live: a directory only the user can reach, with one socket per session.
//!
//! The directory is `$UMCP_RUNTIME_DIR` when set, else `umcp` in `$XDG_RUNTIME_DIR` (a
//! per-user directory the system empties at logout), else `umcp/sessions` in the user's cache
//! directory (`$XDG_CACHE_HOME`, `~/.cache`), which no other user can create first, and only
//! without a home `umcp-UID` in the temporary directory. It is created with mode 0700; one
//! that exists must be a directory (not a link), belong to the user, and is given mode 0700 if
//! it had more. Nobody else can then connect to a session's socket, nor plant one of their
//! own in its place. A connect to a socket gives up after a few seconds: a stopped session
//! holds no caller for good.

use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
        // Under the home directory, which no other user can take first (a fixed name in the
        // shared temporary directory could be made by anyone, and the sessions refused).
        _ => match cache_dir() {
            Some(cache) => cache.join("umcp/sessions"),
            None => std::env::temp_dir().join(format!("umcp-{}", user_id())),
        },
    };
    private(&dir).map_err(|why| {
        Exit(
            1,
            format!("the sessions' directory {}: {why}", dir.display()),
        )
    })?;
    Ok(dir)
}

/// The user's cache directory: `$XDG_CACHE_HOME`, else `~/.cache`, each only when absolute.
fn cache_dir() -> Option<PathBuf> {
    use crate::user_dirs::user_path;
    user_path("XDG_CACHE_HOME").or_else(|| Some(user_path("HOME")?.join(".cache")))
}

/// Makes sure `dir` is a directory of the user's that only the user can reach.
fn private(dir: &Path) -> Result<(), String> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            umcp::private_file::create_dir(dir).map_err(|e| format!("cannot be created: {e}"))?
        }
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

/// How long a connect to a session's socket may wait: a session whose process is stopped
/// (`kill -STOP`) with its queue of callers full would otherwise hold the caller for good.
const CONNECT_WAIT: Duration = Duration::from_secs(5);

/// Connects to the socket at `path`, within [`CONNECT_WAIT`]; a stale one (its process
/// crashed) is removed.
pub fn connect(path: &Path) -> Result<Found, Exit> {
    match connect_within(path, CONNECT_WAIT) {
        Ok(stream) => Ok(Found::Live(stream)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Found::Missing),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            let _ = fs::remove_file(path);
            Ok(Found::Stale)
        }
        Err(e) => Err(Exit(1, format!("cannot reach {}: {e}", path.display()))),
    }
}

/// Connects to the Unix socket at `path`, giving up after `wait`: std's connect has no
/// deadline, and one to a listener whose queue is full waits until it has room. The socket
/// is made non-blocking for the connect (which then fails at once with `EAGAIN` while the
/// queue is full, so it is tried again until `wait` has passed), and blocking again after.
#[allow(unsafe_code)]
fn connect_within(path: &Path, wait: Duration) -> io::Result<UnixStream> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;

    // SAFETY: socket(2) takes three integers and touches no memory of ours; a descriptor it
    // returns is owned by nobody else, so `OwnedFd` may take it.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above, `fd` is a fresh descriptor of this process and of nothing else.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    set_flags(fd, libc::F_GETFD, libc::F_SETFD, libc::FD_CLOEXEC, true)?;
    set_flags(fd, libc::F_GETFL, libc::F_SETFL, libc::O_NONBLOCK, true)?;
    // SAFETY: `sockaddr_un` is plain old data, for which all zeros is a valid value.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() >= address.sun_path.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the socket's path is too long",
        ));
    }
    for (slot, byte) in address.sun_path.iter_mut().zip(bytes) {
        *slot = *byte as libc::c_char;
    }
    let length = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
    let deadline = Instant::now() + wait;
    loop {
        // SAFETY: connect(2) reads `length` bytes of `address`, a live `sockaddr_un` of
        // exactly that size, for the duration of the call, and writes nothing of ours.
        let rc = unsafe {
            libc::connect(
                socket.as_raw_fd(),
                (&address as *const libc::sockaddr_un).cast(),
                length,
            )
        };
        if rc == 0 {
            break;
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN | libc::EINPROGRESS) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Some(libc::EAGAIN | libc::EINPROGRESS) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("the session took no connection within {} s", wait.as_secs()),
                ))
            }
            // A connect already under way on this socket: it went through.
            Some(libc::EISCONN) => break,
            _ => return Err(error),
        }
    }
    set_flags(fd, libc::F_GETFL, libc::F_SETFL, libc::O_NONBLOCK, false)?;
    Ok(UnixStream::from(socket))
}

/// Sets (`on`) or clears `flag` among the flags `fcntl(fd, get)` reads and `set` writes.
#[allow(unsafe_code)]
fn set_flags(
    fd: libc::c_int,
    get: libc::c_int,
    set: libc::c_int,
    flag: libc::c_int,
    on: bool,
) -> io::Result<()> {
    // SAFETY: fcntl(2) with F_GETFD/F_GETFL reads the flags of `fd`, which is open for the
    // whole call, and touches no memory of ours.
    let flags = unsafe { libc::fcntl(fd, get) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let flags = if on { flags | flag } else { flags & !flag };
    // SAFETY: as above, with F_SETFD/F_SETFL and an integer argument.
    if unsafe { libc::fcntl(fd, set, flags) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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

#[cfg(test)]
mod connect_tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn a_connect_to_a_listener_that_takes_no_caller_gives_up_at_its_deadline() {
        let dir = std::env::temp_dir().join(format!("umcp-connect-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("full.sock");
        let _listener = UnixListener::bind(&path).unwrap();
        let mut held = Vec::new();
        let outcome = loop {
            match connect_within(&path, Duration::from_millis(200)) {
                Ok(stream) => held.push(stream),
                Err(e) => break e,
            }
            assert!(held.len() < 100_000, "the queue never filled");
        };
        assert_eq!(outcome.kind(), io::ErrorKind::TimedOut, "{outcome}");
        assert!(!held.is_empty());
        let missing = connect_within(&dir.join("none.sock"), Duration::from_millis(200));
        assert_eq!(
            missing.err().map(|e| e.kind()),
            Some(io::ErrorKind::NotFound)
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
