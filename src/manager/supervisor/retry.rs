//! What a supervisor does after a failure: report it, then wait for the next attempt (with
//! backoff), a restart or a stop.

use std::time::{Duration, Instant};

use std::sync::atomic::Ordering;

use crossbeam_channel::{RecvTimeoutError, TryRecvError};

use crate::error::Error;

use super::super::status::ServerStatus;
use super::{Command, Supervisor, IDLE_CHECK};

/// What the supervisor does after a failure.
pub(super) enum Next {
    Retry,
    Restart,
    Stop,
}

impl Supervisor {
    /// Reports a failure and waits for the next attempt, a restart or a stop.
    pub(super) fn after_failure(&self, error: Error, failures: u32) -> Next {
        // An attempt interrupted by a restart or stop is not worth reporting.
        match self.next_command(Duration::ZERO) {
            Ok(Command::Restart) => return Next::Restart,
            Ok(Command::Stop) => return Next::Stop,
            Err(_) if self.slot.is_stopping() => return Next::Stop,
            Err(_) => {}
        }
        let next_attempt = if failures > self.options.reconnect_attempts || permanent(&error) {
            None
        } else if failures == 0 {
            Some(Instant::now())
        } else {
            let delay = self.options.backoff_with_jitter(failures, self.slot.name());
            Some(crate::sync::deadline_in(delay))
        };
        let status = match &error {
            Error::Unauthorized(hints) | Error::Forbidden(hints) => {
                ServerStatus::NeedsAuthorization {
                    hints: (**hints).clone(),
                }
            }
            _ => ServerStatus::Failed {
                error,
                attempts: failures,
                next_attempt,
            },
        };
        self.slot.set_status(status);
        loop {
            let wait = next_attempt.map_or(IDLE_CHECK, |at| {
                at.saturating_duration_since(Instant::now()).min(IDLE_CHECK)
            });
            match self.next_command(wait) {
                Ok(Command::Stop) | Err(RecvTimeoutError::Disconnected) => return Next::Stop,
                Ok(Command::Restart) => return Next::Restart,
                Err(RecvTimeoutError::Timeout) => {}
            }
            if self.slot.is_stopping() {
                return Next::Stop;
            }
            if next_attempt.is_some_and(|at| Instant::now() >= at) {
                return Next::Retry;
            }
        }
    }
}

impl Supervisor {
    /// The next command, waiting up to `wait` for it. Taking a restart lets the next
    /// `Manager::restart` queue one again.
    pub(super) fn next_command(&self, wait: Duration) -> Result<Command, RecvTimeoutError> {
        let command = if wait.is_zero() {
            self.commands.try_recv().map_err(|e| match e {
                TryRecvError::Empty => RecvTimeoutError::Timeout,
                TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
            })
        } else {
            self.commands.recv_timeout(wait)
        };
        if command == Ok(Command::Restart) {
            self.slot.restart_queued.store(false, Ordering::SeqCst);
        }
        command
    }
}

/// Errors that another attempt would only repeat: a program that cannot be started, a
/// configuration the build cannot serve, a protocol version mismatch, missing credentials, a
/// failed authorization (repeating it could ask the user again and again).
fn permanent(error: &Error) -> bool {
    matches!(
        error,
        Error::Spawn { .. }
            | Error::Config(_)
            | Error::Unsupported(_)
            | Error::Unauthorized(_)
            | Error::Forbidden(_)
            | Error::Auth(_)
    )
}
