//! Answers the server's requests (`ping`, `roots/list`, `sampling/createMessage`,
//! `elicitation/create`): `ping` on the router thread at once, the others with the caller's
//! handlers on a bounded pool of threads. A request JSON-RPC rejects (an id of a type it
//! forbids, a `method` that is not a string) gets `-32600 Invalid Request` from the router,
//! like a ping, and no handler. In the stateless era, which has no server requests, they are
//! dropped unanswered.
//!
//! The pool has [`Options::with_handler_threads`](crate::Options::with_handler_threads)
//! threads, started as they are first needed and kept for the connection's life; as many
//! requests again may wait for one. Beyond that the server gets a JSON-RPC error at once, so
//! a server flooding requests can neither grow the client's threads nor its memory.
//!
//! The router never waits to hand over the replies it gives itself (`ping`, and the error for
//! a saturated pool): a server that stops reading would otherwise stall the reading of its
//! own output, and with it every response, notification and request behind the reply. Over
//! stdio such a reply goes into the transport's queue or is dropped when the queue is full.
//! Over HTTP a reply is a POST the server has to answer, so these replies go through one
//! thread of their own (see [`Lane`]), [`LANE_BOUND`] at a time, and beyond that are dropped:
//! a server that never acknowledges its ping replies costs one thread, not the router.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::jsonrpc::{ErrorCode, ErrorObject, InvalidRequest, Message, Request, Response};
use crate::sync::lock;
use crate::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ListRootsResult,
};

use super::elicitation::ElicitationModes;

use super::era::session::Shared;

pub(crate) type SamplingHandler = Arc<
    dyn Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> + Send + Sync,
>;
pub(crate) type ElicitationHandler =
    Arc<dyn Fn(ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync>;
pub(crate) type RootsHandler = Arc<dyn Fn() -> Result<ListRootsResult, ErrorObject> + Send + Sync>;

/// The client's handlers for the server's requests, and what they declare.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) roots: Option<RootsHandler>,
    pub(crate) sampling: Option<SamplingHandler>,
    /// Whether `sampling.tools` is declared.
    pub(crate) sampling_tools: bool,
    pub(crate) elicitation: Option<ElicitationHandler>,
    /// The modes declared with the elicitation handler.
    pub(crate) elicitation_modes: ElicitationModes,
}

/// How long the reply to a server request may take to hand to the transport.
const REPLY_DEADLINE: Duration = Duration::from_secs(10);

/// How many of the router's own replies may wait for the HTTP reply thread.
const LANE_BOUND: usize = 4;

/// The handler threads of one connection.
pub(crate) struct Pool {
    jobs: Sender<(Weak<Shared>, Request)>,
    queue: Receiver<(Weak<Shared>, Request)>,
    size: usize,
    started: usize,
    /// Held by every handler thread, so `close` can wait for them.
    done: Sender<()>,
    /// The thread sending the router's own replies over HTTP, once started.
    lane: Option<Lane>,
}

/// The thread that sends the router's own replies where sending waits for the server (HTTP).
struct Lane {
    replies: Sender<(Weak<Shared>, Response)>,
}

impl Pool {
    pub(crate) fn new(size: usize, done: Sender<()>) -> Pool {
        let (jobs, queue) = crossbeam_channel::bounded(size.max(1));
        Pool {
            jobs,
            queue,
            size: size.max(1),
            started: 0,
            done,
            lane: None,
        }
    }

    /// Hands over a reply the router gives itself, never waiting for the server: over stdio
    /// into the transport's queue (dropped when it is full), over HTTP to the reply thread
    /// (dropped when [`LANE_BOUND`] replies already wait for it).
    fn send_from_router(&mut self, shared: &Arc<Shared>, response: Response) {
        if !shared.transport.send_waits_for_peer() {
            reply(shared, response, Instant::now());
            return;
        }
        if self.lane.is_none() {
            self.lane = self.start_lane(shared);
        }
        let Some(lane) = &self.lane else {
            log::debug!("no thread to send {}; dropped", reply_to(&response));
            return;
        };
        if let Err(err) = lane.replies.try_send((Arc::downgrade(shared), response)) {
            let (_, response) = err.into_inner();
            log::debug!(
                "the server has not taken the client's last {LANE_BOUND} replies; {} dropped",
                reply_to(&response)
            );
        }
    }

    fn start_lane(&self, shared: &Arc<Shared>) -> Option<Lane> {
        let (replies, queue) = crossbeam_channel::bounded(LANE_BOUND);
        let send = |shared: &Shared, response| reply(shared, response, deadline());
        spawn_worker(shared, "umcp-reply", queue, self.done.clone(), send)
            .then_some(Lane { replies })
    }

    /// Queues `request` for a handler thread; gives it back when the pool is saturated.
    fn submit(&mut self, shared: &Arc<Shared>, request: Request) -> Result<(), Request> {
        if self.started < self.size {
            self.start(shared);
        }
        match self.jobs.try_send((Arc::downgrade(shared), request)) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full((_, request)) | TrySendError::Disconnected((_, request))) => {
                Err(request)
            }
        }
    }

    fn start(&mut self, shared: &Arc<Shared>) {
        let run = |shared: &Shared, request| answer(shared, request, deadline());
        if spawn_worker(
            shared,
            "umcp-handler",
            self.queue.clone(),
            self.done.clone(),
            run,
        ) {
            self.started += 1;
        }
    }
}

/// What `response` answers, for logs.
fn reply_to(response: &Response) -> String {
    match &response.id {
        Some(id) => format!("the reply to request {id}"),
        None => "the reply to an invalid request".into(),
    }
}

/// The deadline of a reply handed over by a pool thread.
fn deadline() -> Instant {
    Instant::now() + REPLY_DEADLINE
}

/// Starts a thread of the pool that runs `work` on what `queue` brings, until the router drops
/// the pool with the connection; it holds `done`, so `close` can wait for it. Whether it
/// started.
fn spawn_worker<T: Send + 'static>(
    shared: &Arc<Shared>,
    name: &str,
    queue: Receiver<(Weak<Shared>, T)>,
    done: Sender<()>,
    work: fn(&Shared, T),
) -> bool {
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _done = done;
            for (weak, item) in queue.iter() {
                if let Some(shared) = weak.upgrade() {
                    work(&shared, item);
                }
            }
        });
    match spawned {
        Ok(handle) => {
            lock(&shared.threads).push(handle);
            true
        }
        Err(err) => {
            log::debug!("could not start a {name} thread: {err}");
            false
        }
    }
}

/// Answers one server request, from the router thread. Every request gets exactly one reply,
/// unless the server cancels it first or the connection is in the stateless era.
pub(crate) fn serve(shared: &Arc<Shared>, pool: &mut Pool, request: Request) {
    // The stateless era has no server requests (input comes through input rounds), and its
    // stdio transport forbids the client to write responses: a server sending one anyway gets
    // no reply, and no handler runs.
    if shared.era.modern_version().is_some() {
        log::debug!(
            "dropping `{}` {}: servers send no requests in the stateless era",
            request.method,
            request.id
        );
        lock(&shared.core.server_requests).remove(&request.id);
        return;
    }
    if request.method == "ping" {
        if let Some(response) = respond(shared, request) {
            pool.send_from_router(shared, response);
        }
        return;
    }
    if let Err(request) = pool.submit(shared, request) {
        log::debug!(
            "too many server requests at once; refusing `{}` {}",
            request.method,
            request.id
        );
        lock(&shared.core.server_requests).remove(&request.id);
        let error = ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            "the client is busy with other requests from this server",
        );
        pool.send_from_router(shared, Response::err(request.id, error));
    }
}

/// Answers a request JSON-RPC rejects with the error it prescribes, from the router thread as
/// it answers a ping: no handler runs, nothing waits for the server, and a flood of them costs
/// what a flood of pings does. Logged at debug only, so a flood does not flood the log.
pub(crate) fn refuse_invalid(shared: &Arc<Shared>, pool: &mut Pool, invalid: &InvalidRequest) {
    if shared.era.modern_version().is_some() {
        log::debug!("dropping an {invalid}: servers send no requests in the stateless era");
        return;
    }
    log::debug!("answering Invalid Request to an {invalid}");
    pool.send_from_router(shared, invalid.reply());
}

fn answer(shared: &Shared, request: Request, deadline: Instant) {
    if let Some(response) = respond(shared, request) {
        reply(shared, response, deadline);
    }
}

/// The reply to one server request; `None` when the server cancelled it meanwhile.
fn respond(shared: &Shared, request: Request) -> Option<Response> {
    let id = request.id.clone();
    let method = request.method.clone();
    // Withdrawn while it waited for a thread: no handler runs (and no user is asked).
    if lock(&shared.core.server_requests).get(&id) == Some(&true) {
        lock(&shared.core.server_requests).remove(&id);
        log::debug!("server cancelled its `{method}` request {id} before it ran; not running it");
        return None;
    }
    let outcome =
        catch_unwind(AssertUnwindSafe(|| dispatch(shared, request))).unwrap_or_else(|_| {
            log::error!("the client's `{method}` handler panicked");
            Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!("the client's `{method}` handler panicked"),
            ))
        });
    let cancelled = lock(&shared.core.server_requests)
        .remove(&id)
        .unwrap_or(false);
    if cancelled {
        // The server withdrew the request; the spec says not to answer it.
        log::debug!("server cancelled its `{method}` request {id}; not replying");
        return None;
    }
    Some(match outcome {
        Ok(result) => Response::ok(id, result),
        Err(error) => Response::err(id, error),
    })
}

fn dispatch(shared: &Shared, request: Request) -> Result<Value, ErrorObject> {
    let options = &shared.options.handlers;
    match request.method.as_str() {
        "ping" => Ok(Value::Object(Default::default())),
        "roots/list" => match &options.roots {
            Some(handler) => encode(handler()?),
            None => Err(not_found(&request.method)),
        },
        "sampling/createMessage" => match &options.sampling {
            Some(handler) => {
                super::sampling::refuse_undeclared_tools(options, request.params.as_ref())?;
                super::sampling::refuse_unbalanced_tools(request.params.as_ref())?;
                encode(handler(decode(request.params)?)?)
            }
            None => Err(not_found(&request.method)),
        },
        "elicitation/create" => match &options.elicitation {
            Some(handler) => {
                super::elicitation::refuse_undeclared_mode(options, request.params.as_ref())?;
                encode(handler(decode(request.params)?)?)
            }
            None => Err(not_found(&request.method)),
        },
        _ => Err(not_found(&request.method)),
    }
}

fn reply(shared: &Shared, response: Response, deadline: Instant) {
    let message = Message::Response(response);
    if let Err(err) = shared.transport.send(&message, deadline) {
        log::debug!("could not answer a server request: {err}");
    }
}

fn decode<T: DeserializeOwned>(params: Option<Value>) -> Result<T, ErrorObject> {
    crate::jsonrpc::decode_value(&params.unwrap_or(Value::Null))
        .map_err(|e| ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("invalid params: {e}")))
}

fn encode<T: Serialize>(result: T) -> Result<Value, ErrorObject> {
    serde_json::to_value(result).map_err(|e| {
        ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("unencodable result: {e}"),
        )
    })
}

fn not_found(method: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: {method}"),
    )
}
