//! A session's turns and seats: the commands running at once (with any `watch`es beside
//! them), and the callers connected at once. Each is held by a guard that gives it back when
//! dropped, so a command that panics frees its turn and its caller's seat as one that ends
//! does, and the session neither stays busy nor loses a seat for good.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::sync::lock;

/// How many commands run, how many `watch`es run beside them, and when the last one ended.
pub struct Turns {
    state: Mutex<State>,
    wake: Condvar,
}

/// What [`Turns`] guards.
pub struct State {
    pub running: usize,
    pub watching: usize,
    pub last: Instant,
}

impl State {
    /// Whether anything runs: a command or a `watch`.
    pub fn busy(&self) -> bool {
        self.running > 0 || self.watching > 0
    }
}

/// A running command, counted off when dropped; `alone` when no other command was running
/// as it began.
pub struct Turn<'a> {
    turns: &'a Turns,
    pub alone: bool,
}

/// A `watch` running beside the commands, counted off when dropped.
pub struct Watching<'a>(&'a Turns);

impl Turns {
    /// No command running, none since now.
    pub fn new() -> Turns {
        Turns {
            state: Mutex::new(State {
                running: 0,
                watching: 0,
                last: Instant::now(),
            }),
            wake: Condvar::new(),
        }
    }

    /// Counts a command in until the guard is dropped; commands of several callers run at
    /// once (the callers are bounded by [`Seats`]).
    pub fn take(&self) -> Turn<'_> {
        let mut state = lock(&self.state);
        state.running += 1;
        Turn {
            turns: self,
            alone: state.running == 1,
        }
    }

    /// Counts a `watch` in until the guard is dropped.
    pub fn watch(&self) -> Watching<'_> {
        lock(&self.state).watching += 1;
        Watching(self)
    }

    /// The state, after waiting at most `wait` for a change.
    pub fn after(&self, wait: Duration) -> MutexGuard<'_, State> {
        let state = lock(&self.state);
        self.wake
            .wait_timeout(state, wait)
            .unwrap_or_else(PoisonError::into_inner)
            .0
    }

    /// The state now.
    pub fn now(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.turns.state);
        state.running = state.running.saturating_sub(1);
        state.last = Instant::now();
        self.turns.wake.notify_all();
    }
}

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.0.state);
        state.watching = state.watching.saturating_sub(1);
        state.last = Instant::now();
        self.0.wake.notify_all();
    }
}

/// The callers connected at once, at most a bound.
pub struct Seats {
    taken: AtomicUsize,
    bound: usize,
}

/// A caller's seat, given back when dropped (by the caller's thread, however it ends).
pub struct Seat(Arc<Seats>);

impl Seats {
    /// Room for `bound` callers.
    pub fn new(bound: usize) -> Arc<Seats> {
        Arc::new(Seats {
            taken: AtomicUsize::new(0),
            bound,
        })
    }

    /// A seat, or `None` when all are taken.
    pub fn take(self: &Arc<Self>) -> Option<Seat> {
        let taken = self.taken.fetch_add(1, Ordering::SeqCst);
        let seat = Seat(Arc::clone(self));
        (taken < self.bound).then_some(seat)
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.0.taken.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_panics_gives_back_its_turn_and_its_seat() {
        let (turns, seats) = (Turns::new(), Seats::new(1));
        std::thread::scope(|scope| {
            let panicked = scope.spawn(|| {
                let _seat = seats.take().expect("a seat");
                let _turn = turns.take();
                panic!("a command that panics");
            });
            assert!(panicked.join().is_err());
        });
        assert!(seats.take().is_some(), "the seat is free again");
        assert_eq!(turns.now().running, 0, "the turn is given back");
        let first = turns.take();
        let second = turns.take();
        assert!(first.alone && !second.alone, "commands run at once");
        assert_eq!(turns.now().running, 2);
        drop((first, second));
        assert!(!turns.now().busy());
        let watching = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let _watch = turns.watch();
                    panic!("a watch that panics");
                })
                .join()
                .is_err()
        });
        assert!(watching);
        assert_eq!(turns.now().watching, 0);
    }

    #[test]
    fn seats_are_bounded() {
        let seats = Seats::new(2);
        let (a, b) = (seats.take(), seats.take());
        assert!(a.is_some() && b.is_some());
        assert!(seats.take().is_none());
        drop(a);
        assert!(seats.take().is_some());
    }
}
