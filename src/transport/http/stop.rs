//! The stop signal of one event-stream reader: raised by `abandon`, `close` or a response
//! arriving elsewhere, it shuts the stream's connection down and wakes the reader.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::socket::{deadline_after, Socket};
use super::streams::lock;

/// A stop signal a reader thread checks on every read and waits on between attempts. Once
/// the connection a stream is read from is attached, stopping also shuts that connection
/// down, so a reader blocked on a silent (or trickling) server returns at once.
#[derive(Debug, Default)]
pub(crate) struct Stop {
    state: Mutex<StopState>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct StopState {
    stopped: bool,
    socket: Option<Socket>,
}

impl Stop {
    pub fn new() -> Arc<Stop> {
        Arc::new(Stop::default())
    }

    pub fn stop(&self) {
        let mut state = lock(&self.state);
        state.stopped = true;
        // Shut down under the lock: once `detach` has returned, the connection may serve
        // another request and must not be touched.
        if let Some(socket) = state.socket.take() {
            socket.shutdown();
        }
        drop(state);
        self.wake.notify_all();
    }

    pub fn is_stopped(&self) -> bool {
        lock(&self.state).stopped
    }

    /// Ties the connection a stream is read from to this signal; a signal already raised
    /// shuts it down at once.
    pub fn attach(&self, socket: Option<Socket>) {
        let Some(socket) = socket else { return };
        let mut state = lock(&self.state);
        if state.stopped {
            socket.shutdown();
        } else {
            state.socket = Some(socket);
        }
    }

    /// Unties the connection before its stream is dropped (it may go back to the pool).
    pub fn detach(&self) {
        lock(&self.state).socket = None;
    }

    /// Sleeps for `duration` unless stopped first; returns whether it was stopped.
    pub fn sleep(&self, duration: Duration) -> bool {
        let until = deadline_after(Instant::now(), duration);
        let mut state = lock(&self.state);
        while !state.stopped {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .wake
                .wait_timeout(state, left)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        state.stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_wakes_a_sleeper() {
        let stop = Stop::new();
        let waker = stop.clone();
        let t = std::thread::spawn(move || waker.sleep(Duration::from_secs(30)));
        stop.stop();
        assert!(t.join().unwrap());
        assert!(stop.sleep(Duration::from_secs(30)), "stays stopped");
    }
}
