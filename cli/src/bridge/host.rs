//! A host of the bridge: one connection to the MCP client the bridge serves (its stdio, or an
//! HTTP session), what it declared when it opened a handshake-era session, and the requests
//! the bridge sent it on a server's behalf, waiting for its answers.
//!
//! [`Hosts`] holds every host the bridge serves, for what goes to all of them (a list that
//! changed, a server's log line) and for a server's question that no request of a host can
//! carry.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use serde_json::Value;
use umcp::jsonrpc::{ErrorCode, ErrorObject, Request, RequestId, Response};
use umcp::types::{ClientCapabilities, LoggingLevel};

use super::outbox::{Channel, Kind, Shared};
use super::wire::refusal;
use crate::sync::lock;

/// How many requests the bridge may have sent one host and not yet been answered: each is a
/// server's question waiting on a thread.
pub const MAX_ASKED: usize = 64;

/// What a handshake-era host declared in `initialize`.
#[derive(Clone, Debug, Default)]
pub struct Handshake {
    /// The host's capabilities.
    pub capabilities: ClientCapabilities,
}

/// One host.
pub struct Host {
    /// A number, for logs.
    pub id: u64,
    /// Where the messages that answer none of its requests go (stdout; an HTTP session's GET
    /// stream).
    pub out: Shared,
    handshake: Mutex<Option<Handshake>>,
    asked: Mutex<HashMap<RequestId, Sender<Result<Value, ErrorObject>>>>,
    next_id: AtomicI64,
    /// The level from which the servers' log lines reach it (`logging/setLevel`); all of them
    /// until it sets one.
    level: Mutex<Option<LoggingLevel>>,
    gone: AtomicBool,
}

impl Host {
    /// A host whose unrelated messages go to `out`.
    pub fn new(out: Shared) -> Arc<Host> {
        static HOSTS: AtomicU64 = AtomicU64::new(1);
        Arc::new(Host {
            id: HOSTS.fetch_add(1, Ordering::Relaxed),
            out,
            handshake: Mutex::new(None),
            asked: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            level: Mutex::new(None),
            gone: AtomicBool::new(false),
        })
    }

    /// What it declared in `initialize`, once it sent one.
    pub fn handshake(&self) -> Option<Handshake> {
        lock(&self.handshake).clone()
    }

    /// Records its `initialize`.
    pub fn set_handshake(&self, handshake: Handshake) {
        *lock(&self.handshake) = Some(handshake);
    }

    /// Records its `logging/setLevel`.
    pub fn set_level(&self, level: LoggingLevel) {
        *lock(&self.level) = Some(level);
    }

    /// Whether a log line of `level` reaches it.
    pub fn wants_log(&self, level: LoggingLevel) -> bool {
        lock(&self.level).is_none_or(|floor| level >= floor)
    }

    /// Whether its connection ended.
    pub fn is_gone(&self) -> bool {
        self.gone.load(Ordering::SeqCst)
    }

    /// Sends it a request through `via` and waits for its answer, up to `wait`, or until
    /// `stop` is closed (the request that carried the question was cancelled).
    pub fn ask(
        &self,
        via: &dyn Channel,
        (method, params): (&str, Value),
        stop: &Receiver<()>,
        wait: Duration,
    ) -> Result<Value, ErrorObject> {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = crossbeam_channel::bounded(1);
        {
            let mut asked = lock(&self.asked);
            if self.is_gone() {
                return Err(refusal(ErrorCode::INTERNAL_ERROR, "the host is gone"));
            }
            if asked.len() >= MAX_ASKED {
                let why = format!("{MAX_ASKED} questions already wait for the host");
                return Err(refusal(ErrorCode::INTERNAL_ERROR, why));
            }
            asked.insert(id.clone(), tx);
        }
        let request = Request::new(id.clone(), method, Some(params));
        let answer = match via.send(request.into(), Kind::Answer) {
            true => crossbeam_channel::select! {
                recv(rx) -> answer => answer.unwrap_or_else(|_| {
                    Err(refusal(ErrorCode::INTERNAL_ERROR, "the host went away"))
                }),
                recv(stop) -> _ => Err(refusal(ErrorCode::INTERNAL_ERROR, "the request was cancelled")),
                default(wait) => Err(refusal(
                    ErrorCode::INTERNAL_ERROR,
                    format!("the host did not answer {method} within {wait:.0?}"),
                )),
            },
            false => Err(refusal(
                ErrorCode::INTERNAL_ERROR,
                "the host could not be reached",
            )),
        };
        lock(&self.asked).remove(&id);
        answer
    }

    /// Hands the host's response to the question waiting for it; false when none waits (an
    /// answer too late, or to nothing the bridge asked).
    pub fn answered(&self, response: Response) -> bool {
        let Some(id) = response.id else {
            return false;
        };
        match lock(&self.asked).remove(&id) {
            Some(waiting) => waiting.send(response.result).is_ok(),
            None => false,
        }
    }

    /// Ends the host: the questions waiting for it fail at once.
    pub fn end(&self) {
        self.gone.store(true, Ordering::SeqCst);
        lock(&self.asked).clear();
    }
}

/// Every host the bridge serves.
#[derive(Default)]
pub struct Hosts {
    hosts: Mutex<Vec<Weak<Host>>>,
}

impl Hosts {
    /// Adds a host.
    pub fn add(&self, host: &Arc<Host>) {
        let mut hosts = lock(&self.hosts);
        hosts.retain(|h| h.strong_count() > 0);
        hosts.push(Arc::downgrade(host));
    }

    /// The hosts still connected, oldest first.
    pub fn all(&self) -> Vec<Arc<Host>> {
        lock(&self.hosts)
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|h| !h.is_gone())
            .collect()
    }

    /// The handshake-era hosts, newest first: where a server's question goes when no request
    /// carries it.
    pub fn sessions(&self) -> Vec<Arc<Host>> {
        let mut hosts: Vec<Arc<Host>> = self
            .all()
            .into_iter()
            .filter(|h| h.handshake().is_some())
            .collect();
        hosts.reverse();
        hosts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::outbox::Queue;
    use umcp::jsonrpc::Message;

    #[test]
    fn a_question_is_answered_by_the_response_with_its_id() {
        let (queue, sent) = Queue::new(4, Duration::from_secs(1));
        let host = Host::new(Arc::new(queue));
        let (_stop, stop) = crossbeam_channel::bounded::<()>(0);
        let asker = Arc::clone(&host);
        let question = std::thread::spawn(move || {
            let params = serde_json::json!({});
            asker.ask(
                &*asker.out,
                ("roots/list", params),
                &stop,
                Duration::from_secs(5),
            )
        });
        let Ok(Message::Request(request)) = sent.recv_timeout(Duration::from_secs(5)) else {
            panic!("no request was sent");
        };
        assert_eq!(request.method, "roots/list");
        assert!(!host.answered(Response::ok(RequestId::from(999), Value::Null)));
        let roots = serde_json::json!({"roots": []});
        assert!(host.answered(Response::ok(request.id, roots.clone())));
        assert_eq!(question.join().unwrap(), Ok(roots));
    }

    #[test]
    fn a_question_ends_when_its_request_is_cancelled_or_the_host_goes() {
        let (queue, _sent) = Queue::new(4, Duration::from_secs(1));
        let host = Host::new(Arc::new(queue));
        let (stop_tx, stop) = crossbeam_channel::bounded::<()>(0);
        drop(stop_tx);
        let asked = host.ask(
            &*host.out,
            ("x", Value::Null),
            &stop,
            Duration::from_secs(5),
        );
        assert!(asked.unwrap_err().message.contains("cancelled"));
        host.end();
        let (_keep, stop) = crossbeam_channel::bounded::<()>(0);
        let asked = host.ask(
            &*host.out,
            ("x", Value::Null),
            &stop,
            Duration::from_secs(5),
        );
        assert!(asked.unwrap_err().message.contains("gone"));
    }
}
