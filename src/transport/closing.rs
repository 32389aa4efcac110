//! Closing a transport once: the first caller closes, and later callers wait for that close
//! to finish, within a bound, instead of returning while it is still under way.
//!
//! A caller whose `close` returns expects the connection to be gone: for stdio, the server
//! process ended and reaped. When two threads close at once (a manager stopping a server
//! while its supervisor closes the client), the second must not return early, or a host that
//! exits next leaves behind a server that ignores the end of its input.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Where a transport's close stands.
#[derive(Debug, Default)]
pub(crate) struct Closing {
    phase: Mutex<Phase>,
    finished: Condvar,
}

#[derive(Debug, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Open,
    Closing,
    Closed,
}

impl Closing {
    /// Whether the caller is the one to close. Otherwise waits until the close under way has
    /// finished, or `bound` (the longest that close can take) has passed, and returns `false`.
    pub(crate) fn start(&self, bound: Duration) -> bool {
        let mut phase = self.lock();
        match *phase {
            Phase::Open => {
                *phase = Phase::Closing;
                return true;
            }
            Phase::Closed => return false,
            Phase::Closing => {}
        }
        let deadline = super::deadline_after(Instant::now(), bound);
        while *phase == Phase::Closing {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                log::debug!("a close under way did not finish within {bound:?}");
                break;
            };
            phase = self
                .finished
                .wait_timeout(phase, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        false
    }

    /// The close is over: wakes every caller waiting in [`Closing::start`].
    pub(crate) fn finish(&self) {
        *self.lock() = Phase::Closed;
        self.finished.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_second_caller_waits_for_the_first_close() {
        let closing = Arc::new(Closing::default());
        assert!(closing.start(Duration::from_secs(10)));
        let second = Arc::clone(&closing);
        let waiter = std::thread::spawn(move || {
            let started = Instant::now();
            (second.start(Duration::from_secs(10)), started.elapsed())
        });
        std::thread::sleep(Duration::from_millis(200));
        closing.finish();
        let (closes, waited) = waiter.join().expect("waiter");
        assert!(!closes, "only the first caller closes");
        assert!(
            waited >= Duration::from_millis(150),
            "returned early: {waited:?}"
        );
        assert!(
            !closing.start(Duration::from_secs(10)),
            "closed: returns at once"
        );
    }

    #[test]
    fn the_wait_is_bounded() {
        let closing = Closing::default();
        assert!(closing.start(Duration::ZERO));
        let started = Instant::now();
        assert!(!closing.start(Duration::from_millis(100)));
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(100) && waited < Duration::from_secs(5));
    }
}
