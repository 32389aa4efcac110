//! Noticing the server's exit the moment it happens: the `umcp-stdio-wait` thread waits on
//! the child and reports its status to the monitor's queue of events, so that a server
//! exiting on stdin EOF is seen at once rather than at the next poll.

use std::io;
use std::process::{Child, ExitStatus};

#[cfg(unix)]
use super::group::{self, Signal};
use super::monitor::{Event, Events};
use super::worker::Worker;

/// A way to kill the server process (its exit comes to the monitor as an [`Event`]).
pub(super) struct ChildWatch {
    #[cfg(unix)]
    pid: u32,
    #[cfg(not(unix))]
    child: std::sync::Arc<std::sync::Mutex<Child>>,
}

/// Starts the thread that waits for `child` and tells `events` of its exit (or, should the
/// thread end without a status, that it is gone); on failure the child is killed.
pub(super) fn watch(child: Child, events: Events) -> io::Result<(ChildWatch, Worker)> {
    let tx = Told(events, false);
    #[cfg(unix)]
    {
        let pid = child.id();
        let mut child = child;
        let worker = Worker::spawn("umcp-stdio-wait", move || {
            // Blocks until the server exits; the shutdown sequence signals it by pid.
            let mut tx = tx;
            tx.send(child.wait());
        });
        match worker {
            Ok(worker) => Ok((ChildWatch { pid }, worker)),
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
        let worker = Worker::spawn("umcp-stdio-wait", move || {
            let mut tx = tx;
            loop {
                let status = match polled.lock() {
                    Ok(mut child) => child.try_wait(),
                    Err(_) => Err(io::Error::other("the child's lock was poisoned")),
                };
                match status {
                    Ok(None) => std::thread::sleep(std::time::Duration::from_millis(5)),
                    Ok(Some(status)) => return tx.send(Ok(status)),
                    Err(e) => return tx.send(Err(e)),
                }
            }
        })?;
        Ok((ChildWatch { child }, worker))
    }
}

/// The waiting thread's line to the monitor: its exit status, or on drop without one (a
/// panic) that the thread is gone.
struct Told(Events, bool);

impl Told {
    fn send(&mut self, status: io::Result<ExitStatus>) {
        self.1 = true;
        self.0.tell(Event::Exited(Some(status)));
    }
}

impl Drop for Told {
    fn drop(&mut self) {
        if !self.1 {
            self.0.tell(Event::Exited(None));
        }
    }
}

impl ChildWatch {
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
