//! Small helpers for locks and deadlines that every part of the crate uses.
//!
//! The `umcp` binary includes this file as a module of its own, so it must name nothing else of
//! the crate.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Stands for "no deadline" where an `Instant` is needed and a user's duration does not fit.
const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// Locks a mutex, recovering the data if a panicking thread poisoned it: every structure
/// guarded this way stays consistent between statements.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `start + duration`, or a point far in the future when that does not fit: a user's
/// `Duration::MAX` means "no limit", never a panic. A duration past a hundred years counts as
/// a hundred years, so that code adding to the deadline later cannot overflow either.
pub(crate) fn deadline_after(start: Instant, duration: Duration) -> Instant {
    start
        .checked_add(duration.min(FAR_FUTURE))
        .or_else(|| start.checked_add(Duration::from_secs(24 * 3600)))
        .unwrap_or(start)
}

/// The instant `duration` from now, as [`deadline_after`].
pub(crate) fn deadline_in(duration: Duration) -> Instant {
    deadline_after(Instant::now(), duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_deadlines_saturate_and_near_ones_are_exact() {
        let now = Instant::now();
        assert!(deadline_after(now, Duration::MAX) > now + Duration::from_secs(3600));
        assert_eq!(deadline_after(now, FAR_FUTURE * 2), now + FAR_FUTURE);
        let second = Duration::from_secs(1);
        assert_eq!(deadline_after(now, second), now + second);
        assert!(deadline_in(Duration::MAX) > now);
    }

    #[test]
    fn a_poisoned_lock_is_taken_over() {
        let mutex = std::sync::Arc::new(Mutex::new(1));
        let held = std::sync::Arc::clone(&mutex);
        let _ = std::thread::spawn(move || {
            let _guard = held.lock().unwrap();
            panic!("poisoning the lock");
        })
        .join();
        assert!(mutex.is_poisoned());
        *lock(&mutex) += 1;
        assert_eq!(*lock(&mutex), 2);
    }
}
