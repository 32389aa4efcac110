//! The running stdio connection: sending (see [`super::stdin`]), and close.

use std::process::{Child, ChildStderr, ChildStdout};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use super::child;
#[cfg(unix)]
use super::guard;
use super::lines::Watched;
use super::monitor::{self, Monitor};
use super::shared::{closed_error, Shared};
use super::stderr;
use super::stdin::{Refused, Stdin};
use super::worker::Worker;
use super::{reader, StdioConfig};
use crate::error::{Closed, Error, Result, TimeoutKind};
use crate::jsonrpc::Message;
use crate::sync::lock;
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

impl StdioTransport {
    /// Starts the threads of a freshly spawned `child`; on failure the child is killed and
    /// reaped.
    pub(super) fn start(mut child: Child, config: &StdioConfig, inbox: Inbox) -> Result<Self> {
        let pid = child.id();
        let label = format!("{}[{pid}]", program_name(&config.command));
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            monitor::kill_now(&mut child);
            return Err(Error::io(std::io::Error::other(
                "the server's pipes were not set up",
            )));
        };
        let shared = Arc::new(Shared::new(inbox, label.clone(), config.stderr_tail_lines));
        let stdin = Arc::new(Stdin::new(stdin, &label));
        let mut workers = match spawn_workers(&shared, &stdin, stdout, stderr, config) {
            Ok(workers) => workers,
            Err(e) => {
                monitor::kill_now(&mut child);
                stdin.close();
                return Err(Error::io(e));
            }
        };
        let (watch, waiter) = child::watch(child).map_err(|e| {
            // The child is being killed, which ends the reader and stderr threads.
            stdin.close();
            Error::io(e)
        })?;
        workers.push(waiter);
        let (close_tx, close_rx) = crossbeam_channel::bounded::<()>(0);
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

/// The program's file name, for logs.
fn program_name(command: &str) -> String {
    std::path::Path::new(command)
        .file_name()
        .map_or_else(|| command.to_owned(), |n| n.to_string_lossy().into_owned())
}

/// Starts the stderr reader, the stdout reader, the writer and, with a stderr callback, the
/// thread that calls it, in that order.
fn spawn_workers(
    shared: &Arc<Shared>,
    stdin: &Arc<Stdin>,
    stdout: ChildStdout,
    stderr: ChildStderr,
    config: &StdioConfig,
) -> std::io::Result<Vec<Worker>> {
    let mut workers = Vec::with_capacity(5);
    let label = &shared.label;
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
    Ok(workers)
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
