//! The signal handler itself (Unix only): SIGINT, SIGTERM and SIGHUP become one byte, the
//! signal's number, on a socket that the watcher thread reads.
//!
//! The unsafe code of the binary is here and only here: sigaction(2) to install the handler,
//! and write(2) inside it. The handler does nothing else, since only async-signal-safe calls
//! may run there; everything else happens on the watcher thread.

use std::io;
use std::os::fd::IntoRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicI32, Ordering};

/// The descriptor the handler writes to, -1 until [`install`] ran. Kept open for the life of
/// the process: a signal may arrive at any moment, on any thread.
static WRITE_END: AtomicI32 = AtomicI32::new(-1);

/// Installs the handler for SIGINT, SIGTERM and SIGHUP; each signal arrives as one byte on the
/// socket returned. SIGHUP stays ignored when it was at start-up (`nohup`), SIGINT never: a shell
/// ignores it for a background job, yet the servers must still be stopped when it comes.
pub fn install() -> io::Result<UnixStream> {
    // A socket pair rather than a pipe: std creates it close-on-exec, so no server inherits
    // it, without another system call here.
    let (reader, writer) = UnixStream::pair()?;
    // A handler must never block: with the buffer full (nobody sends that many signals), the
    // byte is dropped rather than the interrupted thread stopped.
    writer.set_nonblocking(true)?;
    let previous = WRITE_END.swap(writer.into_raw_fd(), Ordering::SeqCst);
    debug_assert_eq!(previous, -1, "installed twice");
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        if signal == libc::SIGHUP && ignored(signal)? {
            continue;
        }
        handle(signal)?;
    }
    Ok(reader)
}

/// Writes the signal's number to the socket. write(2) may change `errno`, but only when it
/// fails, and the socket's buffer holds far more signals than anyone sends before the
/// watcher reads them.
extern "C" fn on_signal(signal: libc::c_int) {
    let byte = u8::try_from(signal).unwrap_or(u8::MAX);
    let fd = WRITE_END.load(Ordering::Relaxed);
    // SAFETY: write(2) is async-signal-safe; it reads the one byte on this stack frame, and
    // `fd` stays open for the life of the process (it is never closed once stored).
    #[allow(unsafe_code)]
    unsafe {
        libc::write(fd, std::ptr::from_ref(&byte).cast(), 1);
    }
}

/// Installs [`on_signal`] for `signal`, restarting interrupted system calls so that the other
/// threads' reads and writes carry on until the watcher ends the program.
#[allow(unsafe_code)]
fn handle(signal: libc::c_int) -> io::Result<()> {
    // SAFETY: a zeroed `sigaction` is a valid value of this plain C struct (no handler, empty
    // flags), completed below before use.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    action.sa_flags = libc::SA_RESTART;
    // SAFETY: sigemptyset(3) and sigaction(2) read and write only the structures passed, which
    // live on this stack frame for the whole call; the handler is a plain `extern "C"` function
    // that only makes async-signal-safe calls.
    let rc = unsafe {
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut())
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether `signal` is ignored (inherited from the parent: `nohup` ignores SIGHUP).
#[allow(unsafe_code)]
fn ignored(signal: libc::c_int) -> io::Result<bool> {
    // SAFETY: as in `handle`: a zeroed `sigaction` is valid, and sigaction(2) with a null new
    // action only writes the current one into the structure on this stack frame.
    let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::sigaction(signal, std::ptr::null(), &mut current) };
    if rc == 0 {
        Ok(current.sa_sigaction == libc::SIG_IGN)
    } else {
        Err(io::Error::last_os_error())
    }
}
