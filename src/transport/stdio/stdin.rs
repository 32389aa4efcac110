//! Writing to the server's stdin without ever blocking a caller past its deadline.
//!
//! On Unix the pipe is switched to non-blocking writes, and a caller writes its own message
//! when nothing is queued before it: with a server that keeps reading (the usual case) a
//! message goes out with no thread hand-off at all. What the pipe cannot take at once (a full
//! pipe, a message larger than the pipe's buffer) is queued, and the `umcp-stdio-writer`
//! thread, which otherwise sleeps, waits for the pipe with poll(2) and writes it. A caller
//! only ever waits for room in that queue, and only until its deadline: a server that stops
//! reading fills the pipe, then the queue, and then callers time out with
//! [`TimeoutKind::Write`](crate::TimeoutKind::Write).
//!
//! Elsewhere every message goes through the queue and the writer thread, which writes with
//! blocking calls.
//!
//! The queue holds [`BACKLOG`] messages (whatever their size, like the old writer's channel):
//! memory is bounded by that many messages of at most the caller's own size.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::process::ChildStdin;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::sync::lock;

#[cfg(unix)]
use super::pipe;

/// How many messages may wait for the writer thread before a caller waits for room.
pub(super) const BACKLOG: usize = 32;

/// How long the writer waits for the pipe in one go before looking at its state again.
#[cfg_attr(not(unix), allow(dead_code))]
const POLL_WAIT: Duration = Duration::from_millis(100);

/// Why a message could not be handed over.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// The queue stayed full until the deadline.
    Timeout,
    /// Writing failed: the server no longer reads its stdin.
    Broken,
    /// The transport is closing.
    Closing,
}

/// The server's stdin, shared by the callers and the writer thread.
pub(super) struct Stdin {
    state: Mutex<State>,
    /// Callers wait here for room in the queue.
    room: Condvar,
    /// The writer thread waits here for work.
    work: Condvar,
    /// Whether callers may write themselves (the pipe is non-blocking).
    direct: bool,
}

struct State {
    /// `None` once closed, or while the writer thread writes without the lock.
    pipe: Option<ChildStdin>,
    /// Whole messages not yet written; `offset` bytes of the first one are.
    queue: VecDeque<Vec<u8>>,
    offset: usize,
    /// The writer thread holds the pipe (and the message it writes).
    flushing: bool,
    closing: bool,
    /// When writing failed: the server no longer reads its stdin.
    broken: Option<Instant>,
}

impl Stdin {
    pub(super) fn new(pipe: ChildStdin, label: &str) -> Stdin {
        #[cfg(unix)]
        let direct = match pipe::set_nonblocking(&pipe) {
            Ok(()) => true,
            Err(e) => {
                log::debug!("{label}: stdin stays blocking ({e}); writing from the writer");
                false
            }
        };
        #[cfg(not(unix))]
        let direct = {
            let _ = label;
            false
        };
        Stdin {
            state: Mutex::new(State {
                pipe: Some(pipe),
                queue: VecDeque::new(),
                offset: 0,
                flushing: false,
                closing: false,
                broken: None,
            }),
            room: Condvar::new(),
            work: Condvar::new(),
            direct,
        }
    }

    /// Hands `line` over: written at once when the pipe takes it, queued otherwise, waiting
    /// for room in the queue until `deadline` at most.
    pub(super) fn send(&self, line: Vec<u8>, deadline: Instant) -> Result<(), Refused> {
        let mut state = lock(&self.state);
        loop {
            if state.closing {
                return Err(Refused::Closing);
            }
            if state.broken.is_some() {
                return Err(Refused::Broken);
            }
            if self.direct && state.queue.is_empty() && !state.flushing {
                let Some(pipe) = state.pipe.as_mut() else {
                    return Err(Refused::Broken);
                };
                return match write_some(pipe, &line) {
                    Ok(n) if n == line.len() => {
                        trace(&line);
                        Ok(())
                    }
                    Ok(n) => {
                        state.offset = n;
                        state.queue.push_back(line);
                        self.work.notify_one();
                        Ok(())
                    }
                    Err(e) => {
                        log::debug!("writing to stdin failed: {e}");
                        state.broken = Some(Instant::now());
                        self.work.notify_one();
                        Err(Refused::Broken)
                    }
                };
            }
            if state.queue.len() < BACKLOG {
                state.queue.push_back(line);
                self.work.notify_one();
                return Ok(());
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return Err(Refused::Timeout);
            };
            state = self
                .room
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Refuses new messages; stdin is closed once the queue is written (at once when it is
    /// empty), which asks the server to exit.
    pub(super) fn close(&self) {
        let mut state = lock(&self.state);
        state.closing = true;
        if state.queue.is_empty() && !state.flushing {
            state.pipe = None;
        }
        self.work.notify_all();
        self.room.notify_all();
    }

    /// When writing to stdin failed, if it has: the server no longer reads its input.
    pub(super) fn broken_since(&self) -> Option<Instant> {
        lock(&self.state).broken
    }

    /// The writer thread: writes what callers queued until stdin is closed or breaks.
    pub(super) fn run_writer(&self, label: &str) {
        let mut state = lock(&self.state);
        loop {
            while state.queue.is_empty() && !state.closing && state.broken.is_none() {
                state = self
                    .work
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if state.broken.is_some() || state.queue.is_empty() {
                break;
            }
            let (Some(mut pipe), Some(message)) = (state.pipe.take(), state.queue.pop_front())
            else {
                break;
            };
            let offset = std::mem::take(&mut state.offset);
            state.flushing = true;
            drop(state);
            let written = self.write_out(&mut pipe, &message[offset..]);
            state = lock(&self.state);
            state.flushing = false;
            state.pipe = Some(pipe);
            match written {
                Ok(n) if offset + n == message.len() => {
                    trace(&message);
                    self.room.notify_all();
                }
                Ok(n) => {
                    state.offset = offset + n;
                    state.queue.push_front(message);
                }
                Err(e) => {
                    log::debug!("{label}: writing to stdin failed: {e}");
                    state.broken = Some(Instant::now());
                }
            }
        }
        state.pipe = None;
        state.queue.clear();
        self.room.notify_all();
        log::debug!("{label}: stdin closed");
    }

    /// Writes some of `data` from the writer thread: as much as the pipe takes within one
    /// wait (Unix), or all of it.
    fn write_out(&self, pipe: &mut ChildStdin, data: &[u8]) -> io::Result<usize> {
        #[cfg(unix)]
        if self.direct {
            pipe::wait_writable(pipe, POLL_WAIT)?;
            return write_some(pipe, data);
        }
        pipe.write_all(data).map(|()| data.len())
    }
}

/// Writes as much of `data` as the non-blocking pipe takes now.
fn write_some(pipe: &mut ChildStdin, data: &[u8]) -> io::Result<usize> {
    let mut written = 0;
    while written < data.len() {
        match pipe.write(&data[written..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    Ok(written)
}

/// Logs a written line at trace level.
fn trace(line: &[u8]) {
    log::trace!("> {}", String::from_utf8_lossy(line).trim_end());
}
