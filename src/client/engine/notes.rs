//! The shared notification queue, kept as the server sent it until a reader asks for it typed.
//!
//! Until the first [`Client::notifications`](crate::Client::notifications), notifications wait
//! undecoded, under the same bounds as the typed queue (the count, and
//! [`NOTIFICATION_BYTES`](crate::NOTIFICATION_BYTES); the oldest goes first). The first reader
//! installs the typed queue ([`Typed`]), which takes what waited, decoded, and everything after.
//! So a program that never reads notifications has no decoder for them, and one that does sees
//! every notification since the connect, as before.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crossbeam_channel::Receiver;

use crate::jsonrpc::Notification;
use crate::sync::lock;
use crate::types::ServerNotification;

use super::queued::{self, Queued};

/// The typed queue as the engine hands notifications to it, installed by the first reader.
pub(crate) trait Typed: Send + Sync {
    /// Queues `note`, `size` bytes as JSON; how many older ones were dropped for it.
    fn push(&self, note: Notification, size: usize) -> usize;

    /// Ends the queue: readers get what is left, then its end.
    fn close(&self);

    /// The receiving end readers take notifications from.
    fn receiver(&self) -> Receiver<ServerNotification>;
}

/// Builds the typed queue holding at most the given count.
pub(crate) type MakeTyped = fn(usize) -> Arc<dyn Typed>;

/// The connection's notification queue.
pub(crate) struct Notes {
    capacity: usize,
    stage: Mutex<Stage>,
}

enum Stage {
    /// No reader yet: what waits, with its sizes, and whether the queue has ended.
    Raw {
        waiting: VecDeque<Notification>,
        sizes: Queued,
        closed: bool,
    },
    /// A reader asked: everything goes to the typed queue.
    Typed(Arc<dyn Typed>),
}

impl Notes {
    /// An empty queue holding at most `capacity` notifications (at least one).
    pub(crate) fn new(capacity: usize) -> Notes {
        Notes {
            capacity: capacity.max(1),
            stage: Mutex::new(Stage::Raw {
                waiting: VecDeque::new(),
                sizes: Queued::default(),
                closed: false,
            }),
        }
    }

    /// How many notifications the queue holds at most.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Queues `note`, dropping the oldest unread ones when the queue is full by count or by
    /// bytes; how many were dropped (none once the queue ended: `note` is dropped instead).
    pub(crate) fn push(&self, note: Notification) -> usize {
        let size = queued::params_size(note.params.as_ref());
        let mut stage = lock(&self.stage);
        let (waiting, sizes) = match &mut *stage {
            Stage::Typed(typed) => return typed.push(note, size),
            Stage::Raw { closed: true, .. } => return 0,
            Stage::Raw { waiting, sizes, .. } => (waiting, sizes),
        };
        let mut dropped = 0;
        while !waiting.is_empty() && (waiting.len() >= self.capacity || !sizes.fits(size)) {
            waiting.pop_front();
            sizes.pop();
            dropped += 1;
        }
        waiting.push_back(note);
        sizes.push(size, false);
        dropped
    }

    /// Ends the queue: readers get what is left, then its end.
    pub(crate) fn close(&self) {
        match &mut *lock(&self.stage) {
            Stage::Typed(typed) => typed.close(),
            Stage::Raw { closed, .. } => *closed = true,
        }
    }

    /// The typed queue, built by `make` on the first call and given what waited so far.
    pub(crate) fn typed(&self, make: MakeTyped) -> Arc<dyn Typed> {
        let mut stage = lock(&self.stage);
        let (waiting, closed) = match &mut *stage {
            Stage::Typed(typed) => return Arc::clone(typed),
            Stage::Raw {
                waiting, closed, ..
            } => (std::mem::take(waiting), *closed),
        };
        let typed = make(self.capacity);
        for note in waiting {
            let size = queued::params_size(note.params.as_ref());
            typed.push(note, size);
        }
        if closed {
            typed.close();
        }
        *stage = Stage::Typed(Arc::clone(&typed));
        typed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::engine::queued::Lossy;

    fn note(n: u64) -> Notification {
        Notification::new(
            "notifications/message",
            Some(serde_json::json!({"level": "info", "data": n})),
        )
    }

    fn typed(capacity: usize) -> Arc<dyn Typed> {
        Arc::new(Lossy::<ServerNotification>::new(capacity))
    }

    #[test]
    fn what_waited_undecoded_reaches_the_first_reader_in_order_within_the_bound() {
        let notes = Notes::new(2);
        assert_eq!(notes.push(note(1)), 0);
        assert_eq!(notes.push(note(2)), 0);
        assert_eq!(notes.push(note(3)), 1, "the oldest goes");
        let reader = notes.typed(typed).receiver();
        assert_eq!(
            notes.push(note(4)),
            1,
            "the typed queue holds the same bound"
        );
        notes.close();
        let read: Vec<_> = reader
            .iter()
            .map(|note| match note {
                ServerNotification::LoggingMessage(message) => message.data.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(read, [serde_json::json!(3), serde_json::json!(4)]);
    }

    #[test]
    fn a_reader_after_the_end_gets_what_is_left_then_the_end() {
        let notes = Notes::new(4);
        notes.push(note(1));
        notes.close();
        assert_eq!(notes.push(note(2)), 0);
        let reader = notes.typed(typed).receiver();
        assert_eq!(reader.iter().count(), 1);
    }
}
