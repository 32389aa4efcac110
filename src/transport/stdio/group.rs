//! Signals to a server's process group and whether the group still runs (Unix only).
//!
//! The unsafe code here is one call to kill(2), which std does not offer for process groups
//! (nor for a process known only by its pid); the only other unsafe code of the crate is in
//! `pipe.rs`.

use std::io;

/// The signals the shutdown sequence sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Signal {
    /// SIGTERM: asks the processes to exit.
    Terminate,
    /// SIGKILL: ends them.
    Kill,
}

/// Sends `signal` to every process in the group `pgid`.
pub(super) fn signal(pgid: u32, signal: Signal) -> io::Result<()> {
    let number = match signal {
        Signal::Terminate => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    kill_group(pgid, number)
}

/// Sends `signal` to the process `pid` alone (the server, which a thread of ours is waiting
/// on, so its pid is not reused before that thread reaps it).
pub(super) fn signal_process(pid: u32, signal: Signal) -> io::Result<()> {
    let number = match signal {
        Signal::Terminate => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    let pid =
        libc::pid_t::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    kill_pid(pid, number)
}

/// Whether a process of the group `pgid` still runs. On Linux zombies do not count: some
/// containers never reap orphans, and waiting for them would only delay close.
pub(super) fn alive(pgid: u32) -> bool {
    match kill_group(pgid, 0) {
        Ok(()) => live_member(pgid),
        // EPERM: a member exists that we may not signal (it changed its user).
        Err(e) => e.raw_os_error() == Some(libc::EPERM),
    }
}

/// Sends signal number `signal` (0 only checks) to the process group `pgid`.
#[allow(unsafe_code)]
fn kill_group(pgid: u32, signal: libc::c_int) -> io::Result<()> {
    // Group 0 would be our own group and -1 every process we may signal: never send to those.
    let pgid = libc::pid_t::try_from(pgid)
        .ok()
        .filter(|pgid| *pgid > 1)
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: kill(2) takes two integers and touches no memory of this process. A negative pid
    // addresses exactly the process group `pgid`, and the check above rules out 0 and 1.
    let rc = unsafe { libc::kill(-pgid, signal) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sends signal number `signal` to the process `pid` (positive, above 1).
#[allow(unsafe_code)]
fn kill_pid(pid: libc::pid_t, signal: libc::c_int) -> io::Result<()> {
    if pid <= 1 {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: kill(2) takes two integers and touches no memory of this process; a pid above 1
    // addresses exactly that one process.
    let rc = unsafe { libc::kill(pid, signal) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether the group has a member that is not a zombie, read from `/proc`.
#[cfg(target_os = "linux")]
fn live_member(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            return false;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // The fields after the parenthesised command name: state, ppid, pgrp, …
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("Z");
        let pgrp = fields.nth(1).and_then(|f| f.parse::<u32>().ok());
        pgrp == Some(pgid) && state != "Z" && state != "X"
    })
}

/// Without `/proc`, every member counts.
#[cfg(not(target_os = "linux"))]
fn live_member(_pgid: u32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_our_own_group_and_init() {
        for pgid in [0, 1, u32::MAX] {
            let err = signal(pgid, Signal::Terminate).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{pgid}");
        }
    }
}
