//! The deadline of every request the bridge works on for a host, watched by one thread
//! (`umcp-bridge-clock`).
//!
//! A request has the server's time, `--timeout`, restarted by each progress notification up
//! to ten timeouts in all, as the library times its own requests. The time a host takes to
//! answer a server's question (a person filling in a form) is the host's, not the server's:
//! the clock stops while a question waits. So the library's own timeout of these requests is
//! set too long to matter, and this thread cancels a request whose time is up.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::sync::lock;

/// How many timeouts a request that reports progress may last in all.
const PROGRESS_FACTOR: u32 = 10;

/// The longest the thread sleeps with nothing to watch.
const IDLE: Duration = Duration::from_secs(3600);

/// What runs when a request's time is up.
type Expiry = Box<dyn FnOnce() + Send>;

struct Entry {
    timeout: Duration,
    deadline: Instant,
    /// The most the request may last, progress or not.
    latest: Instant,
    /// Questions waiting for the host now, and since when the clock stands still.
    asking: u32,
    since: Option<Instant>,
    expire: Expiry,
}

#[derive(Default)]
struct State {
    entries: HashMap<u64, Entry>,
    ended: bool,
}

/// The deadlines, and the thread that watches them.
#[derive(Default)]
pub struct Clock {
    state: Mutex<State>,
    wake: Condvar,
}

impl Clock {
    /// Starts the clock's thread; it runs until [`Clock::stop`].
    pub fn start() -> std::io::Result<Arc<Clock>> {
        let clock = Arc::new(Clock::default());
        let watched = Arc::clone(&clock);
        std::thread::Builder::new()
            .name("umcp-bridge-clock".into())
            .spawn(move || watched.run())?;
        Ok(clock)
    }

    /// Watches request `key`, which has `timeout`; `expire` runs once it is up.
    pub fn watch(&self, key: u64, timeout: Duration, expire: impl FnOnce() + Send + 'static) {
        let now = Instant::now();
        let entry = Entry {
            timeout,
            deadline: now + timeout,
            latest: now + timeout.saturating_mul(PROGRESS_FACTOR),
            asking: 0,
            since: None,
            expire: Box::new(expire),
        };
        lock(&self.state).entries.insert(key, entry);
        self.wake.notify_one();
    }

    /// The server reported progress on `key`: its time starts again, within its total.
    pub fn progress(&self, key: u64) {
        if let Some(entry) = lock(&self.state).entries.get_mut(&key) {
            entry.deadline = (Instant::now() + entry.timeout).min(entry.latest);
        }
    }

    /// A question of `key` waits for the host: the clock stands still until it is answered.
    pub fn pause(&self, key: u64) {
        if let Some(entry) = lock(&self.state).entries.get_mut(&key) {
            entry.asking += 1;
            entry.since.get_or_insert_with(Instant::now);
        }
    }

    /// A question of `key` was answered (or given up).
    pub fn resume(&self, key: u64) {
        if let Some(entry) = lock(&self.state).entries.get_mut(&key) {
            entry.asking = entry.asking.saturating_sub(1);
            if entry.asking == 0 {
                if let Some(since) = entry.since.take() {
                    let stood = since.elapsed();
                    entry.deadline += stood;
                    entry.latest += stood;
                }
            }
        }
        self.wake.notify_one();
    }

    /// Stops watching `key` (it ended).
    pub fn forget(&self, key: u64) {
        lock(&self.state).entries.remove(&key);
    }

    /// Ends the thread.
    pub fn stop(&self) {
        lock(&self.state).ended = true;
        self.wake.notify_one();
    }

    fn run(&self) {
        let mut state = lock(&self.state);
        loop {
            if state.ended {
                return;
            }
            let now = Instant::now();
            let expired: Vec<u64> = state
                .entries
                .iter()
                .filter(|(_, e)| e.asking == 0 && e.deadline <= now)
                .map(|(key, _)| *key)
                .collect();
            if !expired.is_empty() {
                let due: Vec<Entry> = expired
                    .iter()
                    .filter_map(|key| state.entries.remove(key))
                    .collect();
                drop(state);
                for entry in due {
                    (entry.expire)();
                }
                state = lock(&self.state);
                continue;
            }
            let next = state
                .entries
                .values()
                .filter(|e| e.asking == 0)
                .map(|e| e.deadline.saturating_duration_since(now))
                .min()
                .unwrap_or(IDLE);
            state = self
                .wake
                .wait_timeout(state, next)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expired_flag(clock: &Clock, key: u64, timeout: Duration) -> crossbeam_channel::Receiver<()> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        clock.watch(key, timeout, move || {
            let _ = tx.send(());
        });
        rx
    }

    #[test]
    fn a_request_expires_once_its_time_is_up_and_not_while_a_question_waits() {
        let clock = Clock::start().unwrap();
        let quick = expired_flag(&clock, 1, Duration::from_millis(50));
        assert!(quick.recv_timeout(Duration::from_secs(5)).is_ok());
        let asking = expired_flag(&clock, 2, Duration::from_millis(50));
        clock.pause(2);
        assert!(asking.recv_timeout(Duration::from_millis(300)).is_err());
        clock.resume(2);
        assert!(asking.recv_timeout(Duration::from_secs(5)).is_ok());
        let forgotten = expired_flag(&clock, 3, Duration::from_millis(50));
        clock.forget(3);
        assert!(forgotten.recv_timeout(Duration::from_millis(300)).is_err());
        clock.stop();
    }

    #[test]
    fn progress_restarts_the_time_within_ten_timeouts() {
        let clock = Clock::start().unwrap();
        let started = Instant::now();
        let expired = expired_flag(&clock, 1, Duration::from_millis(100));
        for _ in 0..4 {
            std::thread::sleep(Duration::from_millis(60));
            clock.progress(1);
        }
        assert!(expired.recv_timeout(Duration::from_secs(5)).is_ok());
        assert!(started.elapsed() >= Duration::from_millis(300));
        clock.stop();
    }
}
