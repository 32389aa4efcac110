//! A bounded queue between the crate's own threads: a mutex, a condition variable and a ring.
//!
//! The connection's internal hand-offs (the router's work, the handler and sending threads'
//! jobs, a server's exit status and stderr lines, the signals threads give as they end) go
//! through it rather than through crossbeam-channel, whose sending code switches between three
//! channel kinds and so compiles all three for every item type: a program would carry that
//! for each kind of item, about 14 kB apiece. This queue compiles to a few hundred bytes per
//! item type. It does the little those hand-offs need: several senders and receivers, a
//! bound on what waits, waits with a deadline, and an end that every receiver sees.
//!
//! Bounds and policies: at most `capacity` items wait (`capacity` 0 counts as 1); a sender
//! waits for room, gives the item back ([`TrySendError::Full`]) or gives up at its deadline
//! ([`SendTimeoutError::Timeout`]), as it chooses. The queue ends when every [`Sender`] is
//! dropped (receivers then take what is left and see [`Disconnected`]), or at once for
//! receivers when a sender calls [`Sender::close`] (what is left stays for `try_recv`); it
//! refuses items once every [`Receiver`] is dropped.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The queue ended: every sender is gone (or one closed it), or every receiver is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Disconnected;

/// Why [`Sender::try_send`] gave the item back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum TrySendError<T> {
    Full(T),
    Disconnected(T),
}

/// Why [`Sender::send_timeout`] gave the item back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SendTimeoutError<T> {
    Timeout(T),
    Disconnected(T),
}

/// Why [`Receiver::recv_timeout`] returned nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecvTimeoutError {
    Timeout,
    Disconnected,
}

struct State<T> {
    items: VecDeque<T>,
    senders: usize,
    receivers: usize,
    /// Closed by a sender: receivers stop waiting, whatever is left.
    closed: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    /// Signalled when an item arrives or the queue ends.
    filled: Condvar,
    /// Signalled when room frees up or the receivers are gone.
    emptied: Condvar,
    capacity: usize,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The sending side; clones share the queue.
pub(crate) struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving side; clones share the queue (an item goes to one of them).
pub(crate) struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

/// A queue holding at most `capacity` waiting items (at least one).
pub(crate) fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::new(),
            senders: 1,
            receivers: 1,
            closed: false,
        }),
        filled: Condvar::new(),
        emptied: Condvar::new(),
        capacity: capacity.max(1),
    });
    let sender = Sender {
        shared: Arc::clone(&shared),
    };
    (sender, Receiver { shared })
}

impl<T> Sender<T> {
    /// Queues `item` if there is room now.
    pub(crate) fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
        let mut state = self.shared.lock();
        if state.receivers == 0 || state.closed {
            return Err(TrySendError::Disconnected(item));
        }
        if state.items.len() >= self.shared.capacity {
            return Err(TrySendError::Full(item));
        }
        state.items.push_back(item);
        drop(state);
        self.shared.filled.notify_one();
        Ok(())
    }

    /// Queues `item`, waiting up to `timeout` for room.
    pub(crate) fn send_timeout(
        &self,
        item: T,
        timeout: Duration,
    ) -> Result<(), SendTimeoutError<T>> {
        let deadline = Instant::now().checked_add(timeout);
        let mut state = self.shared.lock();
        loop {
            if state.receivers == 0 || state.closed {
                return Err(SendTimeoutError::Disconnected(item));
            }
            if state.items.len() < self.shared.capacity {
                state.items.push_back(item);
                drop(state);
                self.shared.filled.notify_one();
                return Ok(());
            }
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => Duration::MAX,
            };
            if left.is_zero() {
                return Err(SendTimeoutError::Timeout(item));
            }
            state = wait(&self.shared.emptied, state, left);
        }
    }

    /// Ends the queue for its receivers at once, whatever senders are left: a waiting
    /// receiver wakes with [`Disconnected`], and what is left can still be taken with
    /// [`Receiver::try_recv`]. Later sends fail.
    pub(crate) fn close(&self) {
        self.shared.lock().closed = true;
        self.shared.filled.notify_all();
        self.shared.emptied.notify_all();
    }
}

impl<T> Receiver<T> {
    /// Takes the next item, waiting as long as it takes; [`Disconnected`] once the queue ended
    /// and (unless it was closed) is empty.
    pub(crate) fn recv(&self) -> Result<T, Disconnected> {
        match self.recv_timeout(Duration::MAX) {
            Ok(item) => Ok(item),
            Err(_) => Err(Disconnected),
        }
    }

    /// Takes the next item, waiting up to `timeout`.
    pub(crate) fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        let deadline = Instant::now().checked_add(timeout);
        let mut state = self.shared.lock();
        loop {
            if state.closed {
                return Err(RecvTimeoutError::Disconnected);
            }
            if let Some(item) = state.items.pop_front() {
                drop(state);
                self.shared.emptied.notify_one();
                return Ok(item);
            }
            if state.senders == 0 {
                return Err(RecvTimeoutError::Disconnected);
            }
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => Duration::MAX,
            };
            if left.is_zero() {
                return Err(RecvTimeoutError::Timeout);
            }
            state = wait(&self.shared.filled, state, left);
        }
    }

    /// Takes the next item if one waits (also after the queue was closed).
    pub(crate) fn try_recv(&self) -> Option<T> {
        let item = self.shared.lock().items.pop_front();
        if item.is_some() {
            self.shared.emptied.notify_one();
        }
        item
    }

    /// The items as they come, until the queue ends.
    pub(crate) fn iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(move || self.recv().ok())
    }
}

/// Waits on `condvar` for at most `left` (a wait longer than a day is cut to one, and the
/// caller waits again).
fn wait<'a, T>(
    condvar: &Condvar,
    state: MutexGuard<'a, State<T>>,
    left: Duration,
) -> MutexGuard<'a, State<T>> {
    let left = left.min(Duration::from_secs(24 * 3600));
    match condvar.wait_timeout(state, left) {
        Ok((state, _)) => state,
        Err(poisoned) => poisoned.into_inner().0,
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Sender<T> {
        self.shared.lock().senders += 1;
        Sender {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Receiver<T> {
        self.shared.lock().receivers += 1;
        Receiver {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.senders -= 1;
        if state.senders == 0 {
            drop(state);
            self.shared.filled.notify_all();
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.receivers -= 1;
        if state.receivers == 0 {
            drop(state);
            self.shared.emptied.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    #[test]
    fn items_come_in_order_and_the_bound_holds() {
        let (tx, rx) = bounded(2);
        tx.try_send(1).unwrap();
        tx.try_send(2).unwrap();
        assert_eq!(tx.try_send(3), Err(TrySendError::Full(3)));
        assert_eq!(
            tx.send_timeout(3, Duration::from_millis(10)),
            Err(SendTimeoutError::Timeout(3))
        );
        assert_eq!(rx.recv(), Ok(1));
        tx.send_timeout(3, Duration::ZERO).unwrap();
        assert_eq!(rx.try_recv(), Some(2));
        assert_eq!(rx.recv_timeout(Duration::from_millis(1)), Ok(3));
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(1)),
            Err(RecvTimeoutError::Timeout)
        );
    }

    #[test]
    fn the_end_comes_when_the_last_sender_goes_after_what_is_left() {
        let (tx, rx) = bounded(4);
        let other = tx.clone();
        tx.try_send("a").unwrap();
        drop(tx);
        assert_eq!(rx.recv(), Ok("a"));
        let waiter = thread::spawn(move || rx.recv());
        thread::sleep(Duration::from_millis(20));
        drop(other);
        assert_eq!(waiter.join().unwrap(), Err(Disconnected));
    }

    #[test]
    fn closing_wakes_receivers_at_once_and_leaves_the_rest_for_try_recv() {
        let (tx, rx) = bounded(4);
        tx.try_send(1).unwrap();
        tx.close();
        assert_eq!(rx.recv(), Err(Disconnected));
        assert_eq!(rx.try_recv(), Some(1));
        assert_eq!(tx.try_send(2), Err(TrySendError::Disconnected(2)));
    }

    #[test]
    fn a_waiting_sender_gets_room_or_learns_the_receivers_are_gone() {
        let (tx, rx) = bounded(1);
        tx.try_send(0).unwrap();
        let sender = thread::spawn(move || {
            let wait = Duration::from_secs(10);
            [1, 2, 3].map(|n| tx.send_timeout(n, wait))
        });
        // The first waits for the room the receiver makes.
        assert_eq!(rx.recv(), Ok(0));
        assert_eq!(rx.recv(), Ok(1));
        // The last finds the queue full, and waits until the receiver is gone.
        thread::sleep(Duration::from_millis(50));
        drop(rx);
        let [first, _, last] = sender.join().unwrap();
        assert_eq!(first, Ok(()));
        assert_eq!(last, Err(SendTimeoutError::Disconnected(3)));
    }

    #[test]
    fn each_item_goes_to_one_receiver() {
        let (tx, rx) = bounded(8);
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let rx = rx.clone();
                thread::spawn(move || rx.iter().count())
            })
            .collect();
        drop(rx);
        for n in 0..100 {
            tx.send_timeout(n, Duration::from_secs(10)).unwrap();
        }
        drop(tx);
        let total: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
        assert_eq!(total, 100);
    }
}
