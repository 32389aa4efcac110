//! The monitor thread: notices the server's exit, reaps it, and runs the shutdown sequence.

use std::io;
use std::process::{Child, ExitStatus};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{never, select, Receiver, RecvTimeoutError};

use super::child::ChildWatch;
#[cfg(unix)]
use super::group::{self, Signal};
use super::shared::Shared;
use super::stdin::Stdin;
use crate::error::Closed;
use crate::sync::lock;

/// How often the monitor looks at a running server's state (its exit itself is reported at
/// once by the waiting thread).
const POLL: Duration = Duration::from_millis(100);

/// How often the leftovers of an exited server's process group are checked.
const GROUP_POLL: Duration = Duration::from_millis(200);

/// How long a server that closed stdout gets to exit before the connection is reported closed
/// without an exit status.
const EOF_GRACE: Duration = Duration::from_secs(1);

/// How long a server whose stdin broke gets to exit before the end is reported without a status.
/// Shorter than the wait of the send that found stdin broken, so that send fails with the report.
const INPUT_GRACE: Duration = Duration::from_millis(500);

/// How long the reader and stderr threads may wait on a pipe that stays open after the server
/// is gone (a process outside the group holds it) before the end is reported anyway.
const DRAIN_WAIT: Duration = Duration::from_millis(250);

/// How long the reader and stderr threads get at most to pass on what the server wrote before
/// it exited, while they are busy with it.
const DRAIN_MAX: Duration = Duration::from_secs(3);

/// How long a SIGKILLed server gets to disappear.
const REAP_WAIT: Duration = Duration::from_secs(1);

/// What the shutdown sequence takes beyond the two configured graces, at most (with some
/// room for the polling).
pub(super) const SHUTDOWN_EXTRA: Duration = REAP_WAIT
    .saturating_add(DRAIN_MAX)
    .saturating_add(Duration::from_millis(100));

/// Watches the child process for its whole life.
pub(super) struct Monitor {
    pub(super) child: ChildWatch,
    /// The child's pid, which is also its process group id on Unix.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(super) pid: u32,
    pub(super) status: Option<ExitStatus>,
    /// The child was reaped (its status may still be unknown if waiting failed).
    pub(super) reaped: bool,
    pub(super) shared: Arc<Shared>,
    /// The server's input, which tells when the server stopped reading it.
    pub(super) stdin: Arc<Stdin>,
    /// Disconnects when the transport is closed.
    pub(super) close: Receiver<()>,
    pub(super) reader_done: Receiver<()>,
    pub(super) stderr_done: Receiver<()>,
    pub(super) close_grace: Duration,
    pub(super) kill_grace: Duration,
    /// The server's group as the watcher knows it (see `guard.rs`), withdrawn as the monitor
    /// ends, when nothing of the group runs any more or the shutdown gave up on it.
    #[cfg(unix)]
    pub(super) _enlisted: Option<super::guard::Enlisted>,
}

impl Monitor {
    /// Watches the server until it is gone or the transport closes, then shuts it down.
    pub(super) fn run(mut self) {
        if self.watch() {
            self.shut_down();
        }
    }

    /// Waits for the server's exit and reports it; `true` when the transport is being closed,
    /// `false` when nothing of the server runs any more.
    fn watch(&mut self) -> bool {
        let mut reader_done = self.reader_done.clone();
        let mut exited = self.child.exited().clone();
        let mut eof_at: Option<Instant> = None;
        loop {
            let poll = if self.reaped { GROUP_POLL } else { POLL };
            select! {
                recv(self.close) -> _ => return true,
                recv(reader_done) -> _ => {
                    reader_done = never();
                    eof_at = Some(Instant::now());
                }
                recv(exited) -> status => {
                    exited = never();
                    self.record(status.ok());
                }
                default(poll) => {}
            }
            if self.shared.is_closing() {
                // Closing stdin may have made the server exit before the close signal got
                // here: that exit belongs to the close.
                return true;
            }
            if self.reaped {
                if !self.shared.is_reported() {
                    self.drain();
                    self.report("server exited");
                }
                // Keep watching what the server left in its group, so that close signals the
                // group only while it exists and its id cannot have been reused.
                if !self.alive() {
                    return false;
                }
            } else if !self.shared.is_reported() {
                let input_broken = self.stdin.broken_since();
                if eof_at.is_some_and(|at| at.elapsed() >= EOF_GRACE) {
                    self.drain();
                    self.report("server closed its output");
                } else if input_broken.is_some_and(|at| at.elapsed() >= INPUT_GRACE) {
                    self.drain();
                    self.report("server stopped reading its input");
                }
            }
        }
    }

    /// Closes the server down (`close_grace`, SIGTERM, `kill_grace`, SIGKILL); always reaps. The
    /// grace is the server's own: once it has exited, what it left in its group is ended at once.
    fn shut_down(&mut self) {
        let grace = if self.shared.is_aborting() {
            Duration::ZERO
        } else {
            self.close_grace
        };
        self.wait_exit(grace);
        if self.alive() {
            log::debug!(
                "{}: still running after {grace:?}; terminating",
                self.shared.label
            );
            self.signal_terminate();
            if !self.wait_gone(self.kill_grace) {
                log::debug!(
                    "{}: still running after {:?}; killing",
                    self.shared.label,
                    self.kill_grace
                );
                self.signal_kill();
                if !self.wait_gone(REAP_WAIT) {
                    log::debug!("{}: still running after SIGKILL", self.shared.label);
                }
            }
        }
        self.drain();
        self.report("closed by client");
    }

    /// Notes the child's exit as reported by the waiting thread (`None`: that thread is gone).
    fn record(&mut self, status: Option<io::Result<ExitStatus>>) {
        if self.reaped {
            return;
        }
        self.reaped = true;
        match status {
            Some(Ok(status)) => {
                log::debug!("{}: exited with {status}", self.shared.label);
                self.status = Some(status);
            }
            // Nothing left to wait for (for example SIGCHLD is ignored and the system reaped
            // it), so treat it as gone rather than wait forever.
            Some(Err(e)) => {
                log::debug!("{}: waiting for the server failed: {e}", self.shared.label)
            }
            None => log::debug!("{}: the waiting thread is gone", self.shared.label),
        }
    }

    /// Waits until the server itself has exited, for at most `limit`.
    fn wait_exit(&mut self, limit: Duration) {
        if self.reaped {
            return;
        }
        match self.child.exited().recv_timeout(limit) {
            Ok(status) => self.record(Some(status)),
            Err(RecvTimeoutError::Disconnected) => self.record(None),
            Err(RecvTimeoutError::Timeout) => {}
        }
    }

    /// Whether the server or anything left in its process group still runs.
    fn alive(&self) -> bool {
        #[cfg(unix)]
        {
            !self.reaped || group::alive(self.pid)
        }
        #[cfg(not(unix))]
        {
            !self.reaped
        }
    }

    /// Waits until nothing of the server runs, for at most `limit`; `true` when it is gone.
    fn wait_gone(&mut self, limit: Duration) -> bool {
        let deadline = crate::transport::deadline_after(Instant::now(), limit);
        self.wait_exit(limit);
        loop {
            if !self.alive() {
                return true;
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            // The group is checked through /proc, so it is polled.
            thread::sleep((GROUP_POLL / 10).min(left));
        }
    }

    /// Asks the server and its group to exit.
    fn signal_terminate(&mut self) {
        #[cfg(unix)]
        if let Err(e) = group::signal(self.pid, Signal::Terminate) {
            log::debug!(
                "{}: SIGTERM to the process group failed: {e}",
                self.shared.label
            );
        }
        #[cfg(not(unix))]
        self.signal_kill();
    }

    /// Ends the server and its group.
    fn signal_kill(&mut self) {
        #[cfg(unix)]
        if let Err(e) = group::signal(self.pid, Signal::Kill) {
            log::debug!(
                "{}: SIGKILL to the process group failed: {e}",
                self.shared.label
            );
        }
        // Also directly, in case the server left its group.
        if !self.reaped {
            if let Err(e) = self.child.kill() {
                log::debug!("{}: killing the server failed: {e}", self.shared.label);
            }
        }
    }

    /// Lets the reader and stderr threads pass on the server's last words, so they arrive
    /// before the end is reported: as long as they are busy with data, up to `DRAIN_MAX`, but
    /// only `DRAIN_WAIT` once they wait on a pipe that something else holds open.
    fn drain(&self) {
        let hard = Instant::now() + DRAIN_MAX;
        let pipes = [
            ("stdout", &self.reader_done, &self.shared.stdout_activity),
            ("stderr", &self.stderr_done, &self.shared.stderr_activity),
        ];
        for (pipe, done, activity) in pipes {
            let mut seen = activity.get().1;
            loop {
                let wait = DRAIN_WAIT.min(hard.saturating_duration_since(Instant::now()));
                if let Err(RecvTimeoutError::Timeout) = done.recv_timeout(wait) {
                    let (waiting, bytes) = activity.get();
                    if (!waiting || bytes != seen) && Instant::now() < hard {
                        seen = bytes;
                        continue;
                    }
                    log::debug!(
                        "{}: {pipe} is still open; reporting anyway",
                        self.shared.label
                    );
                }
                break;
            }
        }
    }

    /// Reports the end with `reason`, the exit status and the stderr tail.
    fn report(&self, reason: &str) {
        let tail = lock(&self.shared.tail).text();
        self.shared.report(Closed {
            reason: reason.into(),
            exit_status: self.status,
            stderr_tail: Some(tail),
        });
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        // Only reached unreaped when the thread could not start or the sequence gave up: make
        // sure the server ends (the waiting thread then reaps it).
        if !self.reaped {
            let _ = self.child.kill();
        }
    }
}

/// Kills `child` and reaps it.
pub(super) fn kill_now(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}
