//! The `--timeout` of a command's server interaction: one clock for all its requests, less the
//! time the user spends answering the server's questions (the server's time to answer, not the
//! user's to type).
//!
//! Each request given the whole `--timeout` would let a command of several requests (a tool
//! listing, then the call) run for several timeouts. And the library's request timeout runs on
//! while an elicitation handler waits for the user (in the handshake era the question arrives
//! on another thread, unknown to the waiting call, and any request can be waiting then). So
//! every request of a command runs with a timeout too long to matter and the command's cancel
//! handle, and a watcher thread (`umcp-deadline`) cancels them once `--timeout` has passed
//! since the servers connected, not counting the time a question was on the terminal
//! ([`asking`]). The listings the manager runs as a server connects count: a listing that hung
//! then is not given the whole timeout again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use umcp::{CancelHandle, RequestOptions, TimeoutKind};

use crate::sync::lock;

/// The library's timeout of a call the watcher times: long enough never to come first.
const UNTIMED: Duration = Duration::from_secs(365 * 86_400);

/// How often the watcher looks again while the user is being asked.
const WHILE_ASKING: Duration = Duration::from_millis(200);

/// The time questions have been on the terminal: in total, and since when for the one
/// being asked now.
struct Asked {
    total: Duration,
    since: Option<Instant>,
}

static ASKED: Mutex<Asked> = Mutex::new(Asked {
    total: Duration::ZERO,
    since: None,
});

/// Forgets the time questions took so far: a session's process runs many commands, and each
/// counts only the questions asked while it runs.
pub fn reset_asked() {
    lock(&ASKED).total = Duration::ZERO;
}

/// Runs `ask`, which waits for the user, with every call's clock stopped meanwhile.
pub fn asking<T>(ask: impl FnOnce() -> T) -> T {
    lock(&ASKED).since = Some(Instant::now());
    let answer = ask();
    let mut asked = lock(&ASKED);
    if let Some(since) = asked.since.take() {
        asked.total += since.elapsed();
    }
    answer
}

/// The time questions have taken so far, and whether one is being asked now.
fn asked() -> (Duration, bool) {
    let asked = lock(&ASKED);
    let now = asked.since.map(|since| since.elapsed());
    (asked.total + now.unwrap_or_default(), now.is_some())
}

/// The user's stop of one command (Ctrl-C in a shell, or in the `umcp` that runs a command
/// through a session): its requests are cancelled and what it follows ends, the program and
/// its servers going on.
#[derive(Clone, Default)]
pub struct Interrupt {
    set: Arc<AtomicBool>,
    cancel: CancelHandle,
}

impl Interrupt {
    /// Stops the command: cancels its requests.
    pub fn interrupt(&self) {
        self.set.store(true, Ordering::SeqCst);
        self.cancel.cancel();
    }

    /// Whether the command was stopped.
    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }
}

/// A command's deadline, watched by its thread until the deadline is dropped.
pub struct Deadline {
    /// Set when the command ended; the watcher is woken by the condition variable.
    ended: Arc<(Mutex<bool>, Condvar)>,
    /// Set by the watcher before it cancels: a cancelled request then timed out.
    expired: Arc<AtomicBool>,
    watcher: Option<JoinHandle<()>>,
    options: RequestOptions,
    timeout: Duration,
    interrupt: Interrupt,
}

impl Deadline {
    /// Times the requests of `options` (whose timeout is `timeout`) from `since`, each also
    /// cancelled by `interrupt`. Without a thread to watch them, each request keeps the
    /// library's timeout.
    pub fn start(
        options: RequestOptions,
        timeout: Duration,
        since: Instant,
        interrupt: &Interrupt,
    ) -> Deadline {
        let cancel = interrupt.cancel.clone();
        let ended = Arc::new((Mutex::new(false), Condvar::new()));
        let expired = Arc::new(AtomicBool::new(false));
        let (watched, handle, mark) = (Arc::clone(&ended), cancel.clone(), Arc::clone(&expired));
        // Every question of the run counts as the user's time, those asked before the watch
        // began too: the listings at connect, which the clock covers, may have asked one (one
        // asked before `since`, by a server that connected earlier, errs toward the user).
        let watcher = std::thread::Builder::new()
            .name("umcp-deadline".into())
            .spawn(move || {
                if watch(&watched, since, timeout) {
                    mark.store(true, Ordering::SeqCst);
                    handle.cancel();
                }
            })
            .ok();
        let options = match watcher {
            Some(_) => options.with_timeout(UNTIMED).with_cancel(cancel),
            None => options.with_cancel(cancel),
        };
        Deadline {
            ended,
            expired,
            watcher,
            options,
            timeout,
            interrupt: interrupt.clone(),
        }
    }

    /// Whether the user stopped the command (see [`Interrupt`]).
    pub fn interrupted(&self) -> bool {
        self.interrupt.is_set()
    }

    /// The options every request of the command is sent with.
    pub fn options(&self) -> &RequestOptions {
        &self.options
    }

    /// Whether the command's time is up.
    pub fn expired(&self) -> bool {
        self.expired.load(Ordering::SeqCst)
    }

    /// `result` of a request sent with [`Deadline::options`]: a timeout if the watcher
    /// cancelled it.
    pub fn timed<T>(&self, result: umcp::Result<T>) -> umcp::Result<T> {
        result.map_err(|error| self.timed_error(error))
    }

    /// `error` of a request sent with [`Deadline::options`], as [`Deadline::timed`] gives it.
    pub fn timed_error(&self, error: umcp::Error) -> umcp::Error {
        match error {
            umcp::Error::Cancelled { method } if self.expired() => umcp::Error::Timeout {
                method,
                elapsed: self.timeout,
                kind: TimeoutKind::Request,
                stderr_tail: None,
            },
            other => other,
        }
    }
}

impl Drop for Deadline {
    /// Stops the watcher and waits for it.
    fn drop(&mut self) {
        {
            let (ended, wake) = &*self.ended;
            *lock(ended) = true;
            wake.notify_all();
        }
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
    }
}

/// Waits until `timeout` has passed since `started`, the questions asked meanwhile not
/// counted; returns true then, or false as soon as the command ends.
fn watch(ended: &(Mutex<bool>, Condvar), started: Instant, timeout: Duration) -> bool {
    let (ended, wake) = ended;
    let mut done = lock(ended);
    loop {
        if *done {
            return false;
        }
        let (asked, now_asking) = asked();
        let wait = if now_asking {
            WHILE_ASKING
        } else {
            let spent = started.elapsed().saturating_sub(asked);
            match timeout.checked_sub(spent) {
                Some(left) if !left.is_zero() => left,
                _ => return true,
            }
        };
        done = wake
            .wait_timeout(done, wait)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}
