//! A few reusable threads that send for a caller who must stay free to hear its cancel handle
//! (or, reopening a subscription, to keep its own deadline), on transports whose `send` may
//! wait for the server (an HTTP POST waits for its status, and often for the whole reply).
//!
//! At most [`SEND_THREADS`] threads, started when first needed; as many jobs again may wait.
//! When all are taken a request is sent on the caller's own thread (its cancel is then heard
//! once the send returns), a subscription's reopening is tried again shortly, and a
//! cancellation notice is dropped with a debug log (the server still gets the late response
//! dropped by the client).
//!
//! A request let go of while still being sent is ended on the server by its sender once it is
//! out, so that no cancellation reaches the server before it: a caller's request as soon as
//! it has been written out ([`Handover`]), while its POST may still wait for a JSON answer; a
//! request of the layers above (a subscription's) once its send returned, when they hear of it
//! ([`Report::Then`]).

use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::jsonrpc::Message;
use crate::queue::{self, Receiver, Sender, TrySendError};
use crate::sync::{deadline_after, lock};
use crate::transport::{written, Transport};

use super::handover::{cancellation, Handover};
use super::pending::{Reply, Slot};

/// How many sending threads a connection has at most.
pub(crate) const SEND_THREADS: usize = 4;

/// How long sending `notifications/cancelled` may take on a transport whose send waits for
/// the server.
pub(crate) const CANCEL_DEADLINE: Duration = Duration::from_secs(5);

/// One send to make.
pub(crate) struct Job {
    pub(crate) message: Message,
    pub(crate) deadline: Instant,
    /// Who to tell how it went.
    pub(crate) report: Report,
}

/// Who hears how a send went.
pub(crate) enum Report {
    /// Nobody: a notice, whose failure is only logged.
    Nobody,
    /// The caller waiting on its slot for request `id`: sent, or failed. When the caller let
    /// go of the request before it was written out, the sender cancels it on the server once
    /// it has been (see [`Handover`]).
    Caller(i64, Arc<Slot>, Arc<Handover>),
    /// Whoever sent it, by calling it back with the transport and the outcome (a
    /// subscription's request, whose success is the server's acknowledgement).
    Then(AfterSend),
}

/// Called back once a send handed to a sending thread returned.
pub(crate) type AfterSend = Box<dyn FnOnce(&dyn Transport, crate::Result<()>) + Send>;

/// The sending threads of one connection.
pub(crate) struct Senders {
    state: Mutex<State>,
    queue: Receiver<Job>,
    transport: Arc<dyn Transport>,
}

struct State {
    jobs: Option<Sender<Job>>,
    started: usize,
    /// The threads started, handed over to be joined on close.
    threads: Vec<JoinHandle<()>>,
    done: Option<Sender<()>>,
}

impl Senders {
    pub(crate) fn new(transport: Arc<dyn Transport>, done: Sender<()>) -> Arc<Senders> {
        let (jobs, queue) = queue::bounded(SEND_THREADS);
        Arc::new(Senders {
            state: Mutex::new(State {
                jobs: Some(jobs),
                started: 0,
                threads: Vec::new(),
                done: Some(done),
            }),
            queue,
            transport,
        })
    }

    /// Hands `job` to a sending thread; gives it back when none can take it.
    // The job comes back by value to be sent on the caller's thread; boxing it would cost an
    // allocation per send. (Its size grows with serde_json's `preserve_order`.)
    #[allow(clippy::result_large_err)]
    pub(crate) fn submit(self: &Arc<Self>, job: Job) -> Result<(), Job> {
        let mut state = lock(&self.state);
        let Some(jobs) = state.jobs.clone() else {
            return Err(job);
        };
        if state.started < SEND_THREADS {
            if let Some(done) = state.done.clone() {
                // The threads hold the senders weakly: they end with the queue, not the client.
                let (queue, transport, senders) = (
                    self.queue.clone(),
                    Arc::clone(&self.transport),
                    Arc::downgrade(self),
                );
                let spawned = crate::threads::spawn(
                    "umcp-send",
                    Box::new(move || {
                        let _done = done;
                        for job in queue.iter() {
                            run(transport.as_ref(), &senders, job);
                        }
                    }),
                );
                match spawned {
                    Ok(handle) => {
                        state.started += 1;
                        state.threads.push(handle);
                    }
                    Err(err) => log::debug!("could not start a sending thread: {err}"),
                }
            }
        }
        // With no thread to run it, a queued job would wait for good: given back instead.
        if state.started == 0 {
            return Err(job);
        }
        drop(state);
        match jobs.try_send(job) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(job) | TrySendError::Disconnected(job)) => Err(job),
        }
    }

    /// Lets the threads end once their queue is empty; the threads started, to be joined.
    pub(crate) fn close(&self) -> Vec<JoinHandle<()>> {
        let mut state = lock(&self.state);
        state.jobs = None;
        state.done = None;
        std::mem::take(&mut state.threads)
    }
}

/// Hands `notifications/cancelled` for request `id` to a sending thread, or drops it with a
/// debug log when none can take it.
pub(crate) fn cancel_later(senders: &Arc<Senders>, id: i64, reason: &str) {
    let job = Job {
        message: cancellation(id, reason),
        deadline: deadline_after(Instant::now(), CANCEL_DEADLINE),
        report: Report::Nobody,
    };
    if senders.submit(job).is_err() {
        log::debug!("no sending thread free to cancel {id}; notice dropped");
    }
}

/// Makes one send and reports it.
fn run(transport: &dyn Transport, senders: &Weak<Senders>, job: Job) {
    match job.report {
        Report::Caller(id, slot, handover) => {
            let on_written: Box<dyn FnOnce()> = {
                let (handover, senders) = (Arc::clone(&handover), senders.clone());
                Box::new(move || cancel_once_out(&senders, id, handover.written()))
            };
            let outcome =
                written::noting(on_written, || transport.send(&job.message, job.deadline));
            cancel_once_out(senders, id, handover.finished(outcome.is_ok()));
            match outcome {
                Ok(()) => slot.put(id, Reply::Sent),
                Err(err) => slot.put(id, Reply::SendFailed(err)),
            }
        }
        Report::Then(then) => then(transport, transport.send(&job.message, job.deadline)),
        Report::Nobody => {
            if let Err(err) = transport.send(&job.message, job.deadline) {
                log::debug!("could not send a notice: {err}");
            }
        }
    }
}

/// Cancels request `id`, now out, on the server when its caller let go of it while it was
/// being sent (`reason`). From another sending thread: this one may still wait for the
/// answer, which a JSON reply brings only once the server is done.
fn cancel_once_out(senders: &Weak<Senders>, id: i64, reason: Option<&str>) {
    let (Some(reason), Some(senders)) = (reason, senders.upgrade()) else {
        return;
    };
    log::debug!("request {id}, given up on while being sent, is out; cancelling it");
    cancel_later(&senders, id, reason);
}
