//! Answers the server's requests: those the client answers at once (`ping`) on the router
//! thread, the others on a bounded pool of handler threads, each by what the layers above
//! plug in ([`Serve`]). A request JSON-RPC rejects (an id of a type it forbids, a `method`
//! that is not a string) gets `-32600 Invalid Request` from the router, like a ping, and no
//! handler. When [`Serve::takes_requests`] says no (the stateless era), they are dropped
//! unanswered.
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

use serde_json::Value;

use crate::jsonrpc::{ErrorCode, ErrorObject, InvalidRequest, Message, Request, Response};
use crate::queue::{self, Receiver, Sender, TrySendError};
use crate::sync::lock;

use super::connection::Connection;

/// How long the reply to a server request may take to hand to the transport.
const REPLY_DEADLINE: Duration = Duration::from_secs(10);

/// How many of the router's own replies may wait for the HTTP reply thread.
const LANE_BOUND: usize = 4;

/// What answers the server's requests, plugged in by the layers above.
pub(crate) trait Serve: Send + Sync {
    /// Whether the server's requests are answered at all; when not, each is dropped
    /// unanswered and no handler runs.
    fn takes_requests(&self) -> bool;

    /// The result of a request `method` answered at once, on the router thread, without a
    /// handler thread (`ping`); `None` for a request for the pool.
    fn at_once(&self, method: &str) -> Option<Value>;

    /// The answer to one server request, on a handler thread.
    fn answer(&self, method: &str, params: Option<Value>) -> Result<Value, ErrorObject>;
}

/// One job of the pool: the request, and the connection it came on (weakly, so that a queued
/// job does not keep a closed connection alive).
type Job<T> = (Weak<Connection>, T);

/// How the server's requests are answered on one connection, from the router thread.
pub(crate) struct Pool {
    serve: Arc<dyn Serve>,
    /// The handler threads, when the client has handlers that need them; without, every
    /// request is refused at once from the router thread, as a ping is answered.
    threads: Option<Box<dyn Threads>>,
    /// Held by every thread of the pool, so `close` can wait for them.
    done: Sender<()>,
    /// The thread sending the router's own replies over HTTP, once started.
    lane: Option<Lane>,
}

/// Handler threads, as the router hands them requests.
pub(crate) trait Threads: Send {
    /// Queues `request` for a handler thread; gives it back when the pool is saturated.
    fn submit(&mut self, conn: &Arc<Connection>, request: Request) -> Result<(), Request>;
}

/// Starts the handler threads of a connection: [`handler_threads`], set by the builders of
/// the client's handlers, so that a client with none has none of this code.
pub(crate) type StartThreads = fn(usize, Arc<dyn Serve>, Sender<()>) -> Box<dyn Threads>;

/// At most `size` handler threads answering by `serve`, each started when first needed.
pub(crate) fn handler_threads(
    size: usize,
    serve: Arc<dyn Serve>,
    done: Sender<()>,
) -> Box<dyn Threads> {
    let (jobs, queue) = queue::bounded(size.max(1));
    Box::new(HandlerThreads {
        serve,
        jobs,
        queue,
        size: size.max(1),
        started: 0,
        done,
    })
}

/// The handler threads of one connection.
struct HandlerThreads {
    serve: Arc<dyn Serve>,
    jobs: Sender<Job<Request>>,
    queue: Receiver<Job<Request>>,
    size: usize,
    started: usize,
    /// Held by every handler thread, so `close` can wait for them.
    done: Sender<()>,
}

/// The thread that sends the router's own replies where sending waits for the server (HTTP).
struct Lane {
    replies: Sender<Job<Response>>,
}

impl Pool {
    /// A pool answering by `serve`, on at most `size` threads started by `threads` (none
    /// without it).
    pub(crate) fn new(
        size: usize,
        serve: Arc<dyn Serve>,
        done: Sender<()>,
        threads: Option<StartThreads>,
    ) -> Pool {
        let threads = threads.map(|start| start(size, Arc::clone(&serve), done.clone()));
        Pool {
            serve,
            threads,
            done,
            lane: None,
        }
    }

    /// Answers one server request, from the router thread. Every request gets exactly one
    /// reply, unless the server cancels it first or requests are not taken at all.
    pub(crate) fn serve(&mut self, conn: &Arc<Connection>, request: Request) {
        if !self.serve.takes_requests() {
            log::debug!(
                "dropping `{}` {}: servers send no requests in the stateless era",
                request.method,
                request.id
            );
            lock(&conn.core.server_requests).remove(&request.id);
            return;
        }
        if let Some(result) = self.serve.at_once(&request.method) {
            if let Some(response) = respond(conn, request, |_| Ok(result)) {
                self.send_from_router(conn, response);
            }
            return;
        }
        let Some(threads) = &mut self.threads else {
            // No handler that could take it: refused at once, without a thread.
            let serve = Arc::clone(&self.serve);
            let answer = |request: Request| serve.answer(&request.method, request.params);
            if let Some(response) = respond(conn, request, answer) {
                self.send_from_router(conn, response);
            }
            return;
        };
        if let Err(request) = threads.submit(conn, request) {
            log::debug!(
                "too many server requests at once; refusing `{}` {}",
                request.method,
                request.id
            );
            lock(&conn.core.server_requests).remove(&request.id);
            let error = ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                "the client is busy with other requests from this server",
            );
            self.send_from_router(conn, Response::err(request.id, error));
        }
    }

    /// Answers a request JSON-RPC rejects from the router thread, as a ping is: no handler runs, so
    /// a flood of them costs what pings do (and is logged at debug only).
    pub(crate) fn refuse_invalid(&mut self, conn: &Arc<Connection>, invalid: &InvalidRequest) {
        if !self.serve.takes_requests() {
            log::debug!("dropping an {invalid}: servers send no requests in the stateless era");
            return;
        }
        log::debug!("answering Invalid Request to an {invalid}");
        self.send_from_router(conn, invalid.reply());
    }

    /// Hands over a reply the router gives itself, never waiting for the server: over stdio
    /// into the transport's queue (dropped when it is full), over HTTP to the reply thread
    /// (dropped when [`LANE_BOUND`] replies already wait for it).
    fn send_from_router(&mut self, conn: &Arc<Connection>, response: Response) {
        if !conn.transport.send_waits_for_peer() {
            reply(conn, response, Instant::now());
            return;
        }
        if self.lane.is_none() {
            self.lane = self.start_lane(conn);
        }
        let Some(lane) = &self.lane else {
            log::debug!("no thread to send {}; dropped", reply_to(&response));
            return;
        };
        if let Err(TrySendError::Full((_, response)) | TrySendError::Disconnected((_, response))) =
            lane.replies.try_send((Arc::downgrade(conn), response))
        {
            log::debug!(
                "the server has not taken the client's last {LANE_BOUND} replies; {} dropped",
                reply_to(&response)
            );
        }
    }

    fn start_lane(&self, conn: &Connection) -> Option<Lane> {
        let (replies, queue) = queue::bounded(LANE_BOUND);
        let send = |conn: &Connection, response| reply(conn, response, deadline());
        spawn_worker(conn, "umcp-reply", queue, self.done.clone(), send).then_some(Lane { replies })
    }
}

impl Threads for HandlerThreads {
    fn submit(&mut self, conn: &Arc<Connection>, request: Request) -> Result<(), Request> {
        if self.started < self.size {
            self.start(conn);
        }
        match self.jobs.try_send((Arc::downgrade(conn), request)) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full((_, request)) | TrySendError::Disconnected((_, request))) => {
                Err(request)
            }
        }
    }
}

impl HandlerThreads {
    fn start(&mut self, conn: &Connection) {
        let serve = Arc::clone(&self.serve);
        let run = move |conn: &Connection, request: Request| {
            let deadline = deadline();
            let answered = respond(conn, request, |request| {
                serve.answer(&request.method, request.params)
            });
            if let Some(response) = answered {
                reply(conn, response, deadline);
            }
        };
        if spawn_worker(
            conn,
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
    conn: &Connection,
    name: &str,
    queue: Receiver<Job<T>>,
    done: Sender<()>,
    work: impl Fn(&Connection, T) + Send + 'static,
) -> bool {
    let spawned = crate::threads::spawn(
        name,
        Box::new(move || {
            let _done = done;
            for (weak, item) in queue.iter() {
                if let Some(conn) = weak.upgrade() {
                    work(&conn, item);
                }
            }
        }),
    );
    match spawned {
        Ok(handle) => {
            lock(&conn.threads).push(handle);
            true
        }
        Err(err) => {
            log::debug!("could not start a {name} thread: {err}");
            false
        }
    }
}

/// The reply to one server request, `run` giving its result with panics caught; `None` when
/// the server cancelled it meanwhile.
fn respond(
    conn: &Connection,
    request: Request,
    run: impl FnOnce(Request) -> Result<Value, ErrorObject>,
) -> Option<Response> {
    let id = request.id.clone();
    let method = request.method.clone();
    let server_requests = &conn.core.server_requests;
    // Withdrawn while it waited for a thread: no handler runs (and no user is asked).
    if lock(server_requests).get(&id) == Some(&true) {
        lock(server_requests).remove(&id);
        log::debug!("server cancelled its `{method}` request {id} before it ran; not running it");
        return None;
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| run(request))).unwrap_or_else(|_| {
        log::error!("the client's `{method}` handler panicked");
        Err(ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("the client's `{method}` handler panicked"),
        ))
    });
    let cancelled = lock(server_requests).remove(&id).unwrap_or(false);
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

fn reply(conn: &Connection, response: Response, deadline: Instant) {
    let message = Message::Response(response);
    if let Err(err) = conn.transport.send(&message, deadline) {
        log::debug!("could not answer a server request: {err}");
    }
}
