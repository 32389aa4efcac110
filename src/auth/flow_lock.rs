//! The lock that makes a provider's concurrent 401s run one authorization, waited for with
//! a deadline (the thread holding it may be waiting for a user), and through which the
//! threads that waited for a flow learn that it failed.
//!
//! A flow that fails is not run again by each thread that was waiting behind it: they get
//! its error, the same one, since another flow at once would most likely fail the same way
//! (a token endpoint that is down, a client the server no longer knows) and cost each of
//! them their own discovery and grant. Only the threads that were waiting while the flow ran
//! are told: a thread arriving after the failure was reported takes the lock and tries again.
//! A wait also ends when the connection of the request it serves closes.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::transport::http::provider_deadline;

/// A lock whose waiters give up at a deadline, or on a failure of the flow they waited for.
#[derive(Default)]
pub(crate) struct FlowLock {
    // Shared with the hook that wakes the waiters when their connection closes.
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    free: Condvar,
}

#[derive(Default)]
struct State {
    busy: bool,
    /// How many threads wait for the lock.
    waiting: usize,
    /// How many flows have ended.
    ended: u64,
    /// The failure of the last flow that ended, numbered as `ended` counted it.
    failure: Option<(u64, Error)>,
}

/// Why [`FlowLock::acquire`] did not take the lock.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The lock stayed taken for the whole wait.
    Busy,
    /// A flow this thread waited for failed with this error.
    Failed(Error),
    /// The connection of the request being served closed.
    Closed,
}

/// Holds a [`FlowLock`] until dropped.
pub(crate) struct FlowGuard<'a> {
    lock: &'a FlowLock,
    /// The failure to tell the waiters about when the lock is released.
    failure: Option<Error>,
}

impl FlowLock {
    /// Takes the lock, waiting at most `wait` (`Duration::MAX`: without limit).
    ///
    /// # Errors
    ///
    /// [`Refused`]: the lock stayed taken, a flow this thread waited for failed, or the
    /// connection closed.
    pub fn acquire(&self, wait: Duration) -> Result<FlowGuard<'_>, Refused> {
        let deadline = Instant::now().checked_add(wait);
        // Registered before the state is locked (the hook locks it), and dropped after.
        let inner = Arc::clone(&self.inner);
        let _wake = provider_deadline::on_close(move || {
            let _state = inner.state();
            inner.free.notify_all();
        })
        .ok_or(Refused::Closed)?;
        let mut state = self.inner.state();
        let arrived = state.ended;
        state.waiting += 1;
        let result = self.wait(state, deadline, arrived);
        self.inner.state().waiting -= 1;
        result?;
        Ok(FlowGuard {
            lock: self,
            failure: None,
        })
    }

    /// Waits, counted among the waiters, until the lock is free and takes it.
    fn wait(
        &self,
        mut state: MutexGuard<'_, State>,
        deadline: Option<Instant>,
        arrived: u64,
    ) -> Result<(), Refused> {
        while state.busy {
            // Checked under the state's lock, which the hook takes to wake: never missed.
            if provider_deadline::closed() {
                return Err(Refused::Closed);
            }
            state = match deadline {
                None => self
                    .inner
                    .free
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner()),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(Refused::Busy);
                    }
                    self.inner
                        .free
                        .wait_timeout(state, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
            if let Some((flow, error)) = &state.failure {
                if *flow > arrived {
                    return Err(Refused::Failed(error.clone()));
                }
            }
        }
        state.busy = true;
        Ok(())
    }

    /// How many threads wait for the lock.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.inner.state().waiting
    }

    /// Takes the lock when it is free.
    pub fn try_acquire(&self) -> Option<FlowGuard<'_>> {
        let mut state = self.inner.state();
        if state.busy {
            return None;
        }
        state.busy = true;
        Some(FlowGuard {
            lock: self,
            failure: None,
        })
    }
}

impl Inner {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl FlowGuard<'_> {
    /// Passes `result`, the outcome of the flow run under this guard, on; a failure is told
    /// to the threads waiting for the lock when it is released. Not when the connection of
    /// the request being served closed: that failure is not theirs, and they try themselves.
    pub fn outcome<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        if let Err(error) = &result {
            if !provider_deadline::closed() {
                self.failure = Some(error.clone());
            }
        }
        result
    }
}

impl Drop for FlowGuard<'_> {
    fn drop(&mut self) {
        let mut state = self.lock.inner.state();
        state.busy = false;
        state.ended += 1;
        state.failure = self.failure.take().map(|error| (state.ended, error));
        // Every waiter: each one that waited learns of a failure.
        self.lock.inner.free.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{AuthError, AuthStep};

    #[test]
    fn waiters_give_up_at_their_deadline_and_get_the_lock_when_freed() {
        let lock = Arc::new(FlowLock::default());
        let held = lock.acquire(Duration::ZERO).expect("free");
        assert!(lock.try_acquire().is_none());
        let started = Instant::now();
        assert!(matches!(
            lock.acquire(Duration::from_millis(50)),
            Err(Refused::Busy)
        ));
        assert!(started.elapsed() >= Duration::from_millis(50));
        let waiter = {
            let lock = Arc::clone(&lock);
            std::thread::spawn(move || lock.acquire(Duration::MAX).is_ok())
        };
        std::thread::sleep(Duration::from_millis(20));
        drop(held);
        assert!(
            waiter.join().unwrap(),
            "Duration::MAX waits until the lock is free"
        );
        assert!(lock.try_acquire().is_some());
    }

    #[test]
    fn the_waiters_of_a_failed_flow_get_its_error_and_later_arrivals_try_again() {
        const WAITERS: usize = 3;
        let lock = Arc::new(FlowLock::default());
        let mut held = lock.acquire(Duration::ZERO).expect("free");
        let waiters: Vec<_> = (0..WAITERS)
            .map(|_| {
                let lock = Arc::clone(&lock);
                std::thread::spawn(move || match lock.acquire(Duration::from_secs(10)) {
                    Err(Refused::Failed(Error::Auth(e))) => e.message,
                    Err(other) => panic!("{other:?}"),
                    Ok(_) => panic!("took the lock of a failed flow"),
                })
            })
            .collect();
        while lock.waiting() < WAITERS {
            std::thread::yield_now();
        }
        let failure = AuthError::new(AuthStep::Token, "the token endpoint is down");
        assert!(held.outcome::<()>(Err(failure.into())).is_err());
        drop(held);
        for waiter in waiters {
            assert_eq!(waiter.join().unwrap(), "the token endpoint is down");
        }
        // Reported: the next one takes the lock, and a success tells nobody anything.
        let mut again = lock.acquire(Duration::ZERO).expect("no sticky failure");
        assert_eq!(again.outcome(Ok(7)).ok(), Some(7));
        drop(again);
        assert!(lock.acquire(Duration::ZERO).is_ok());
    }
}
