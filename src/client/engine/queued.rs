//! The bytes the unread notifications hold: the queue is bounded by a count and by
//! [`NOTIFICATION_BYTES`], so a server sending large notifications that nobody reads cannot
//! make the client hold the count times the largest message.

use std::collections::VecDeque;
use std::io;
use std::sync::Mutex;

use crossbeam_channel::{Receiver, Sender};

use crate::sync::lock;
use crate::types::ServerNotification;

/// The most bytes (their size as JSON) the unread notifications may hold before the oldest
/// are dropped, as past the count. The newest is always kept, whatever its size.
///
/// See the example on [`Client::notifications`](crate::Client::notifications).
pub const NOTIFICATION_BYTES: usize = 16 << 20;

/// The sizes of the notifications in the queue, oldest first.
///
/// The queue is first in, first out, and only its one writer records sizes here, so the
/// queue holds exactly the newest `queue.len()` notifications recorded: what readers took
/// since is dropped from the front by [`Queued::sync`].
#[derive(Debug, Default)]
pub(crate) struct Queued {
    sizes: VecDeque<usize>,
    bytes: usize,
}

impl Queued {
    /// Forgets the notifications read since, the queue now holding `len`.
    pub(crate) fn sync(&mut self, len: usize) {
        while self.sizes.len() > len {
            self.pop();
        }
    }

    /// Whether a notification of `size` bytes fits beside those queued.
    pub(crate) fn fits(&self, size: usize) -> bool {
        self.sizes.is_empty() || self.bytes.saturating_add(size) <= NOTIFICATION_BYTES
    }

    /// The oldest notification left the queue.
    pub(crate) fn pop(&mut self) {
        if let Some(size) = self.sizes.pop_front() {
            self.bytes -= size;
        }
    }

    /// A notification of `size` bytes joined the queue.
    pub(crate) fn push(&mut self, size: usize) {
        self.sizes.push_back(size);
        self.bytes += size;
    }
}

/// A queue bounded by a count and by [`NOTIFICATION_BYTES`] that drops its oldest unread
/// item to make room for a new one: the client's notification queue and every
/// subscription's. Writers take turns (the sizes must follow the queue's order); readers take
/// from [`Lossy::receiver`] at will, and see the end of the queue once it is closed and read.
///
/// The channel underneath is unbounded and the count checked here: a bounded one would
/// allocate all of its capacity up front (and `usize::MAX` would not fit at all).
pub(crate) struct Lossy<T> {
    rx: Receiver<T>,
    capacity: usize,
    /// The sending side (gone once closed) and the bytes queued.
    writer: Mutex<(Option<Sender<T>>, Queued)>,
}

impl<T> Lossy<T> {
    pub(crate) fn new(capacity: usize) -> Lossy<T> {
        let (tx, rx) = crossbeam_channel::unbounded();
        Lossy {
            rx,
            capacity: capacity.max(1),
            writer: Mutex::new((Some(tx), Queued::default())),
        }
    }

    /// How many items the queue holds at most.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    pub(crate) fn receiver(&self) -> &Receiver<T> {
        &self.rx
    }

    /// Queues `item` of `size` bytes; how many older ones were dropped for it (none once
    /// closed: the item is dropped instead).
    pub(crate) fn push(&self, item: T, size: usize) -> usize {
        let mut writer = lock(&self.writer);
        let (Some(tx), queued) = &mut *writer else {
            return 0;
        };
        queued.sync(tx.len());
        let mut dropped = 0;
        while tx.len() >= self.capacity || !queued.fits(size) {
            match self.rx.try_recv() {
                Ok(_) => {
                    queued.pop();
                    dropped += 1;
                }
                Err(_) => break,
            }
            queued.sync(tx.len());
        }
        if tx.send(item).is_ok() {
            queued.push(size);
        }
        dropped
    }

    /// Ends the queue: readers get what is left, then its end.
    pub(crate) fn close(&self) {
        lock(&self.writer).0.take();
    }
}

/// The size of `note` as JSON, counted without building the text.
pub(crate) fn size(note: &ServerNotification) -> usize {
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let params = note.to_notification().params;
    let _ = serde_json::to_writer(&mut count, &params);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_follow_what_is_queued_and_read() {
        let mut queued = Queued::default();
        assert!(
            queued.fits(NOTIFICATION_BYTES * 2),
            "the newest always fits"
        );
        queued.push(NOTIFICATION_BYTES / 2);
        queued.push(NOTIFICATION_BYTES / 4);
        assert!(!queued.fits(NOTIFICATION_BYTES / 2));
        queued.sync(1); // A reader took the oldest.
        assert!(queued.fits(NOTIFICATION_BYTES / 2));
        queued.pop();
        queued.sync(0);
        assert!(queued.fits(NOTIFICATION_BYTES));
    }
}
