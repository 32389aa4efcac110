//! The lock that makes a provider's concurrent 401s run one authorization, waited for with
//! a deadline (the thread holding it may be waiting for a user), and through which the
//! threads that waited for a flow learn that it failed.
//!
//! A flow that fails with the authorization server's answer (an OAuth error such as
//! `invalid_client`, a registration refused, a document that does not parse, a token endpoint
//! answering 503) is not run again by each thread that was waiting behind it: they get its
//! error, the same one, since another flow at once would get the same answer, at the cost of
//! a discovery and a grant each. Any other failure belongs to the flow's own thread, and each
//! waiter then runs a flow of its own within its own deadline: a request that got no answer
//! (cut by the deadline of the call the flow ran for, or by the network), the user's step
//! (a refusal, a redirect that never came), the connection closing. Every failure of a
//! step-up after a 403, which asked for a scope of its own, is its own too. Only the threads
//! that were waiting while the flow ran are told: a thread arriving after the failure was
//! reported takes the lock and tries again. A wait also ends when the connection of the
//! request it serves closes.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{AuthStep, Error};
use crate::transport::http::provider_deadline;

/// What the lock is taken for, which decides whether a failure is shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// Credentials after a 401, or asked for before connecting: every such flow is the
    /// same, so its waiters take its failure when it is the authorization server's answer.
    Authorize,
    /// A step-up after a 403 `insufficient_scope`, for a scope of its own: it shares no
    /// failure, and takes none.
    StepUp,
    /// Forgetting the credentials, which no failed flow stands in the way of.
    Logout,
}

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
    /// Whether a failure of the flow may be told to the waiters: of a [`Purpose::Authorize`].
    shares: bool,
    /// The failure to tell the waiters about when the lock is released.
    failure: Option<Error>,
}

impl FlowLock {
    /// Takes the lock for a flow for `purpose`, waiting at most `wait` (`Duration::MAX`: no limit).
    /// Refused too when the flow waited for (same `purpose`) failed, or the connection closed.
    pub fn acquire(&self, wait: Duration, purpose: Purpose) -> Result<FlowGuard<'_>, Refused> {
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
        // Only the failures of `Purpose::Authorize` flows are recorded.
        let shares = purpose == Purpose::Authorize;
        let result = self.wait(state, deadline, shares.then_some(arrived));
        self.inner.state().waiting -= 1;
        result?;
        Ok(FlowGuard {
            lock: self,
            shares,
            failure: None,
        })
    }

    /// Waits, counted among the waiters, until the lock is free and takes it; `arrived`, the
    /// number of flows ended when this thread came, when it takes the failures of later ones.
    fn wait(
        &self,
        mut state: MutexGuard<'_, State>,
        deadline: Option<Instant>,
        arrived: Option<u64>,
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
            if let (Some((flow, error)), Some(arrived)) = (&state.failure, arrived) {
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

    /// Takes the lock when it is free, for a flow whose failure is not shared (a refresh).
    pub fn try_acquire(&self) -> Option<FlowGuard<'_>> {
        let mut state = self.inner.state();
        if state.busy {
            return None;
        }
        state.busy = true;
        Some(FlowGuard {
            lock: self,
            shares: false,
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
    /// Passes `result`, the outcome of the flow run under this guard, on; a failure that is
    /// the authorization server's answer, of a [`Purpose::Authorize`] flow, is told to the
    /// threads waiting for the lock when it is released (see the module docs).
    pub fn outcome<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        if let Err(error) = &result {
            if self.shares && is_answer(error) {
                self.failure = Some(error.clone());
            }
        }
        result
    }
}

/// Whether `error` is the authorization server's answer (a status, a step without the user),
/// which another flow would get too; not a request a deadline may have cut, nor any after close.
fn is_answer(error: &Error) -> bool {
    let answered = matches!(error, Error::Auth(e)
        if e.status.is_some() && e.step != AuthStep::Authorization);
    answered && !provider_deadline::closed()
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
        let held = lock
            .acquire(Duration::ZERO, Purpose::Authorize)
            .expect("free");
        assert!(lock.try_acquire().is_none());
        let started = Instant::now();
        assert!(matches!(
            lock.acquire(Duration::from_millis(50), Purpose::Authorize),
            Err(Refused::Busy)
        ));
        assert!(started.elapsed() >= Duration::from_millis(50));
        let waiter = {
            let lock = Arc::clone(&lock);
            std::thread::spawn(move || lock.acquire(Duration::MAX, Purpose::Authorize).is_ok())
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
        let mut held = lock
            .acquire(Duration::ZERO, Purpose::Authorize)
            .expect("free");
        let waiters: Vec<_> = (0..WAITERS)
            .map(|_| {
                let lock = Arc::clone(&lock);
                std::thread::spawn(move || {
                    match lock.acquire(Duration::from_secs(10), Purpose::Authorize) {
                        Err(Refused::Failed(Error::Auth(e))) => e.message,
                        Err(other) => panic!("{other:?}"),
                        Ok(_) => panic!("took the lock of a failed flow"),
                    }
                })
            })
            .collect();
        while lock.waiting() < WAITERS {
            std::thread::yield_now();
        }
        let failure = AuthError {
            status: Some(503),
            ..AuthError::new(AuthStep::Token, "the token endpoint is down")
        };
        assert!(held.outcome::<()>(Err(failure.into())).is_err());
        drop(held);
        for waiter in waiters {
            assert_eq!(waiter.join().unwrap(), "the token endpoint is down");
        }
        // Reported: the next one takes the lock, and a success tells nobody anything.
        let mut again = lock
            .acquire(Duration::ZERO, Purpose::Authorize)
            .expect("no sticky failure");
        assert_eq!(again.outcome(Ok(7)).ok(), Some(7));
        drop(again);
        assert!(lock.acquire(Duration::ZERO, Purpose::Authorize).is_ok());
    }

    #[test]
    fn failures_other_than_the_servers_answer_to_the_same_flow_are_not_shared() {
        use Purpose::{Authorize, Logout, StepUp};
        let answer = |step| AuthError {
            status: Some(401),
            error: Some("invalid_client".into()),
            ..AuthError::new(step, "refused")
        };
        let cases = [
            // A request that got no answer: the holder's deadline may have cut it.
            (
                Authorize,
                Authorize,
                AuthError::new(AuthStep::Token, "timeout"),
            ),
            // The user's step.
            (Authorize, Authorize, answer(AuthStep::Authorization)),
            // A step-up asked for a scope of its own; a 401 waiter asks for none.
            (StepUp, Authorize, answer(AuthStep::Token)),
            (Authorize, StepUp, answer(AuthStep::Token)),
            (StepUp, StepUp, answer(AuthStep::Token)),
            // Forgetting the credentials needs no flow to succeed.
            (Authorize, Logout, answer(AuthStep::Token)),
        ];
        for (holder, waiter, failure) in cases {
            let lock = Arc::new(FlowLock::default());
            let mut held = lock.acquire(Duration::ZERO, holder).expect("free");
            let waiting = {
                let lock = Arc::clone(&lock);
                std::thread::spawn(move || {
                    let taken = lock.acquire(Duration::from_secs(10), waiter);
                    taken.map(drop).map_err(|refused| format!("{refused:?}"))
                })
            };
            while lock.waiting() < 1 {
                std::thread::yield_now();
            }
            let shown = failure.to_string();
            assert!(held.outcome::<()>(Err(failure.into())).is_err());
            drop(held);
            assert_eq!(
                waiting.join().unwrap(),
                Ok(()),
                "{holder:?} failing with `{shown}`, for a {waiter:?} waiter"
            );
        }
    }
}
