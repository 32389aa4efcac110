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

/// The sizes of the queued notifications, oldest first, and which are [`Lossy`] markers. Only the
/// one writer records here, so the queue holds exactly the newest `queue.len()` of them.
#[derive(Debug, Default)]
pub(crate) struct Queued {
    sizes: VecDeque<(usize, bool)>,
    bytes: usize,
    kept: usize,
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

    /// How many of those queued are not kept markers.
    fn counted(&self) -> usize {
        self.sizes.len() - self.kept
    }

    /// The oldest notification left the queue: its size and whether it was a marker.
    pub(crate) fn pop(&mut self) -> (usize, bool) {
        let Some((size, kept)) = self.sizes.pop_front() else {
            return (0, false);
        };
        self.bytes -= size;
        self.kept -= usize::from(kept);
        (size, kept)
    }

    /// A notification of `size` bytes (a marker when `kept`) joined the queue.
    pub(crate) fn push(&mut self, size: usize, kept: bool) {
        self.sizes.push_back((size, kept));
        self.bytes += size;
        self.kept += usize::from(kept);
    }

    /// The notification `index` places from the front left the queue.
    fn remove(&mut self, index: usize) {
        if let Some((size, kept)) = self.sizes.remove(index) {
            self.bytes -= size;
            self.kept -= usize::from(kept);
        }
    }

    /// A notification went back to the front of the queue.
    fn push_front(&mut self, (size, kept): (usize, bool)) {
        self.sizes.push_front((size, kept));
        self.bytes += size;
        self.kept += usize::from(kept);
    }
}

/// A queue bounded by a count and by [`NOTIFICATION_BYTES`] that drops its oldest unread item
/// for a new one. Items `keep` marks (ends, broken streams) are never dropped or counted: few, so
/// the bound is the count plus a handful. The channel is unbounded: a bounded one preallocates.
pub(crate) struct Lossy<T> {
    rx: Receiver<T>,
    capacity: usize,
    keep: fn(&T) -> bool,
    /// The sending side (gone once closed) and the bytes queued.
    writer: Mutex<(Option<Sender<T>>, Queued)>,
}

impl<T> Lossy<T> {
    pub(crate) fn new(capacity: usize) -> Lossy<T> {
        Lossy::keeping(capacity, |_| false)
    }

    /// A queue that never drops the items `keep` marks.
    pub(crate) fn keeping(capacity: usize, keep: fn(&T) -> bool) -> Lossy<T> {
        let (tx, rx) = crossbeam_channel::unbounded();
        Lossy {
            rx,
            capacity: capacity.max(1),
            keep,
            writer: Mutex::new((Some(tx), Queued::default())),
        }
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
        let kept = (self.keep)(&item);
        let mut dropped = 0;
        while (!kept && queued.counted() >= self.capacity) || !queued.fits(size) {
            if !self.drop_oldest(tx, queued) {
                break;
            }
            dropped += 1;
            queued.sync(tx.len());
        }
        if tx.send(item).is_ok() {
            queued.push(size, kept);
        }
        dropped
    }

    /// Drops the oldest unread item that may go; `false` when none may (or none is left).
    fn drop_oldest(&self, tx: &Sender<T>, queued: &mut Queued) -> bool {
        let Ok(oldest) = self.rx.try_recv() else {
            return false;
        };
        let (oldest_size, _) = queued.pop();
        if !(self.keep)(&oldest) {
            return true;
        }
        // A marker that must not be lost: every item is taken out, the oldest that may go
        // left out, and the rest queued again in their order. Readers take from the front
        // only, so whatever they take meanwhile comes in the same order.
        let mut rest: Vec<T> = self.rx.try_iter().collect();
        // What readers took between the two reads was the front of what is left.
        queued.sync(rest.len());
        let droppable = rest.iter().position(|item| !(self.keep)(item));
        if let Some(index) = droppable {
            rest.remove(index);
            queued.remove(index);
        }
        queued.push_front((oldest_size, true));
        // The writer holds the only sender and the receiver is ours: these sends cannot fail.
        for item in std::iter::once(oldest).chain(rest) {
            let _ = tx.send(item);
        }
        droppable.is_some()
    }

    /// Ends the queue: readers get what is left, then its end.
    pub(crate) fn close(&self) {
        lock(&self.writer).0.take();
    }
}

/// The size of `note` as JSON, counted without building the text.
pub(crate) fn size(note: &ServerNotification) -> usize {
    params_size(note.to_notification().params.as_ref())
}

/// The size of a notification's `params` as JSON, counted without building the text.
pub(crate) fn params_size(params: Option<&serde_json::Value>) -> usize {
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
    let _ = serde_json::to_writer(&mut count, &params);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_items_are_never_dropped_and_the_order_holds() {
        let queue = Lossy::keeping(3, |item: &i32| *item < 0);
        assert_eq!(queue.push(-1, 0), 0);
        assert_eq!(queue.push(1, 0), 0);
        assert_eq!(queue.push(2, 0), 0);
        assert_eq!(queue.push(3, 0), 0, "markers are not counted");
        // Full: the oldest that may go (1) goes, not the marker before it.
        assert_eq!(queue.push(4, 0), 1);
        assert_eq!(queue.push(-2, 0), 0);
        assert_eq!(queue.push(5, 0), 1);
        let read: Vec<i32> = queue.receiver().try_iter().collect();
        assert_eq!(read, [-1, 3, 4, -2, 5]);
        // Bytes count markers too: one too large to sit beside the others makes room.
        queue.push(-3, 0);
        queue.push(6, NOTIFICATION_BYTES);
        assert_eq!(queue.push(-4, 1), 1);
        let read: Vec<i32> = queue.receiver().try_iter().collect();
        assert_eq!(read, [-3, -4]);
    }

    #[test]
    fn bytes_follow_what_is_queued_and_read() {
        let mut queued = Queued::default();
        assert!(
            queued.fits(NOTIFICATION_BYTES * 2),
            "the newest always fits"
        );
        queued.push(NOTIFICATION_BYTES / 2, false);
        queued.push(NOTIFICATION_BYTES / 4, false);
        assert!(!queued.fits(NOTIFICATION_BYTES / 2));
        queued.sync(1); // A reader took the oldest.
        assert!(queued.fits(NOTIFICATION_BYTES / 2));
        queued.pop();
        queued.sync(0);
        assert!(queued.fits(NOTIFICATION_BYTES));
    }
}
