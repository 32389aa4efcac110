//! A few reusable threads that send for a caller who must stay free to hear its cancel handle
//! (or, reopening a subscription, to keep its own deadline), on transports whose `send` may
//! wait for the server (an HTTP POST waits for its status, and often for the whole reply).
//!
//! At most [`SEND_THREADS`] threads, started when first needed; as many jobs again may wait.
//! When all are taken a request is sent on the caller's own thread (its cancel is then heard
//! once the send returns), a subscription's reopening is tried again shortly, and a
//! cancellation notice is dropped with a debug log (the server still gets the late response
//! dropped by the client).

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::jsonrpc::Message;
use crate::transport::Transport;

use super::listen::open::listen_sent;
use super::listen::state::Sub;
use super::pending::{Reply, Slot};

/// How many sending threads a connection has at most.
pub(crate) const SEND_THREADS: usize = 4;

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
    /// The caller waiting on its slot for request `id`: sent, or failed.
    Caller(i64, Arc<Slot>),
    /// The subscription whose `subscriptions/listen` request `id` it is: of a failure, or,
    /// when it let go of the request meanwhile, by ending the request on the server once
    /// sent. Success is the server's acknowledgement, which comes through the router.
    Listen(i64, Arc<Sub>),
}

/// The sending threads of one connection.
pub(crate) struct Senders {
    jobs: Option<Sender<Job>>,
    queue: Receiver<Job>,
    started: usize,
    transport: Arc<dyn Transport>,
    done: Option<Sender<()>>,
}

impl Senders {
    pub(crate) fn new(transport: Arc<dyn Transport>, done: Sender<()>) -> Senders {
        let (jobs, queue) = crossbeam_channel::bounded(SEND_THREADS);
        Senders {
            jobs: Some(jobs),
            queue,
            started: 0,
            transport,
            done: Some(done),
        }
    }

    /// Hands `job` to a sending thread; gives it back when none can take it.
    // The job comes back by value to be sent on the caller's thread; boxing it would cost an
    // allocation per send. (Its size grows with serde_json's `preserve_order`.)
    #[allow(clippy::result_large_err)]
    pub(crate) fn submit(&mut self, job: Job) -> Result<Option<JoinHandle<()>>, Job> {
        let Some(jobs) = &self.jobs else {
            return Err(job);
        };
        let mut started = None;
        if self.started < SEND_THREADS {
            if let Some(done) = &self.done {
                let (queue, transport, done) = (
                    self.queue.clone(),
                    Arc::clone(&self.transport),
                    done.clone(),
                );
                let spawned =
                    std::thread::Builder::new()
                        .name("umcp-send".into())
                        .spawn(move || {
                            let _done = done;
                            for job in queue.iter() {
                                run(transport.as_ref(), job);
                            }
                        });
                match spawned {
                    Ok(handle) => {
                        self.started += 1;
                        started = Some(handle);
                    }
                    Err(err) => log::debug!("could not start a sending thread: {err}"),
                }
            }
        }
        match jobs.try_send(job) {
            Ok(()) => Ok(started),
            Err(TrySendError::Full(job) | TrySendError::Disconnected(job)) => Err(job),
        }
    }

    /// Lets the threads end once their queue is empty.
    pub(crate) fn close(&mut self) {
        self.jobs = None;
        self.done = None;
    }
}

/// Makes one send and reports it to the waiting caller.
fn run(transport: &dyn Transport, job: Job) {
    let outcome = transport.send(&job.message, job.deadline);
    match (job.report, outcome) {
        (Report::Caller(id, slot), Ok(())) => slot.put(id, Reply::Sent),
        (Report::Caller(id, slot), Err(err)) => slot.put(id, Reply::SendFailed(err)),
        (Report::Listen(id, sub), outcome) => {
            if let Err(err) = listen_sent(transport, &sub, id, outcome) {
                sub.refuse(id, err);
            }
        }
        (Report::Nobody, Err(err)) => log::debug!("could not send a notice: {err}"),
        (Report::Nobody, Ok(())) => {}
    }
}
