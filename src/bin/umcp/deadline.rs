//! The `--timeout` of a tool call, less the time the user spends answering the server's
//! questions: the server's time to answer, not the user's to type.
//!
//! The library's request timeout runs on while an elicitation handler waits for the user (in
//! the handshake era the question arrives on another thread, unknown to the waiting call), so
//! a call that asks the user runs with a timeout too long to matter and a cancel handle, and a
//! watcher thread (`umcp-deadline`) cancels it once `--timeout` has passed, not counting the
//! time a question was on the terminal ([`asking`]).

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use umcp::{CancelHandle, RequestOptions, TimeoutKind};

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

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
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

/// A call's deadline, watched by its thread until [`Deadline::finish`].
pub struct Deadline {
    /// Set when the call ended; the watcher is woken by the condition variable.
    ended: Arc<(Mutex<bool>, Condvar)>,
    watcher: Option<JoinHandle<bool>>,
    timeout: Duration,
}

impl Deadline {
    /// Times a call of `options`' timeout (`timeout`) from now; returns the options to call
    /// with. Without a thread to watch it, the call keeps the library's timeout.
    pub fn start(options: RequestOptions, timeout: Duration) -> (RequestOptions, Deadline) {
        let cancel = CancelHandle::new();
        let ended = Arc::new((Mutex::new(false), Condvar::new()));
        let started = Instant::now();
        let (asked_before, _) = asked();
        let (watched, handle) = (Arc::clone(&ended), cancel.clone());
        let watcher = std::thread::Builder::new()
            .name("umcp-deadline".into())
            .spawn(move || watch(&watched, &handle, started, timeout, asked_before))
            .ok();
        let deadline = Deadline {
            ended,
            timeout,
            watcher,
        };
        match deadline.watcher {
            Some(_) => (options.with_timeout(UNTIMED).with_cancel(cancel), deadline),
            None => (options, deadline),
        }
    }

    /// Stops the watcher; `result` becomes a timeout if the watcher cancelled the call.
    pub fn finish<T>(mut self, result: umcp::Result<T>) -> umcp::Result<T> {
        {
            let (ended, wake) = &*self.ended;
            *lock(ended) = true;
            wake.notify_all();
        }
        let expired = self
            .watcher
            .take()
            .is_some_and(|w| w.join().unwrap_or(false));
        match result {
            Err(umcp::Error::Cancelled { method }) if expired => Err(umcp::Error::Timeout {
                method,
                elapsed: self.timeout,
                kind: TimeoutKind::Request,
                stderr_tail: None,
            }),
            other => other,
        }
    }
}

/// Waits until `timeout` has passed since `started`, the questions asked meanwhile not
/// counted, and then cancels the call; returns whether it did. Ends early when the call does.
fn watch(
    ended: &(Mutex<bool>, Condvar),
    cancel: &CancelHandle,
    started: Instant,
    timeout: Duration,
    asked_before: Duration,
) -> bool {
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
            let spent = started
                .elapsed()
                .saturating_sub(asked.saturating_sub(asked_before));
            match timeout.checked_sub(spent) {
                Some(left) if !left.is_zero() => left,
                _ => {
                    cancel.cancel();
                    return true;
                }
            }
        };
        done = wake
            .wait_timeout(done, wait)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}
