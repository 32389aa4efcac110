//! When and how a broken stateless-era subscription is opened again: at once after a stream
//! that lived a while or delivered an event, after a growing pause when streams keep breaking
//! soon after they open, so that a server that acknowledges and drops every subscription
//! costs a few requests a minute rather than hundreds a second.
//!
//! The reopening never holds a reader past its deadline: the handle's reading calls move it
//! along a step at a time (send the request from a sending thread, look for its
//! acknowledgement), and a reopen the server has not acknowledged within the request timeout,
//! or that failed on the way (its stream broke, a server or network error), is abandoned and
//! tried again after a pause that grows with each failure in a row. Only a refusal or the end
//! of the connection ends the subscription. A request abandoned while it is still being sent
//! is ended on the server by its sender once sent, so none is left open there and no
//! cancellation reaches the server before its request.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, TimeoutKind};
use crate::jsonrpc::Message;
use crate::sync::{deadline_after, lock};
use crate::types::SUBSCRIPTIONS_LISTEN;

use super::super::era::session::Session;
use super::listen::Subscription;
use super::open::{abandon, listen_request, send_listen, Sending};
use super::route::Follower;
use super::state::{SubscriptionEnd, SubscriptionEvent};

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

    /// Hands `event` out on the next read, before anything else.
    pub(super) fn hold(&mut self, event: SubscriptionEvent) {
        self.held = Some(event);
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
    /// Moves a reopening along without waiting for the server (`deadline` bounds a send on the
    /// caller's thread).
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
                    return Some(self.resubscribed(pending.reason));
                }
                Outcome::Failed(err) => {
                    self.not_reopened(&mut reopening, pending.reason, pending.id, err);
                }
            }
        }
        let due = matches!(&reopening.waiting, Some((_, at)) if *at <= Instant::now());
        let (reason, _) = reopening.waiting.take_if(|_| due)?;
        // The request is made and recorded as pending under the lock, so that another reader
        // of this subscription sees the reopening under way; it is sent without the lock, so
        // that a send on this thread (a queued transport) holds no other reader past its
        // own deadline.
        let reopen = self.prepare_reopen(&mut reopening, reason, deadline)?;
        drop(reopening);
        self.send_reopen(reopen);
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
                self.resubscribed(pending.reason)
            }
            None => event,
        }
    }

    /// The report of a reopened stream. What changed while it was down went unannounced, so
    /// the response cache is emptied first: the re-listing the report asks for reaches the
    /// server.
    fn resubscribed(&self, reason: String) -> SubscriptionEvent {
        if let Some(follower) = self.follower.upgrade() {
            follower.cache.clear();
        }
        SubscriptionEvent::Resubscribed { reason }
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

    /// The session and follower of the subscription, while the client lives.
    fn upgrade(&self) -> Option<(Arc<Session>, Arc<Follower>)> {
        Some((self.session.upgrade()?, self.follower.upgrade()?))
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

    /// Makes a new `subscriptions/listen` request and records it as pending; `None` when
    /// the subscription ended.
    fn prepare_reopen(
        &self,
        reopening: &mut Reopening,
        reason: String,
        deadline: Option<Instant>,
    ) -> Option<Reopen> {
        if self.sub.is_ended() {
            return None;
        }
        let Some((session, follower)) = self.upgrade() else {
            self.sub.end(SubscriptionEnd::ConnectionLost { reason });
            return None;
        };
        let request = listen_request(&session, &follower, &self.sub)?;
        let sent = Instant::now();
        let gives_up_at = deadline_after(sent, session.conn.request_timeout());
        reopening.pending = Some(Pending {
            reason,
            id: request.0,
            sent,
            gives_up_at,
        });
        Some(Reopen {
            send_by: deadline.map_or(gives_up_at, |d| d.min(gives_up_at)),
            session,
            follower,
            request,
            gives_up_at,
        })
    }

    /// Sends a reopening's request, without waiting for the server.
    fn send_reopen(&self, reopen: Reopen) {
        let id = reopen.request.0;
        let sending = send_listen(
            &reopen.session,
            &reopen.follower,
            &self.sub,
            reopen.request,
            reopen.gives_up_at,
            reopen.send_by,
        );
        let failed = match sending {
            Sending::Sent => return,
            Sending::Busy => None,
            Sending::Failed(err) => Some(err),
        };
        let mut reopening = lock(&self.reopening);
        // Unless another reader settled it meanwhile.
        let Some(pending) = reopening.pending.take_if(|pending| pending.id == id) else {
            return;
        };
        match failed {
            None => {
                log::debug!("no sending thread free to reopen a subscription; trying shortly");
                reopening.waiting = Some((pending.reason, Instant::now() + FIRST_PAUSE));
            }
            Some(err) => self.not_reopened(&mut reopening, pending.reason, id, err),
        }
    }

    /// Listen request `id` did not reopen the subscription: a refusal ends it as failed, the
    /// connection's end as lost; anything else is tried again after a pause growing up to
    /// [`LONGEST_PAUSE`], so a server failing for good costs a few requests a minute.
    fn not_reopened(&self, reopening: &mut Reopening, reason: String, id: i64, err: Error) {
        let Some((session, follower)) = self.upgrade() else {
            self.sub.end(SubscriptionEnd::ConnectionLost { reason });
            return;
        };
        follower.listens.remove(&self.sub);
        if let Some(closed) = session.closed() {
            self.sub.end(SubscriptionEnd::ConnectionLost {
                reason: closed.reason.clone(),
            });
            return;
        }
        match err {
            Error::Closed(closed) => {
                self.sub.end(SubscriptionEnd::ConnectionLost {
                    reason: closed.reason.clone(),
                });
            }
            err @ Error::Rpc(_) => {
                self.sub.end(SubscriptionEnd::Failed {
                    reason: format!("{reason}; re-opening failed: {err}"),
                });
            }
            err => {
                // Ended on the server unless it is still being sent: then its sender does
                // that once it was.
                if self.sub.give_up(id) {
                    let why = match err {
                        Error::Timeout { .. } => "not acknowledged in time",
                        _ => "re-opening failed",
                    };
                    abandon(&session, id, why);
                }
                let at = reopening.retry();
                log::debug!(
                    "re-opening subscription {id} failed ({err}); trying again in {:?}",
                    at.saturating_duration_since(Instant::now())
                );
                reopening.waiting = Some((reason, at));
            }
        }
    }
}

/// A reopening's request, made and recorded, to be sent.
struct Reopen {
    session: Arc<Session>,
    follower: Arc<Follower>,
    request: (i64, Message),
    /// When it is abandoned unless acknowledged; the sending thread's deadline.
    gives_up_at: Instant,
    /// The deadline of a send on the caller's thread.
    send_by: Instant,
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
