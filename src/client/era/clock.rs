//! The time one stateless call may take across its rounds, its input handlers and its task
//! polls, so that a server asking for input again and again cannot stretch a call past the
//! deadline the caller gave it.
//!
//! The call's timeout counts from its start, as it does for a handshake-era call whose server
//! asks for sampling or elicitation while the call waits: the handlers' time is the call's
//! time. With [`RequestOptions::with_reset_timeout_on_progress`] every answer from the server
//! (an input round, a task poll) restarts it instead. The maximum total time bounds both.
//!
//! [`RequestOptions::with_reset_timeout_on_progress`]: crate::RequestOptions::with_reset_timeout_on_progress

use std::time::{Duration, Instant};

use crate::error::{Error, Result, TimeoutKind};

use super::super::engine::request_options::RequestOptions;
use super::session::{CallSpec, Session};

/// A span long enough to stand for "no limit" without overflowing the clock.
const FOREVER: Duration = Duration::from_secs(100 * 365 * 86_400);

/// The deadlines of one call.
pub(super) struct Clock<'a> {
    spec: &'a CallSpec<'a>,
    timeout: Duration,
    total: Option<Instant>,
    /// When the call times out (moved on by answers when the timeout resets on progress).
    deadline: Instant,
    started: Instant,
}

impl<'a> Clock<'a> {
    /// Starts the clock of `spec` now.
    pub(super) fn start(session: &Session, spec: &'a CallSpec<'a>) -> Clock<'a> {
        let started = Instant::now();
        let timeout = spec
            .options
            .timeout
            .unwrap_or(session.conn.request_timeout());
        // A total too large for the clock is no limit at all.
        let total = spec
            .options
            .max_total(session.conn.request_timeout())
            .and_then(|max| started.checked_add(max));
        let mut clock = Clock {
            spec,
            timeout,
            total,
            deadline: started,
            started,
        };
        clock.deadline = clock.after(started);
        clock
    }

    /// The clock of `spec` as another one left it: started at `started`, due at `deadline`.
    pub(super) fn resume(
        session: &Session,
        spec: &'a CallSpec<'a>,
        (started, deadline): (Instant, Instant),
    ) -> Clock<'a> {
        let mut clock = Clock::start(session, spec);
        clock.started = started;
        clock.deadline = deadline;
        clock.total = spec
            .options
            .max_total(session.conn.request_timeout())
            .and_then(|max| started.checked_add(max));
        clock
    }

    /// When the clock started, and when the call is due now: what [`Clock::resume`] takes.
    pub(super) fn times(&self) -> (Instant, Instant) {
        (self.started, self.deadline)
    }

    /// The call this clock times.
    pub(super) fn spec(&self) -> &'a CallSpec<'a> {
        self.spec
    }

    /// When the call times out.
    pub(super) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The server answered: a timeout that resets on progress starts again.
    pub(super) fn progress(&mut self) {
        if self.spec.options.reset_on_progress {
            self.deadline = self.after(Instant::now());
        }
    }

    /// The deadline a timeout starting at `start` gives, within the maximum total time.
    fn after(&self, start: Instant) -> Instant {
        // A timeout too large for the clock is no limit but the total.
        let deadline = start.checked_add(self.timeout);
        match (deadline, self.total) {
            (Some(deadline), Some(total)) => deadline.min(total),
            (Some(deadline), None) => deadline,
            (None, Some(total)) => total,
            (None, None) => start + FOREVER,
        }
    }

    /// What is left of the call's time; a timeout when nothing is.
    pub(super) fn left(&self) -> Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.timed_out());
        }
        Ok(left)
    }

    /// The caller's options for one more round: what is left of the timeout (unless it
    /// resets on progress, when each round gets it whole) and of the maximum total time.
    pub(super) fn round(&self) -> Result<RequestOptions> {
        let left = self.left()?;
        let mut options = self.spec.options.clone();
        if !self.spec.options.reset_on_progress {
            options.timeout = Some(left);
        }
        if let Some(total) = self.total {
            options.max_total = Some(total.saturating_duration_since(Instant::now()));
        }
        Ok(options)
    }

    /// Fails when the client closed, the caller cancelled or the call's time is up: checked
    /// before every handler and every request, since none of them can be interrupted.
    pub(super) fn check(&self, session: &Session) -> Result<()> {
        if let Some(closed) = session.closed() {
            return Err(Error::Closed(closed));
        }
        if self
            .spec
            .options
            .cancel
            .as_ref()
            .is_some_and(|c| c.is_cancelled())
        {
            return Err(self.cancelled());
        }
        self.left().map(drop)
    }

    /// The call's timeout, whichever of its parts was running.
    pub(super) fn timed_out(&self) -> Error {
        let kind = match self.total {
            Some(total) if total <= self.deadline => TimeoutKind::Total,
            _ => TimeoutKind::Request,
        };
        Error::Timeout {
            method: self.spec.method.to_owned(),
            elapsed: self.started.elapsed(),
            kind,
            stderr_tail: None,
        }
    }

    /// The call's cancellation, whichever of its parts was running.
    pub(super) fn cancelled(&self) -> Error {
        Error::Cancelled {
            method: self.spec.method.to_owned(),
        }
    }

    /// A timeout of one of the call's requests, told as the call's (its elapsed time counts
    /// from the call's start); other errors as they are.
    pub(super) fn own(&self, error: Error) -> Error {
        match error {
            Error::Timeout {
                kind,
                stderr_tail,
                method,
                ..
            } => Error::Timeout {
                method,
                elapsed: self.started.elapsed(),
                kind,
                stderr_tail,
            },
            other => other,
        }
    }
}
