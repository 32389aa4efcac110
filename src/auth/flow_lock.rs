//! The lock that makes a provider's concurrent 401s run one authorization, waited for with
//! a deadline: the thread holding it may be waiting for a user.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A lock whose waiters give up at a deadline.
#[derive(Default)]
pub(crate) struct FlowLock {
    busy: Mutex<bool>,
    free: Condvar,
}

/// Holds a [`FlowLock`] until dropped.
pub(crate) struct FlowGuard<'a> {
    lock: &'a FlowLock,
}

impl FlowLock {
    /// Takes the lock, waiting at most `wait` (`Duration::MAX`: without limit); `None` when
    /// it stayed taken.
    pub fn acquire(&self, wait: Duration) -> Option<FlowGuard<'_>> {
        let deadline = Instant::now().checked_add(wait);
        let mut busy = self.state();
        while *busy {
            busy = match deadline {
                None => self.free.wait(busy).unwrap_or_else(|e| e.into_inner()),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    self.free
                        .wait_timeout(busy, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
        *busy = true;
        Some(FlowGuard { lock: self })
    }

    /// Takes the lock when it is free.
    pub fn try_acquire(&self) -> Option<FlowGuard<'_>> {
        let mut busy = self.state();
        if *busy {
            return None;
        }
        *busy = true;
        Some(FlowGuard { lock: self })
    }

    fn state(&self) -> MutexGuard<'_, bool> {
        self.busy.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for FlowGuard<'_> {
    fn drop(&mut self) {
        *self.lock.state() = false;
        self.lock.free.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn waiters_give_up_at_their_deadline_and_get_the_lock_when_freed() {
        let lock = Arc::new(FlowLock::default());
        let held = lock.acquire(Duration::ZERO).expect("free");
        assert!(lock.try_acquire().is_none());
        let started = Instant::now();
        assert!(lock.acquire(Duration::from_millis(50)).is_none());
        assert!(started.elapsed() >= Duration::from_millis(50));
        let waiter = {
            let lock = Arc::clone(&lock);
            std::thread::spawn(move || lock.acquire(Duration::MAX).is_some())
        };
        std::thread::sleep(Duration::from_millis(20));
        drop(held);
        assert!(
            waiter.join().unwrap(),
            "Duration::MAX waits until the lock is free"
        );
        assert!(lock.try_acquire().is_some());
    }
}
