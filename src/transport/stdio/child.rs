//! Noticing the server's exit the moment it happens: the `umcp-stdio-wait` thread waits on
//! the child and reports its status on a channel the monitor listens to, so that a server
//! exiting on stdin EOF is seen at once rather than at the next poll.

use std::io;
use std::process::{Child, ExitStatus};

use crossbeam_channel::Receiver;

#[cfg(unix)]
use super::group::{self, Signal};
use super::worker::Worker;

/// The exit of the server process, and a way to kill it.
pub(super) struct ChildWatch {
    exited: Receiver<io::Result<ExitStatus>>,
    #[cfg(unix)]
    pid: u32,
    #[cfg(not(unix))]
    child: std::sync::Arc<std::sync::Mutex<Child>>,
}

/// Starts the thread that waits for `child`; on failure the child is killed.
pub(super) fn watch(child: Child) -> io::Result<(ChildWatch, Worker)> {
    let (tx, exited) = crossbeam_channel::bounded(1);
    #[cfg(unix)]
    {
        let pid = child.id();
        let mut child = child;
        let worker = Worker::spawn("umcp-stdio-wait", move || {
            // Blocks until the server exits; the shutdown sequence signals it by pid.
            let _ = tx.send(child.wait());
        });
        match worker {
            Ok(worker) => Ok((ChildWatch { exited, pid }, worker)),
            Err(e) => {
                // The child went with the closure that could not run: end it by pid.
                let _ = group::signal_process(pid, Signal::Kill);
                Err(e)
            }
        }
    }
    #[cfg(not(unix))]
    {
        use std::sync::{Arc, Mutex};
        // Without a signal by pid the monitor needs the child to kill it, so it is shared and
        // polled here rather than waited on.
        let child = Arc::new(Mutex::new(child));
        let polled = Arc::clone(&child);
        let worker = Worker::spawn("umcp-stdio-wait", move || loop {
            let status = match polled.lock() {
                Ok(mut child) => child.try_wait(),
                Err(_) => Err(io::Error::other("the child's lock was poisoned")),
            };
            match status {
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(5)),
                Ok(Some(status)) => {
                    let _ = tx.send(Ok(status));
                    return;
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        })?;
        Ok((ChildWatch { exited, child }, worker))
    }
}

impl ChildWatch {
    /// Receives the exit status (or the failure to wait) once the server has exited.
    pub(super) fn exited(&self) -> &Receiver<io::Result<ExitStatus>> {
        &self.exited
    }

    /// Kills the server process itself (the group is signalled separately).
    pub(super) fn kill(&self) -> io::Result<()> {
        #[cfg(unix)]
        {
            group::signal_process(self.pid, Signal::Kill)
        }
        #[cfg(not(unix))]
        {
            match self.child.lock() {
                Ok(mut child) => child.kill(),
                Err(_) => Err(io::Error::other("the child's lock was poisoned")),
            }
        }
    }
}
