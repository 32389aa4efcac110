//! The two system calls the stdin writer needs beyond std on Unix: switching the pipe to
//! non-blocking writes, and waiting until it can take more.
//!
//! The unsafe code here is two calls, fcntl(2) and poll(2), on a descriptor owned by the
//! `ChildStdin` borrowed for the call.

use std::io;
use std::os::unix::io::AsRawFd;
use std::process::ChildStdin;
use std::time::Duration;

/// Makes writes to `stdin` return `WouldBlock` instead of waiting when the pipe is full.
#[allow(unsafe_code)]
pub(super) fn set_nonblocking(stdin: &ChildStdin) -> io::Result<()> {
    let fd = stdin.as_raw_fd();
    // SAFETY: fcntl(2) with F_GETFL/F_SETFL reads and sets the flags of a descriptor that is
    // open for the whole call (borrowed from `stdin`) and touches no memory of this process.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Waits up to `timeout` until `stdin` can take more (or is broken, which the next write
/// reports).
#[allow(unsafe_code)]
pub(super) fn wait_writable(stdin: &ChildStdin, timeout: Duration) -> io::Result<()> {
    let mut fds = libc::pollfd {
        fd: stdin.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: poll(2) reads and writes exactly the one `pollfd` passed, which lives on this
    // stack frame for the whole call; the descriptor is borrowed from `stdin`.
    let rc = unsafe { libc::poll(&mut fds, 1, millis) };
    if rc < 0 {
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    Ok(())
}
