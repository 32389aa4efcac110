//! The running stdio connection: sending (see [`super::stdin`]), and close.

use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::child;
#[cfg(unix)]
use super::guard;
use super::lines::{Activity, Watched};
use super::monitor::{self, Monitor};
use super::stderr::{self, Tail};
use super::stdin::{Refused, Stdin};
use super::{reader, StdioConfig};
use crate::error::{Closed, Error, Result, TimeoutKind};
use crate::jsonrpc::Message;
pub(super) use crate::sync::lock;
use crate::transport::{Closing, Inbox, Transport};

/// How long the reader and stderr threads get to finish once the server is gone, before they
/// are left to end on their own (a process outside the group may hold the pipes open).
const JOIN_WAIT: Duration = Duration::from_millis(500);

/// Extra time close allows the monitor beyond the shutdown sequence itself.
const CLOSE_SLACK: Duration = Duration::from_secs(1);

/// How long `send` waits for the close report after finding the writer gone.
const REPORT_WAIT: Duration = Duration::from_secs(1);

/// A running stdio server.
pub(super) struct StdioTransport {
    shared: Arc<Shared>,
    stdin: Arc<Stdin>,
    /// Dropping this sender tells the monitor to run the shutdown sequence.
    close_monitor: Mutex<Option<Sender<()>>>,
    workers: Mutex<Vec<Worker>>,
    close_bound: Duration,
    /// A second `close` waits for the first to end the process.
    close_once: Closing,
}

/// What the transport and its threads share.
pub(super) struct Shared {
    inbox: Inbox,
    /// `program[pid]`, for logs.
    pub(super) label: String,
    pub(super) tail: Mutex<Tail>,
    /// Lines on stdout that were not JSON-RPC; the first few go into `tail` too.
    pub(super) stdout_noise: AtomicU64,
    pub(super) stdout_activity: Activity,
    pub(super) stderr_activity: Activity,
    closed: Mutex<Option<Arc<Closed>>>,
    /// Shared by the reader while it delivers, exclusive while the end is reported, so nothing is
    /// delivered after the end. Only those two take it: a delivery may block (backpressure), so
    /// nobody the layer above waits on may wait for it.
    gate: RwLock<()>,
    reported: Condvar,
    closing: AtomicBool,
    /// The close is an abort: the server gets no grace to exit on the end of its input.
    aborting: AtomicBool,
}

/// A named thread and a way to wait for it with a deadline.
pub(super) struct Worker {
    name: &'static str,
    handle: JoinHandle<()>,
    /// Disconnects when the thread has finished its work.
    pub(super) done: Receiver<()>,
}

impl StdioTransport {
    /// Starts the threads of a freshly spawned `child`; on failure the child is killed and
    /// reaped.
    pub(super) fn start(mut child: Child, config: &StdioConfig, inbox: Inbox) -> Result<Self> {
        let pid = child.id();
        let program = std::path::Path::new(&config.command)
            .file_name()
            .map_or_else(
                || config.command.clone(),
                |n| n.to_string_lossy().into_owned(),
            );
        let label = format!("{program}[{pid}]");
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            monitor::kill_now(&mut child);
            return Err(Error::io(std::io::Error::other(
                "the server's pipes were not set up",
            )));
        };
        let shared = Arc::new(Shared {
            inbox,
            label: label.clone(),
            tail: Mutex::new(Tail::new(config.stderr_tail_lines)),
            stdout_noise: AtomicU64::new(0),
            stdout_activity: Activity::default(),
            stderr_activity: Activity::default(),
            closed: Mutex::new(None),
            gate: RwLock::new(()),
            reported: Condvar::new(),
            closing: AtomicBool::new(false),
            aborting: AtomicBool::new(false),
        });
        let stdin = Arc::new(Stdin::new(stdin, &label));
        let (close_tx, close_rx) = crossbeam_channel::bounded::<()>(0);

        let mut workers = Vec::with_capacity(5);
        let started = (|| -> std::io::Result<()> {
            let (queue, lines) = match &config.stderr_callback {
                Some(_) => {
                    let (queue, lines) = stderr::callback_queue();
                    (Some(queue), Some(lines))
                }
                None => (None, None),
            };
            let (s, l) = (shared.clone(), label.clone());
            workers.push(Worker::spawn("umcp-stdio-stderr", move || {
                let stderr = Watched::new(stderr, &s.stderr_activity);
                stderr::run(stderr, &s.tail, queue, &l);
            })?);
            let (s, limit, l) = (shared.clone(), config.max_message_size, label.clone());
            workers.push(Worker::spawn("umcp-stdio-reader", move || {
                reader::run(Watched::new(stdout, &s.stdout_activity), &s, limit, &l);
            })?);
            let (w, l) = (stdin.clone(), label.clone());
            workers.push(Worker::spawn("umcp-stdio-writer", move || {
                w.run_writer(&l);
            })?);
            if let (Some(lines), Some(callback)) = (lines, config.stderr_callback.clone()) {
                let l = label.clone();
                workers.push(Worker::spawn("umcp-stdio-stderr-callback", move || {
                    stderr::run_callback(&lines, &callback, &l);
                })?);
            }
            Ok(())
        })();
        if let Err(e) = started {
            monitor::kill_now(&mut child);
            stdin.close();
            return Err(Error::io(e));
        }
        let (watch, waiter) = match child::watch(child) {
            Ok(started) => started,
            Err(e) => {
                // The child is being killed, which ends the reader and stderr threads.
                stdin.close();
                return Err(Error::io(e));
            }
        };
        workers.push(waiter);
        let monitor = Monitor {
            child: watch,
            pid,
            status: None,
            reaped: false,
            shared: shared.clone(),
            stdin: stdin.clone(),
            close: close_rx,
            stderr_done: workers[0].done.clone(),
            reader_done: workers[1].done.clone(),
            close_grace: config.close_grace,
            kill_grace: config.kill_grace,
            #[cfg(unix)]
            _enlisted: config.end_with_parent.then(|| guard::enlist(pid)).flatten(),
        };
        let transport = StdioTransport {
            shared,
            stdin,
            close_monitor: Mutex::new(Some(close_tx)),
            workers: Mutex::new(workers),
            close_bound: config
                .close_grace
                .saturating_add(config.kill_grace)
                .saturating_add(monitor::SHUTDOWN_EXTRA)
                .saturating_add(CLOSE_SLACK),
            close_once: Closing::default(),
        };
        // A monitor that cannot start is dropped with the child, which its drop kills and reaps;
        // the transport's own drop then stops the other threads.
        let worker =
            Worker::spawn("umcp-stdio-monitor", move || monitor.run()).map_err(Error::io)?;
        lock(&transport.workers).insert(0, worker);
        Ok(transport)
    }
}

impl Transport for StdioTransport {
    fn send(&self, message: &Message, deadline: Instant) -> Result<()> {
        if let Some(err) = self.shared.closed_error() {
            return Err(err);
        }
        let start = Instant::now();
        let mut line = message.encode().into_bytes();
        line.push(b'\n');
        match self.stdin.send(line, deadline) {
            Ok(()) => Ok(()),
            Err(Refused::Timeout) => Err(Error::Timeout {
                method: method_of(message),
                elapsed: start.elapsed(),
                kind: TimeoutKind::Write,
                stderr_tail: None,
            }),
            Err(Refused::Closing) => Err(self
                .shared
                .closed_error()
                .unwrap_or_else(|| closed_error("closed by client", &self.shared))),
            Err(Refused::Broken) => {
                // Writing failed because stdin broke: the server is going away, and the
                // monitor is about to say how.
                let wait = deadline.min(crate::transport::deadline_after(
                    Instant::now(),
                    REPORT_WAIT,
                ));
                Err(self.shared.wait_closed(wait).unwrap_or_else(|| {
                    closed_error("server stopped reading its input", &self.shared)
                }))
            }
        }
    }

    fn send_waits_for_peer(&self) -> bool {
        false
    }

    fn close(&self) {
        if !self
            .close_once
            .start(self.close_bound.saturating_add(JOIN_WAIT))
        {
            return;
        }
        self.shared.closing.store(true, Ordering::Release);
        log::debug!("{}: closing", self.shared.label);
        self.stdin.close();
        drop(lock(&self.close_monitor).take());
        let workers = std::mem::take(&mut *lock(&self.workers));
        let mut deadline = crate::transport::deadline_after(Instant::now(), self.close_bound);
        for worker in workers {
            worker.join_by(deadline, &self.shared.label);
            // The monitor (first) ran the shutdown sequence; the others only need to drain.
            deadline = deadline.min(crate::transport::deadline_after(Instant::now(), JOIN_WAIT));
        }
        let tail = lock(&self.shared.tail).text();
        self.shared.report(Closed {
            reason: "closed by client".into(),
            exit_status: None,
            stderr_tail: Some(tail),
        });
        self.close_once.finish();
        log::debug!("{}: closed", self.shared.label);
    }

    fn abort(&self) {
        self.shared.aborting.store(true, Ordering::Release);
        self.close();
    }

    fn kind(&self) -> &'static str {
        "stdio"
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.close();
    }
}

impl Shared {
    /// Reports the end of the connection to the inbox, unless it was reported already.
    pub(super) fn report(&self, closed: Closed) {
        let _gate = self.gate.write().unwrap_or_else(PoisonError::into_inner);
        let mut slot = lock(&self.closed);
        if slot.is_some() {
            return;
        }
        log::debug!("{}: reporting the end: {closed}", self.label);
        *slot = Some(Arc::new(closed.clone()));
        self.inbox.closed(closed);
        self.reported.notify_all();
    }

    /// Hands `deliver` the inbox unless the end was reported already, so that nothing arrives
    /// after [`Inbound::Closed`](crate::transport::Inbound::Closed); `false` when nothing more
    /// should be read (the end was reported, or nobody listens).
    pub(super) fn deliver(&self, deliver: impl FnOnce(&Inbox) -> bool) -> bool {
        let _gate = self.gate.read().unwrap_or_else(PoisonError::into_inner);
        !self.is_reported() && deliver(&self.inbox)
    }

    /// Whether the transport is being closed (so an exit now is the one close asked for).
    pub(super) fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// Whether the close is an abort (see [`Transport::abort`]).
    pub(super) fn is_aborting(&self) -> bool {
        self.aborting.load(Ordering::Acquire)
    }

    /// Whether the end was reported.
    pub(super) fn is_reported(&self) -> bool {
        lock(&self.closed).is_some()
    }

    /// The error for a send on a connection that is closed or closing.
    fn closed_error(&self) -> Option<Error> {
        if let Some(closed) = lock(&self.closed).as_ref() {
            return Some(Error::Closed(closed.clone()));
        }
        if self.is_closing() {
            return Some(closed_error("closed by client", self));
        }
        None
    }

    /// Waits until `deadline` for the end to be reported.
    fn wait_closed(&self, deadline: Instant) -> Option<Error> {
        let mut slot = lock(&self.closed);
        loop {
            if let Some(closed) = slot.as_ref() {
                return Some(Error::Closed(closed.clone()));
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            slot = self
                .reported
                .wait_timeout(slot, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Worker {
    /// Starts `work` on a thread named `name`.
    pub(super) fn spawn(
        name: &'static str,
        work: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Worker> {
        let (done_tx, done) = crossbeam_channel::bounded::<()>(0);
        let handle = thread::Builder::new().name(name.into()).spawn(move || {
            let _done = done_tx;
            work();
        })?;
        Ok(Worker { name, handle, done })
    }

    /// Joins the thread if it finishes by `deadline`; otherwise leaves it to finish alone.
    fn join_by(self, deadline: Instant, label: &str) {
        // Close may run on this very thread (a stderr callback dropping the last handle).
        if self.handle.thread().id() == thread::current().id() {
            return;
        }
        match self.done.recv_deadline(deadline) {
            Err(RecvTimeoutError::Disconnected) => {
                let _ = self.handle.join();
            }
            _ => log::debug!(
                "{label}: {} is still blocked; leaving it to finish",
                self.name
            ),
        }
    }
}

/// The method a message is about, for timeout errors.
fn method_of(message: &Message) -> String {
    match message {
        Message::Request(r) => r.method.clone(),
        Message::Notification(n) => n.method.clone(),
        Message::Response(r) => match &r.id {
            Some(id) => format!("response to {id}"),
            None => "response".into(),
        },
    }
}

/// An [`Error::Closed`] with `reason` and the stderr tail so far.
fn closed_error(reason: &str, shared: &Shared) -> Error {
    let tail = lock(&shared.tail).text();
    Error::Closed(Arc::new(Closed {
        reason: reason.into(),
        exit_status: None,
        stderr_tail: Some(tail),
    }))
}
