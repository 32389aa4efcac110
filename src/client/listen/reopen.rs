//! When and how a broken stateless-era subscription is opened again: at once after a stream
//! that lived a while or delivered an event, after a growing pause when streams keep breaking
//! soon after they open, so that a server that acknowledges and drops every subscription
//! costs a few requests a minute rather than hundreds a second.
//!
//! The reopening never holds a reader past its deadline: the handle's reading calls move it
//! along a step at a time (send the request from a sending thread, look for its
//! acknowledgement), and a reopen the server has not acknowledged within the request timeout
//! is abandoned and tried again after a pause. Only a refusal or the end of the connection
//! ends the subscription.

use std::time::{Duration, Instant};

use crate::error::{Error, TimeoutKind};
use crate::transport::deadline_after;
use crate::types::SUBSCRIPTIONS_LISTEN;

use super::super::options::lock;
use super::open::{abandon, reopen_modern, Sending};
use super::{Subscription, SubscriptionEnd, SubscriptionEvent};

/// The first pause after a stream that broke soon after it opened.
pub(super) const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// The longest pause: each quick break doubles it up to this.
pub(super) const LONGEST_PAUSE: Duration = Duration::from_secs(10);

/// A stream open this long that breaks is opened again at once.
const STABLE: Duration = Duration::from_secs(10);

/// The reopening state of one subscription.
pub(super) struct Reopening {
    /// When the current stream was opened.
    opened: Instant,
    /// Streams in a row that broke before they were [`STABLE`], or could not be opened.
    quick: u32,
    /// Whether the current stream delivered an event: it works, whatever its age.
    delivered: bool,
    /// A reopen waiting for its pause to end: why, and when it may go.
    waiting: Option<(String, Instant)>,
    /// A reopen sent and not yet acknowledged.
    pending: Option<Pending>,
    /// An event of the reopened stream that came before its acknowledgement, handed out
    /// right after the [`SubscriptionEvent::Resubscribed`] it proved.
    held: Option<SubscriptionEvent>,
}

/// A `subscriptions/listen` request sent to reopen a subscription.
struct Pending {
    /// Why the stream is being opened again.
    reason: String,
    id: i64,
    sent: Instant,
    /// When it is abandoned unless acknowledged: one request timeout after it was sent.
    gives_up_at: Instant,
}

impl Reopening {
    pub(super) fn new() -> Reopening {
        Reopening {
            opened: Instant::now(),
            quick: 0,
            delivered: false,
            waiting: None,
            pending: None,
            held: None,
        }
    }

    /// The stream broke: when it may be opened again.
    fn broke(&mut self) -> Instant {
        let now = Instant::now();
        if self.delivered || now.duration_since(self.opened) >= STABLE {
            self.quick = 0;
            return now;
        }
        self.retry()
    }

    /// The stream broke soon after it opened, or could not be opened: when to try again.
    fn retry(&mut self) -> Instant {
        self.quick = self.quick.saturating_add(1);
        let doublings = self.quick.saturating_sub(1).min(16);
        Instant::now()
            + FIRST_PAUSE
                .saturating_mul(1 << doublings)
                .min(LONGEST_PAUSE)
    }

    /// The stream was opened again.
    fn opened(&mut self) {
        self.opened = Instant::now();
        self.delivered = false;
        self.waiting = None;
        self.pending = None;
    }

    /// An event arrived: the stream works, whatever its age.
    fn delivered(&mut self) {
        self.quick = 0;
        self.delivered = true;
    }

    /// When the reopening has its next step: the end of its pause, or when an unacknowledged
    /// reopen is abandoned.
    pub(super) fn next_step(&self) -> Option<Instant> {
        match (&self.waiting, &self.pending) {
            (Some((_, at)), _) => Some(*at),
            (None, Some(pending)) => Some(pending.gives_up_at),
            (None, None) => None,
        }
    }
}

/// Where a sent reopen stands.
enum Outcome {
    Waiting,
    Acknowledged,
    Failed(Error),
    /// The subscription ended meanwhile (closed, the connection lost): nothing to reopen.
    Ended,
}

impl Subscription {
    /// Moves a reopening along without waiting for the server: hands out an event it held
    /// back, reports a reopen the server acknowledged, abandons one it did not in time, and
    /// sends the next once its pause is over (`deadline` bounds a send on the caller's
    /// thread).
    pub(super) fn reopen_step(&self, deadline: Option<Instant>) -> Option<SubscriptionEvent> {
        let mut reopening = lock(&self.reopening);
        if let Some(event) = reopening.held.take() {
            return Some(event);
        }
        if let Some(pending) = reopening.pending.take() {
            match self.outcome(&pending) {
                Outcome::Waiting => reopening.pending = Some(pending),
                Outcome::Ended => {}
                Outcome::Acknowledged => {
                    reopening.opened();
                    return Some(SubscriptionEvent::Resubscribed {
                        reason: pending.reason,
                    });
                }
                Outcome::Failed(err) => {
                    self.not_reopened(&mut reopening, pending.reason, pending.id, err);
                }
            }
        }
        let due = matches!(&reopening.waiting, Some((_, at)) if *at <= Instant::now());
        if due {
            if let Some((reason, _)) = reopening.waiting.take() {
                self.send_reopen(&mut reopening, reason, deadline);
            }
        }
        None
    }

    /// An event arrived: it proves a reopen under way (a server may stream before it
    /// acknowledges), which is reported first.
    pub(super) fn event_arrived(&self, event: SubscriptionEvent) -> SubscriptionEvent {
        let mut reopening = lock(&self.reopening);
        let proved = reopening.pending.take();
        if proved.is_some() {
            reopening.opened();
        }
        reopening.delivered();
        match proved {
            Some(pending) => {
                reopening.held = Some(event);
                SubscriptionEvent::Resubscribed {
                    reason: pending.reason,
                }
            }
            None => event,
        }
    }

    /// The stream broke: it is opened again once its pause is over.
    pub(super) fn stream_broke(&self, reason: String) {
        let mut reopening = lock(&self.reopening);
        let at = reopening.broke();
        if at > Instant::now() {
            log::debug!("subscription broke soon after it opened: reopening later");
        }
        reopening.pending = None;
        reopening.waiting = Some((reason, at));
    }

    fn outcome(&self, pending: &Pending) -> Outcome {
        let mut status = lock(&self.sub.status);
        if status.ended.is_some() {
            return Outcome::Ended;
        }
        if let Some(err) = status.refused.take() {
            return Outcome::Failed(err);
        }
        if status.acknowledged.is_some() {
            return Outcome::Acknowledged;
        }
        if Instant::now() < pending.gives_up_at {
            return Outcome::Waiting;
        }
        Outcome::Failed(Error::Timeout {
            method: SUBSCRIPTIONS_LISTEN.to_owned(),
            elapsed: pending.sent.elapsed(),
            kind: TimeoutKind::Request,
            stderr_tail: None,
        })
    }

    /// Sends `subscriptions/listen` again, without waiting for the server.
    fn send_reopen(&self, reopening: &mut Reopening, reason: String, deadline: Option<Instant>) {
        if self.sub.is_ended() {
            return;
        }
        let Some(shared) = self.shared.upgrade() else {
            self.sub.end(SubscriptionEnd::ConnectionLost { reason });
            return;
        };
        let sent = Instant::now();
        let gives_up_at = deadline_after(sent, shared.options.request_timeout);
        let send_by = deadline.map_or(gives_up_at, |d| d.min(gives_up_at));
        match reopen_modern(&shared, &self.sub, gives_up_at, send_by) {
            Sending::Sent(id) => {
                reopening.pending = Some(Pending {
                    reason,
                    id,
                    sent,
                    gives_up_at,
                });
            }
            Sending::Busy => {
                log::debug!("no sending thread free to reopen a subscription; trying shortly");
                reopening.waiting = Some((reason, sent + FIRST_PAUSE));
            }
            Sending::Failed(id, err) => self.not_reopened(reopening, reason, id, err),
        }
    }

    /// Listen request `id` did not reopen the subscription: a timeout (a server that hangs or
    /// is slow) is abandoned and tried again after a pause; the end of the connection ends
    /// the subscription as lost, and anything else (the server's refusal) as failed.
    fn not_reopened(&self, reopening: &mut Reopening, reason: String, id: i64, err: Error) {
        let Some(shared) = self.shared.upgrade() else {
            self.sub.end(SubscriptionEnd::ConnectionLost { reason });
            return;
        };
        shared.listens.remove(&self.sub);
        match err {
            Error::Timeout { .. } => {
                abandon(&shared, id, "not acknowledged in time");
                let at = reopening.retry();
                log::debug!(
                    "re-opening subscription {id} failed ({err}); trying again in {:?}",
                    at.saturating_duration_since(Instant::now())
                );
                reopening.waiting = Some((reason, at));
            }
            Error::Closed(closed) => {
                self.sub.end(SubscriptionEnd::ConnectionLost {
                    reason: closed.reason.clone(),
                });
            }
            err => {
                self.sub.end(SubscriptionEnd::Failed {
                    reason: format!("{reason}; re-opening failed: {err}"),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_breaks_double_the_pause_up_to_the_longest_and_an_event_resets_it() {
        let mut reopening = Reopening::new();
        let mut pauses = Vec::new();
        for _ in 0..10 {
            let at = reopening.broke();
            pauses.push(at.saturating_duration_since(Instant::now()));
            reopening.opened();
        }
        // Within a few milliseconds of 0.1, 0.2, 0.4 ... 10 s.
        let expected = [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000];
        for (pause, ms) in pauses.iter().zip(expected) {
            let ms = Duration::from_millis(ms);
            assert!(
                *pause <= ms && ms - *pause < Duration::from_millis(50),
                "{pauses:?}"
            );
        }
        reopening.delivered();
        assert!(
            reopening.broke() <= Instant::now(),
            "a stream that delivered"
        );
        reopening.opened();
        let pause = reopening.broke().saturating_duration_since(Instant::now());
        assert!(pause <= FIRST_PAUSE, "{pause:?}");
    }

    #[test]
    fn a_stream_that_lived_a_while_is_opened_again_at_once() {
        let mut reopening = Reopening::new();
        reopening.quick = 5;
        reopening.opened = Instant::now() - STABLE;
        assert!(reopening.broke() <= Instant::now());
        assert_eq!(reopening.quick, 0);
    }
}
