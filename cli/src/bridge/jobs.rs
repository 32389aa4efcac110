//! The requests of hosts the bridge is working on, each a [`Job`] on a thread of its own: the
//! host request it answers now, its cancel handle, its clock, and the questions a server asked
//! while it ran.
//!
//! A job answers one host request, but for a stateless-era host the request may change: a
//! server's question becomes an input round (`input_required` with the question and a
//! `requestState` naming the job), the host asks again with its answer, and that retry is
//! what the job answers next, while the server's call went on waiting in between. At most
//! [`MAX_JOBS`] run at once; a request beyond them is refused at once.
//!
//! Lock order: a job's own state, then the table; never the other way round.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use serde_json::{json, Map, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, RequestId, Response};
use umcp::types::{ClientCapabilities, LoggingLevel, ProgressNotificationParams};
use umcp::{CancelHandle, RequestOptions};

use super::clock::Clock;
use super::host::Host;
use super::outbox::{Kind, Shared};
use super::wire::{notification, refusal, Era};
use crate::sync::lock;

/// How many host requests the bridge works on at once, each on a thread.
pub const MAX_JOBS: usize = 64;

/// The library's timeout of a job's requests: long enough never to come first, as the
/// bridge's [`Clock`] times them.
const UNTIMED: Duration = Duration::from_secs(365 * 86_400);

/// The host request a job answers now.
pub struct Current {
    pub id: RequestId,
    /// Where its answer and its notifications go.
    pub reply: Shared,
    /// Its progress token, when the host asked for progress.
    pub progress: Option<Value>,
    /// What the host declared for it: its `_meta` in the stateless era, its `initialize` in
    /// the handshake era.
    pub capabilities: ClientCapabilities,
    /// The level from which a stateless-era request asks for the server's log lines.
    pub log_level: Option<LoggingLevel>,
}

/// A server's question put to a stateless-era host as an input round.
struct Ask {
    key: String,
    method: String,
    params: Value,
    answer: Sender<Value>,
}

#[derive(Default)]
struct State {
    current: Option<Current>,
    /// What the host declared for the last request of the job.
    capabilities: ClientCapabilities,
    asks: Vec<Ask>,
    asked: u32,
    /// The `requestState` of the round the job waits on.
    token: Option<String>,
}

/// One host request the bridge works on.
pub struct Job {
    pub key: u64,
    pub host: Arc<Host>,
    pub method: String,
    pub era: Era,
    /// The server the request went to, once known: a question from it is the job's.
    pub server: OnceLock<String>,
    cancel: CancelHandle,
    stop: Mutex<Option<Sender<()>>>,
    /// Closed once the job is cancelled: what a question's wait selects on.
    pub stopped: Receiver<()>,
    state: Mutex<State>,
    expired: AtomicBool,
    clock: Arc<Clock>,
}

thread_local! {
    /// The job whose server call runs on this thread: a stateless-era server's questions are
    /// answered on the calling thread, so they are known to be its.
    static WORKING: RefCell<Option<Arc<Job>>> = const { RefCell::new(None) };
}

/// The job working on this thread, if any.
pub fn working() -> Option<Arc<Job>> {
    WORKING.with(|w| w.borrow().clone())
}

/// Marks the thread as working on a job until dropped.
pub struct Working(());

impl Drop for Working {
    fn drop(&mut self) {
        WORKING.with(|w| w.borrow_mut().take());
    }
}

impl Job {
    /// Marks this thread as the job's until the guard is dropped.
    pub fn enter(self: &Arc<Job>) -> Working {
        WORKING.with(|w| *w.borrow_mut() = Some(Arc::clone(self)));
        Working(())
    }

    /// The options of the job's requests to a server: its cancel handle, progress sent on
    /// to the host when it asked for it, and the host's own `_meta`.
    pub fn options(self: &Arc<Job>, meta: Option<Map<String, Value>>) -> RequestOptions {
        let mut options = RequestOptions::default()
            .with_timeout(UNTIMED)
            .with_cancel(self.cancel.clone());
        if lock(&self.state)
            .current
            .as_ref()
            .is_some_and(|c| c.progress.is_some())
        {
            let job = Arc::downgrade(self);
            options = options.with_progress(move |p| {
                if let Some(job) = job.upgrade() {
                    job.progress(p);
                }
            });
        }
        match meta {
            Some(meta) => options.with_meta(meta),
            None => options,
        }
    }

    /// What the host declared for the request the job answers (or answered last).
    pub fn capabilities(&self) -> ClientCapabilities {
        lock(&self.state).capabilities.clone()
    }

    /// Where the job's messages go now: the request it answers, or the host's own channel
    /// between two requests.
    pub fn reply(&self) -> Shared {
        match &lock(&self.state).current {
            Some(current) => Arc::clone(&current.reply),
            None => Arc::clone(&self.host.out),
        }
    }

    /// Cancels the job: its server requests and its questions end at once.
    pub fn cancel(&self) {
        self.cancel.cancel();
        lock(&self.stop).take();
    }

    /// Whether the job's time ran out (it was cancelled by its clock).
    pub fn expired(&self) -> bool {
        self.expired.load(Ordering::SeqCst)
    }

    /// Whether the job was cancelled, by the host or its clock.
    pub fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// A progress notification of the server: sent on with the host's token.
    fn progress(&self, params: &ProgressNotificationParams) {
        self.clock.progress(self.key);
        let state = lock(&self.state);
        let Some(current) = &state.current else {
            return;
        };
        let Some(token) = &current.progress else {
            return;
        };
        let mut note = json!({ "progressToken": token, "progress": params.progress });
        if let Some(total) = params.total {
            note["total"] = json!(total);
        }
        if let Some(message) = &params.message {
            note["message"] = json!(message);
        }
        let reply = Arc::clone(&current.reply);
        drop(state);
        reply.send(notification("notifications/progress", note), Kind::Note);
    }
}

#[derive(Default)]
struct Table {
    running: BTreeMap<u64, Arc<Job>>,
    /// The job of each host request being answered, by host and request id.
    by_request: HashMap<(u64, RequestId), u64>,
    /// The job of each input round waiting for its retry, by `requestState`.
    parked: HashMap<String, u64>,
    next: u64,
}

/// Every job.
pub struct Jobs {
    table: Mutex<Table>,
    pub clock: Arc<Clock>,
    /// The server's time of each request.
    timeout: Duration,
    /// Makes `requestState`s of this bridge unguessable by another host.
    nonce: u64,
}

impl Jobs {
    /// The jobs of a bridge whose requests have `timeout` each.
    pub fn new(clock: Arc<Clock>, timeout: Duration) -> Jobs {
        let nonce = std::collections::hash_map::RandomState::new();
        Jobs {
            table: Mutex::new(Table::default()),
            clock,
            timeout,
            nonce: std::hash::BuildHasher::hash_one(&nonce, std::process::id()),
        }
    }

    /// Starts a job answering `current` for `host`; refused when [`MAX_JOBS`] run already.
    pub fn start(
        &self,
        host: &Arc<Host>,
        (method, era): (&str, Era),
        current: Current,
    ) -> Result<Arc<Job>, ErrorObject> {
        let (stop, stopped) = crossbeam_channel::bounded(0);
        let mut table = lock(&self.table);
        if table.running.len() >= MAX_JOBS {
            let why = format!("{MAX_JOBS} requests are in progress already; try again");
            return Err(refusal(ErrorCode::INTERNAL_ERROR, why));
        }
        table.next += 1;
        let key = table.next;
        table.by_request.insert((host.id, current.id.clone()), key);
        let job = Arc::new(Job {
            key,
            host: Arc::clone(host),
            method: method.to_owned(),
            era,
            server: OnceLock::new(),
            cancel: CancelHandle::new(),
            stop: Mutex::new(Some(stop)),
            stopped,
            state: Mutex::new(State {
                capabilities: current.capabilities.clone(),
                current: Some(current),
                ..State::default()
            }),
            expired: AtomicBool::new(false),
            clock: Arc::clone(&self.clock),
        });
        table.running.insert(key, Arc::clone(&job));
        drop(table);
        let timed = Arc::downgrade(&job);
        self.clock.watch(key, self.timeout, move || {
            if let Some(job) = timed.upgrade() {
                job.expired.store(true, Ordering::SeqCst);
                job.cancel();
            }
        });
        Ok(job)
    }

    /// The job answering request `id` of host `host`.
    pub fn find(&self, host: u64, id: &RequestId) -> Option<Arc<Job>> {
        let table = lock(&self.table);
        let key = table.by_request.get(&(host, id.clone()))?;
        table.running.get(key).cloned()
    }

    /// The job a question of `server` (of any server when unknown) most likely belongs to,
    /// when no thread says: the oldest call to it in progress. A handshake-era server asks on
    /// a thread of its own, and over stdio nothing on the wire ties a question to a request.
    pub fn attribute(&self, server: Option<&str>) -> Option<Arc<Job>> {
        let calls = ["tools/call", "prompts/get", "resources/read"];
        let table = lock(&self.table);
        let mut candidates = table.running.values().filter(|job| {
            let same = match (server, job.server.get()) {
                (Some(asker), Some(called)) => asker == called,
                (None, _) => true,
                (Some(_), None) => false,
            };
            same && calls.contains(&job.method.as_str()) && !job.cancelled()
        });
        candidates.next().cloned()
    }

    /// Where a log line of `server` at `level` goes for stateless-era hosts, which hear of
    /// log lines only within their requests: the request of each job working for that server
    /// (or not yet routed) that asked for log lines from a level the line reaches.
    pub fn log_replies(&self, server: &str, level: LoggingLevel) -> Vec<Shared> {
        let jobs = self.all();
        let for_server = jobs
            .iter()
            .filter(|job| job.era == Era::Modern && job.server.get().is_none_or(|s| s == server));
        let wanting = for_server.filter_map(|job| {
            let state = lock(&job.state);
            let current = state.current.as_ref()?;
            let asked = current.log_level.is_some_and(|floor| level >= floor);
            asked.then(|| Arc::clone(&current.reply))
        });
        wanting.collect()
    }

    /// Every job, for shutdown.
    pub fn all(&self) -> Vec<Arc<Job>> {
        lock(&self.table).running.values().cloned().collect()
    }

    /// Puts a server's question to the stateless-era host of `job` as an input round, and
    /// waits for the retry that answers it (up to `wait`, or until the job is cancelled).
    pub fn round(
        &self,
        job: &Arc<Job>,
        (method, params): (&str, Value),
        wait: Duration,
    ) -> Result<Value, ErrorObject> {
        let (answer, answered) = crossbeam_channel::bounded(1);
        {
            let mut state = lock(&job.state);
            state.asked += 1;
            let kind = method.split('/').next().unwrap_or("input");
            let key = format!("{kind}-{}", state.asked);
            state.asks.push(Ask {
                key,
                method: method.to_owned(),
                params,
                answer,
            });
            self.send_round(job, &mut state);
        }
        self.clock.pause(job.key);
        let outcome = crossbeam_channel::select! {
            recv(answered) -> value => value.map_err(|_| {
                refusal(ErrorCode::INTERNAL_ERROR, "the input round ended unanswered")
            }),
            recv(job.stopped) -> _ => Err(refusal(ErrorCode::INTERNAL_ERROR, "the request was cancelled")),
            default(wait) => Err(refusal(
                ErrorCode::INTERNAL_ERROR,
                format!("the host did not answer {method} within {wait:.0?}"),
            )),
        };
        self.clock.resume(job.key);
        outcome
    }

    /// Answers the request the job answers now with an input round holding every question
    /// not yet answered, and parks the job until the retry. Nothing when it is parked already:
    /// the retry will carry the new question on.
    fn send_round(&self, job: &Arc<Job>, state: &mut State) {
        let Some(current) = state.current.take() else {
            return;
        };
        let requests: Map<String, Value> = state
            .asks
            .iter()
            .map(|ask| {
                let request = json!({ "method": ask.method, "params": ask.params });
                (ask.key.clone(), request)
            })
            .collect();
        let token = format!("umcp-{:016x}-{}-{}", self.nonce, job.key, state.asked);
        state.token = Some(token.clone());
        {
            let mut table = lock(&self.table);
            table.by_request.remove(&(job.host.id, current.id.clone()));
            table.parked.insert(token.clone(), job.key);
        }
        let round = json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": token,
        });
        let response = Response::ok(current.id, round);
        current.reply.send(response.into(), Kind::Answer);
    }

    /// The retry of an input round (its `requestState` is `token`): its answers go to the
    /// questions they answer, and it becomes the request the job answers. A question it left
    /// unanswered is asked again at once.
    pub fn resume(
        &self,
        token: &str,
        current: Current,
        responses: &Map<String, Value>,
    ) -> Result<(), ErrorObject> {
        let job = {
            let mut table = lock(&self.table);
            let key = table.parked.remove(token);
            key.and_then(|key| table.running.get(&key).cloned())
        };
        let Some(job) = job else {
            let why = "the input round this request answers has ended (answered, cancelled or \
                       timed out); send the request again without requestState";
            return Err(refusal(ErrorCode::INVALID_PARAMS, why));
        };
        let mut state = lock(&job.state);
        state.token = None;
        state.asks.retain(|ask| match responses.get(&ask.key) {
            Some(answer) => {
                let _ = ask.answer.send(answer.clone());
                false
            }
            None => true,
        });
        lock(&self.table)
            .by_request
            .insert((job.host.id, current.id.clone()), job.key);
        state.capabilities = current.capabilities.clone();
        state.current = Some(current);
        if !state.asks.is_empty() {
            self.send_round(&job, &mut state);
        }
        Ok(())
    }

    /// Ends a job with its outcome: the request it answers gets it (none when it was
    /// cancelled by the host; a timeout when its time ran out). A job parked on an input
    /// round has no request to answer, and its round ends.
    pub fn finish(&self, job: &Arc<Job>, outcome: Option<Result<Value, ErrorObject>>) {
        self.clock.forget(job.key);
        let (current, token) = {
            let mut state = lock(&job.state);
            state.asks.clear();
            (state.current.take(), state.token.take())
        };
        {
            let mut table = lock(&self.table);
            table.running.remove(&job.key);
            if let Some(token) = &token {
                table.parked.remove(token);
            }
            if let Some(current) = &current {
                table.by_request.remove(&(job.host.id, current.id.clone()));
            }
        }
        let outcome = match job.expired() {
            true => Some(Err(refusal(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "the server did not answer {} within {:.0?}",
                    job.method, self.timeout
                ),
            ))),
            false => outcome,
        };
        if let (Some(current), Some(outcome)) = (current, outcome) {
            let response = match outcome {
                Ok(result) => Response::ok(current.id, result),
                Err(error) => Response::err(current.id, error),
            };
            current.reply.send(response.into(), Kind::Answer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::outbox::Queue;
    use umcp::jsonrpc::Message;

    fn setup() -> (Arc<Jobs>, Arc<Host>, crossbeam_channel::Receiver<Message>) {
        let (queue, sent) = Queue::new(16, Duration::from_secs(1));
        let host = Host::new(Arc::new(queue));
        let jobs = Arc::new(Jobs::new(Clock::start().unwrap(), Duration::from_secs(30)));
        (jobs, host, sent)
    }

    fn current(host: &Host, id: i64) -> Current {
        Current {
            id: RequestId::from(id),
            reply: Arc::clone(&host.out),
            progress: None,
            capabilities: ClientCapabilities::default(),
            log_level: None,
        }
    }

    fn result(sent: &crossbeam_channel::Receiver<Message>) -> (RequestId, Value) {
        match sent.recv_timeout(Duration::from_secs(5)) {
            Ok(Message::Response(Response { id, result, .. })) => (id.unwrap(), result.unwrap()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_question_becomes_an_input_round_answered_by_the_retry() {
        let (jobs, host, sent) = setup();
        let job = jobs
            .start(&host, ("tools/call", Era::Modern), current(&host, 1))
            .unwrap();
        let asking = (Arc::clone(&jobs), Arc::clone(&job));
        let question = std::thread::spawn(move || {
            let params = json!({"message": "sure?"});
            asking.0.round(
                &asking.1,
                ("elicitation/create", params),
                Duration::from_secs(5),
            )
        });
        let (id, round) = result(&sent);
        assert_eq!(id, RequestId::from(1));
        assert_eq!(round["resultType"], "input_required");
        let (key, request) = round["inputRequests"]
            .as_object()
            .unwrap()
            .iter()
            .next()
            .unwrap();
        assert_eq!(request["method"], "elicitation/create");
        let token = round["requestState"].as_str().unwrap();
        assert!(jobs.find(host.id, &RequestId::from(1)).is_none());
        let mut answers = Map::new();
        answers.insert(key.clone(), json!({"action": "accept"}));
        jobs.resume(token, current(&host, 2), &answers).unwrap();
        assert_eq!(question.join().unwrap(), Ok(json!({"action": "accept"})));
        assert!(jobs.find(host.id, &RequestId::from(2)).is_some());
        jobs.finish(&job, Some(Ok(json!({"content": []}))));
        assert_eq!(result(&sent).0, RequestId::from(2));
        assert!(jobs.resume(token, current(&host, 3), &answers).is_err());
    }

    #[test]
    fn a_cancelled_job_is_not_answered_and_its_question_ends() {
        let (jobs, host, sent) = setup();
        let job = jobs
            .start(&host, ("tools/call", Era::Modern), current(&host, 7))
            .unwrap();
        jobs.find(host.id, &RequestId::from(7)).unwrap().cancel();
        let asked = jobs.round(&job, ("roots/list", json!({})), Duration::from_secs(5));
        assert!(asked.unwrap_err().message.contains("cancelled"));
        let _round = result(&sent);
        jobs.finish(&job, None);
        assert!(sent.try_recv().is_err());
        assert!(jobs.all().is_empty());
    }
}
