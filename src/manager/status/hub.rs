//! The manager's two queues, of tagged notifications and of status events, and the hub that
//! holds their senders until the manager closes.

use std::sync::Mutex;

use crossbeam_channel::{Receiver, Sender, TrySendError};

use super::{ManagerNotifications, ServerStatus, StatusEvent, StatusEvents, TaggedNotification};
use crate::sync::lock;

/// A bounded queue that keeps the newest items: pushing onto a full queue drops the oldest.
pub(crate) struct Queue<T> {
    tx: Sender<T>,
    rx: Receiver<T>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue {
            tx: self.tx.clone(),
            rx: self.rx.clone(),
        }
    }
}

impl<T> Queue<T> {
    fn new(capacity: usize) -> Queue<T> {
        let (tx, rx) = crossbeam_channel::bounded(capacity);
        Queue { tx, rx }
    }

    pub(crate) fn push(&self, item: T) {
        let mut item = item;
        loop {
            match self.tx.try_send(item) {
                Ok(()) => return,
                Err(TrySendError::Full(back)) => {
                    let _ = self.rx.try_recv();
                    item = back;
                }
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
    }
}

/// The two queues of a manager. Closing the hub drops its senders, so readers see the end
/// once the clients holding the remaining ones are gone.
pub(crate) struct Hub {
    notes: Mutex<Option<Queue<TaggedNotification>>>,
    events: Mutex<Option<Queue<StatusEvent>>>,
    notes_rx: Receiver<TaggedNotification>,
    events_rx: Receiver<StatusEvent>,
}

impl Hub {
    pub(crate) fn new(capacity: usize) -> Hub {
        let notes = Queue::new(capacity);
        let events = Queue::new(capacity);
        Hub {
            notes_rx: notes.rx.clone(),
            events_rx: events.rx.clone(),
            notes: Mutex::new(Some(notes)),
            events: Mutex::new(Some(events)),
        }
    }

    /// The notification queue, for one connection's notification callback.
    pub(crate) fn notes(&self) -> Option<Queue<TaggedNotification>> {
        lock(&self.notes).clone()
    }

    pub(crate) fn event(&self, server: &str, status: &ServerStatus) {
        if let Some(events) = lock(&self.events).as_ref() {
            events.push(StatusEvent {
                server: server.to_owned(),
                status: status.clone(),
            });
        }
    }

    pub(crate) fn notifications(&self) -> ManagerNotifications {
        ManagerNotifications {
            rx: self.notes_rx.clone(),
        }
    }

    pub(crate) fn status_events(&self) -> StatusEvents {
        StatusEvents {
            rx: self.events_rx.clone(),
        }
    }

    pub(crate) fn shut(&self) {
        lock(&self.notes).take();
        lock(&self.events).take();
    }
}
