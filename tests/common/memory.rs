//! An in-memory transport with a scripted fake server, for client tests without processes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use serde_json::{json, Value};
use umcp::jsonrpc::{Message, Notification, Request, RequestId, Response};
use umcp::transport::{Connect, Inbox, Transport};
use umcp::{Closed, Result};

/// What a handler can do: answer, send notifications or requests to the client.
#[derive(Clone)]
pub struct Peer {
    inbox: Inbox,
    next_id: Arc<Mutex<i64>>,
    replies: Arc<Mutex<HashMap<RequestId, Sender<Response>>>>,
}

impl Peer {
    pub fn send(&self, message: Message) {
        self.inbox.deliver(message);
    }

    /// Sends a text as a transport reads it off the wire, for what no [`Message`] can hold (an
    /// id of a type JSON-RPC forbids). Whether the inbox took it.
    pub fn send_text(&self, text: &str) -> bool {
        self.inbox.deliver_text(text).is_ok()
    }

    pub fn respond(&self, id: &RequestId, result: Value) {
        self.send(Response::ok(id.clone(), result).into());
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(Notification::new(method, Some(params)).into());
    }

    /// Sends a request to the client and waits for its answer.
    pub fn request(&self, method: &str, params: Value) -> Response {
        let id = {
            let mut n = self.next_id.lock().unwrap();
            *n += 1;
            RequestId::from(format!("srv-{n}"))
        };
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.replies.lock().unwrap().insert(id.clone(), tx);
        self.send(Request::new(id, method, Some(params)).into());
        rx.recv_timeout(Duration::from_secs(5))
            .expect("client answered")
    }

    /// Fails request `id` on the client's side, as a transport does when the stream that was
    /// to carry its response broke.
    pub fn fail(&self, id: &RequestId, error: umcp::Error) {
        self.inbox.fail(id.clone(), error);
    }

    pub fn close(&self, reason: &str) {
        self.inbox.closed(Closed {
            reason: reason.into(),
            ..Closed::default()
        });
    }
}

pub type Handler = Arc<dyn Fn(&Peer, &Request) -> Option<Value> + Send + Sync>;

/// A fake server: method handlers plus a log of everything the client sent.
#[derive(Clone)]
pub struct FakeServer {
    handlers: Arc<Mutex<HashMap<String, Handler>>>,
    pub received: Arc<Mutex<Vec<Message>>>,
    pub init_result: Arc<Mutex<Value>>,
    /// How long the transport takes to hand a request over (like HTTP waiting on credentials).
    pub send_delay: Arc<Mutex<Duration>>,
    /// Whether the transport only queues what it sends (like stdio) rather than wait for the
    /// server (like HTTP): the client then sends cancellations on the caller's thread.
    pub queued_sends: Arc<AtomicBool>,
    /// What `describe` says: the server's key in the client's cache of era verdicts.
    name: Arc<str>,
    /// How many connections have ended with everything the client sent recorded.
    ended: Arc<(Mutex<usize>, Condvar)>,
}

impl FakeServer {
    pub fn new() -> FakeServer {
        FakeServer::named("memory")
    }

    /// A fake server that describes itself as `name` (its own entry in the verdict cache).
    pub fn named(name: &str) -> FakeServer {
        let server = FakeServer {
            name: name.into(),
            handlers: Arc::default(),
            received: Arc::default(),
            send_delay: Arc::default(),
            queued_sends: Arc::default(),
            ended: Arc::default(),
            init_result: Arc::new(Mutex::new(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": true}, "resources": {"subscribe": true},
                                  "prompts": {}, "logging": {}, "completions": {}},
                "serverInfo": {"name": "fake", "version": "1.0.0"},
                "instructions": "be nice",
            }))),
        };
        let init = server.init_result.clone();
        server.on("initialize", move |_, _| Some(init.lock().unwrap().clone()));
        server.on("ping", |_, _| Some(json!({})));
        server
    }

    /// Registers a handler; returning `None` means "answer later or never".
    pub fn on(
        &self,
        method: &str,
        handler: impl Fn(&Peer, &Request) -> Option<Value> + Send + Sync + 'static,
    ) -> &FakeServer {
        self.handlers
            .lock()
            .unwrap()
            .insert(method.into(), Arc::new(handler));
        self
    }

    /// Notifications the client sent with this method.
    pub fn notifications(&self, method: &str) -> Vec<Value> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter_map(|m| match m {
                Message::Notification(n) if n.method == method => {
                    Some(n.params.clone().unwrap_or(Value::Null))
                }
                _ => None,
            })
            .collect()
    }

    /// Waits until `count` connections have ended (the client closed its side) and all that
    /// the client sent on them is in `received`.
    // Not every test binary that includes this file waits for the end of a connection.
    #[allow(dead_code)]
    pub fn wait_ended(&self, count: usize, timeout: Duration) -> bool {
        let (ended, changed) = &*self.ended;
        let guard = ended.lock().unwrap();
        let (guard, _) = changed
            .wait_timeout_while(guard, timeout, |n| *n < count)
            .unwrap();
        *guard >= count
    }

    /// Waits until a notification with this method arrives.
    pub fn wait_notification(&self, method: &str, timeout: Duration) -> Option<Value> {
        let until = Instant::now() + timeout;
        while Instant::now() < until {
            if let Some(v) = self.notifications(method).pop() {
                return Some(v);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        None
    }
}

impl Connect for FakeServer {
    fn connect(&self, inbox: Inbox) -> Result<Box<dyn Transport>> {
        let (tx, rx) = crossbeam_channel::unbounded::<Message>();
        let peer = Peer {
            inbox: inbox.clone(),
            next_id: Arc::default(),
            replies: Arc::default(),
        };
        let server = self.clone();
        let worker_peer = peer.clone();
        std::thread::spawn(move || serve(server, worker_peer, rx));
        Ok(Box::new(MemoryTransport {
            send_delay: self.send_delay.clone(),
            queued_sends: self.queued_sends.clone(),
            tx: Mutex::new(Some(tx)),
            peer,
            closed: AtomicBool::new(false),
        }))
    }

    fn describe(&self) -> String {
        self.name.to_string()
    }
}

fn serve(server: FakeServer, peer: Peer, rx: Receiver<Message>) {
    for message in rx.iter() {
        server.received.lock().unwrap().push(message.clone());
        match message {
            Message::Request(req) => {
                let handler = server.handlers.lock().unwrap().get(&req.method).cloned();
                let peer = peer.clone();
                // Each request on its own thread, like a server that works concurrently.
                std::thread::spawn(move || match handler {
                    Some(h) => {
                        if let Some(result) = h(&peer, &req) {
                            peer.respond(&req.id, result);
                        }
                    }
                    None => peer.send(
                        Response::err(
                            req.id.clone(),
                            umcp::jsonrpc::ErrorObject::new(
                                umcp::jsonrpc::ErrorCode::METHOD_NOT_FOUND,
                                "nope",
                            ),
                        )
                        .into(),
                    ),
                });
            }
            Message::Response(resp) => {
                if let Some(id) = &resp.id {
                    if let Some(tx) = peer.replies.lock().unwrap().remove(id) {
                        let _ = tx.send(resp);
                    }
                }
            }
            Message::Notification(_) => {}
        }
    }
    let (ended, changed) = &*server.ended;
    *ended.lock().unwrap() += 1;
    changed.notify_all();
}

pub struct MemoryTransport {
    send_delay: Arc<Mutex<Duration>>,
    queued_sends: Arc<AtomicBool>,
    tx: Mutex<Option<Sender<Message>>>,
    peer: Peer,
    closed: AtomicBool,
}

impl Transport for MemoryTransport {
    fn send(&self, message: &Message, _deadline: Instant) -> Result<()> {
        if matches!(message, Message::Request(_)) {
            let delay = *self.send_delay.lock().unwrap();
            std::thread::sleep(delay);
        }
        match self.tx.lock().unwrap().as_ref() {
            Some(tx) => {
                let _ = tx.send(message.clone());
                Ok(())
            }
            None => Err(umcp::Error::Closed(Arc::new(Closed {
                reason: "closed".into(),
                ..Closed::default()
            }))),
        }
    }

    fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            self.tx.lock().unwrap().take();
            self.peer.close("closed by client");
        }
    }

    fn send_waits_for_peer(&self) -> bool {
        !self.queued_sends.load(Ordering::SeqCst)
    }

    fn kind(&self) -> &'static str {
        "memory"
    }
}
