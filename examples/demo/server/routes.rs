//! The open streams of one HTTP session, and which of them each outgoing message takes.
//!
//! Every stream is written by the thread of the HTTP request that opened it; this module only
//! hands it frames through a channel, so routing never blocks on the network. A stream ends
//! when its sender is dropped: after the response it was waiting for, when its request is
//! abandoned, when a newer GET replaces it, or when the session is deleted.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Mutex;

use umcp::jsonrpc::{Message, RequestId, Response};

use super::lock;

/// What a stream's writer receives: encoded JSON-RPC messages.
pub enum Frame {
    /// A message to write before the stream goes on.
    Event(String),
    /// The response the stream was waiting for; the stream ends after it.
    Last(String),
}

/// One session's streams.
#[derive(Default)]
pub struct Routes {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Keys in opening order, so the first entry of `posts` is the oldest stream.
    next_key: u64,
    /// The streams of POSTed requests still waiting for their response.
    posts: BTreeMap<u64, Post>,
    /// The standalone GET stream.
    get: Option<(u64, Sender<Frame>)>,
    /// Messages that had no stream to go to, oldest first.
    queued: Vec<String>,
    /// Set when the session was deleted: nothing is routed any more.
    closed: bool,
}

struct Post {
    id: RequestId,
    tx: Sender<Frame>,
    /// False for a plain JSON reply, which can carry the response and nothing else.
    event_stream: bool,
}

impl Inner {
    fn key(&mut self) -> u64 {
        self.next_key += 1;
        self.next_key
    }

    /// Hands the queued messages to a stream that just opened.
    fn flush_queue(&mut self, tx: &Sender<Frame>) {
        for json in self.queued.drain(..) {
            let _ = tx.send(Frame::Event(json));
        }
    }

    fn post_key(&self, id: &RequestId) -> Option<u64> {
        self.posts
            .iter()
            .find(|(_, post)| post.id == *id)
            .map(|(key, _)| *key)
    }
}

impl Routes {
    /// Whether the stream of POSTed request `id` is still open.
    pub fn is_open(&self, id: &RequestId) -> bool {
        lock(&self.inner).post_key(id).is_some()
    }

    /// Opens the stream of POSTed request `id`; `None` once the session is gone.
    pub fn open_post(&self, id: RequestId, event_stream: bool) -> Option<(u64, Receiver<Frame>)> {
        let mut inner = lock(&self.inner);
        if inner.closed {
            return None;
        }
        let (tx, rx) = mpsc::channel();
        if event_stream {
            inner.flush_queue(&tx);
        }
        let key = inner.key();
        let post = Post {
            id,
            tx,
            event_stream,
        };
        inner.posts.insert(key, post);
        Some((key, rx))
    }

    /// Opens the standalone GET stream, ending the previous one (a client that reconnects
    /// has given up on it); `None` once the session is gone.
    pub fn open_get(&self) -> Option<(u64, Receiver<Frame>)> {
        let mut inner = lock(&self.inner);
        if inner.closed {
            return None;
        }
        let (tx, rx) = mpsc::channel();
        inner.flush_queue(&tx);
        let key = inner.key();
        inner.get = Some((key, tx));
        Some((key, rx))
    }

    /// Forgets the stream `key` (its writer is done or its client went away).
    pub fn close_stream(&self, key: u64) {
        let mut inner = lock(&self.inner);
        inner.posts.remove(&key);
        if inner.get.as_ref().is_some_and(|(k, _)| *k == key) {
            inner.get = None;
        }
    }

    /// Ends the stream of request `id`, which will get no response.
    pub fn end_request(&self, id: &RequestId) {
        let mut inner = lock(&self.inner);
        if let Some(key) = inner.post_key(id) {
            inner.posts.remove(&key);
        }
    }

    /// Ends every stream and routes nothing from now on: the session was deleted.
    pub fn close(&self) {
        let mut inner = lock(&self.inner);
        inner.closed = true;
        inner.posts.clear();
        inner.get = None;
        inner.queued.clear();
    }

    /// Sends `message` on the stream it belongs on.
    ///
    /// A response goes to the stream of its request, which it ends. Anything else goes to the
    /// stream of the request being handled when it was sent (`origin`), else to the GET
    /// stream, else to the oldest open request stream, else waits for a stream to open.
    pub fn route(&self, message: &Message, origin: Option<&RequestId>) {
        let json = message.encode();
        let mut inner = lock(&self.inner);
        if inner.closed {
            return;
        }
        if let Message::Response(Response { id: Some(id), .. }) = message {
            // Without a stream the client stopped waiting; the response has nowhere to go.
            if let Some(post) = inner.post_key(id).and_then(|key| inner.posts.remove(&key)) {
                let _ = post.tx.send(Frame::Last(json));
            }
            return;
        }
        let own = origin.and_then(|id| {
            let key = inner.post_key(id)?;
            inner.posts.get(&key).filter(|post| post.event_stream)
        });
        let oldest = || inner.posts.values().find(|post| post.event_stream);
        let tx = own
            .map(|post| &post.tx)
            .or(inner.get.as_ref().map(|(_, tx)| tx))
            .or_else(|| oldest().map(|post| &post.tx));
        match tx {
            Some(tx) => {
                // A writer that just failed drops its receiver before it is forgotten; the
                // message is lost with its client.
                let _ = tx.send(Frame::Event(json));
            }
            None => inner.queued.push(json),
        }
    }
}
