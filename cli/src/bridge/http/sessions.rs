//! The sessions of handshake-era hosts over HTTP (protocol 2025-03-26 to 2025-11-25): each
//! opened by an `initialize`, named by the `Mcp-Session-Id` the bridge gives it, with the
//! stream a host opens with GET for what answers none of its requests, and ended by DELETE.
//! At most [`MAX_SESSIONS`]; a new one beyond them ends the session unused longest.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};
use umcp::jsonrpc::Message;

use crate::bridge::host::Host;
use crate::bridge::outbox::{Channel, Kind};
use crate::sync::lock;

/// How many sessions may be open at once.
pub const MAX_SESSIONS: usize = 64;

/// How many messages wait for a session's GET stream.
const STREAM_QUEUE: usize = 256;

/// The way to a session's GET stream, while one is open.
#[derive(Default)]
pub struct Relay {
    stream: Mutex<Option<Sender<Message>>>,
    wait: std::time::Duration,
}

impl Relay {
    /// A relay whose answers wait up to `wait` for room.
    pub fn new(wait: std::time::Duration) -> Relay {
        Relay {
            stream: Mutex::new(None),
            wait,
        }
    }

    /// Opens the stream: what comes for it from now on is read from the receiver. `None`
    /// when one is open already.
    pub fn open(&self) -> Option<Receiver<Message>> {
        let mut stream = lock(&self.stream);
        if stream.is_some() {
            return None;
        }
        let (tx, rx) = crossbeam_channel::bounded(STREAM_QUEUE);
        *stream = Some(tx);
        Some(rx)
    }

    /// Closes the stream (its connection ended).
    pub fn close(&self) {
        lock(&self.stream).take();
    }
}

impl Channel for Relay {
    fn send(&self, message: Message, kind: Kind) -> bool {
        let Some(stream) = lock(&self.stream).clone() else {
            return false;
        };
        match kind {
            Kind::Answer => stream.send_timeout(message, self.wait).is_ok(),
            Kind::Note => stream.try_send(message).is_ok(),
        }
    }
}

/// One session.
pub struct Session {
    pub id: String,
    pub host: Arc<Host>,
    pub relay: Arc<Relay>,
    used: Mutex<Instant>,
}

/// Every open session.
#[derive(Default)]
pub struct Sessions {
    open: Mutex<Vec<Arc<Session>>>,
}

impl Sessions {
    /// Opens a session whose host's messages go through `relay`; the session unused longest
    /// is ended first when [`MAX_SESSIONS`] are open. Returns it, and the one ended.
    pub fn open(&self, host: Arc<Host>, relay: Arc<Relay>) -> (Arc<Session>, Option<Arc<Session>>) {
        let session = Arc::new(Session {
            id: session_id(),
            host,
            relay,
            used: Mutex::new(Instant::now()),
        });
        let mut open = lock(&self.open);
        let evicted = match open.len() >= MAX_SESSIONS {
            true => {
                let oldest = (0..open.len()).min_by_key(|i| *lock(&open[*i].used));
                oldest.map(|i| open.remove(i))
            }
            false => None,
        };
        open.push(Arc::clone(&session));
        (session, evicted)
    }

    /// The session named `id`, marked used.
    pub fn find(&self, id: &str) -> Option<Arc<Session>> {
        let open = lock(&self.open);
        let session = open.iter().find(|s| s.id == id)?;
        *lock(&session.used) = Instant::now();
        Some(Arc::clone(session))
    }

    /// Ends the session named `id`; it is returned when there was one.
    pub fn end(&self, id: &str) -> Option<Arc<Session>> {
        let mut open = lock(&self.open);
        let at = open.iter().position(|s| s.id == id)?;
        Some(open.remove(at))
    }
}

/// A session id no one can guess: a counter and the time, mixed by the standard library's
/// randomly keyed hasher, twice.
fn session_id() -> String {
    use std::hash::BuildHasher;
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let count = COUNT.fetch_add(1, Ordering::Relaxed);
    let seed = (count, std::time::SystemTime::now(), std::process::id());
    let hash = |salt: u8| std::collections::hash_map::RandomState::new().hash_one((seed, salt));
    format!("{:016x}{:016x}", hash(1), hash(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::outbox::Nowhere;
    use umcp::jsonrpc::Notification;

    #[test]
    fn a_session_is_found_by_its_id_until_it_ends() {
        let sessions = Sessions::default();
        let relay = Arc::new(Relay::new(std::time::Duration::from_secs(1)));
        let (session, evicted) = sessions.open(Host::new(Arc::new(Nowhere)), relay);
        assert!(evicted.is_none());
        assert_eq!(session.id.len(), 32);
        assert!(sessions.find(&session.id).is_some());
        assert!(sessions.find("nope").is_none());
        assert!(sessions.end(&session.id).is_some());
        assert!(sessions.find(&session.id).is_none());
    }

    #[test]
    fn a_relay_carries_messages_only_while_its_stream_is_open() {
        let relay = Relay::new(std::time::Duration::from_millis(10));
        let note = || Message::from(Notification::new("n", None));
        assert!(!relay.send(note(), Kind::Note));
        let stream = relay.open().unwrap();
        assert!(relay.open().is_none(), "one stream at a time");
        assert!(relay.send(note(), Kind::Note));
        assert!(stream.try_recv().is_ok());
        relay.close();
        assert!(!relay.send(note(), Kind::Note));
        assert!(relay.open().is_some());
    }
}
