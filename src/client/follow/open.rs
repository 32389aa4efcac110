//! Opening a subscription on the server (`subscriptions/listen`, or the handshake era's
//! `resources/subscribe`), and ending it there.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::error::{Error, Result, TimeoutKind};
use crate::jsonrpc::{Message, Request, RequestId};
use crate::sync::{deadline_after, deadline_in, lock};
use crate::transport::Transport;
use crate::types::{SubscriptionFilter, SUBSCRIPTIONS_LISTEN};

use super::super::engine::handover::cancellation;
use super::super::engine::request_options::RequestOptions;
use super::super::engine::senders::{AfterSend, Job, Report};
use super::super::era::call::call;
use super::super::era::session::{CallSpec, Session};
use super::route::Follower;
use super::state::{Settled, Sub, SubscriptionEnd};

/// The bound on sending `notifications/cancelled` or `resources/unsubscribe` on close.
pub(super) const CLOSE_DEADLINE: Duration = Duration::from_secs(5);

/// Sends `subscriptions/listen` and waits up to `timeout` for its acknowledgement.
pub(super) fn open_modern(
    session: &Session,
    follower: &Follower,
    sub: &Arc<Sub>,
    timeout: Duration,
) -> Result<()> {
    let started = Instant::now();
    // A timeout too long for the clock (`Duration::MAX`) is no limit, never a panic.
    let deadline = deadline_after(started, timeout);
    let Some((id, request)) = listen_request(session, follower, sub) else {
        // Nobody holds the subscription yet: only the end of the connection ends it.
        return Err(match session.closed() {
            Some(closed) => Error::Closed(closed),
            None => Error::Protocol("the subscription ended before it was opened".into()),
        });
    };
    log::debug!("opening subscription {id}");
    let sent = session.conn.transport.send(&request, deadline);
    if let Err(err) = listen_sent(session.conn.transport.as_ref(), sub, id, sent) {
        follower.listens.remove(sub);
        return Err(err);
    }
    match sub.wait_settled(deadline) {
        Settled::Acknowledged => Ok(()),
        Settled::Refused(err) => Err(err),
        Settled::Ended(end) => Err(Error::Protocol(format!(
            "subscription {id} ended before it was acknowledged: {end:?}"
        ))),
        Settled::TimedOut => {
            follower.listens.remove(sub);
            cancel(session, id, "not acknowledged in time");
            Err(Error::Timeout {
                method: SUBSCRIPTIONS_LISTEN.to_owned(),
                elapsed: started.elapsed(),
                kind: TimeoutKind::Request,
                stderr_tail: None,
            })
        }
    }
}

/// How sending a reopening `subscriptions/listen` went.
pub(super) enum Sending {
    /// The request is on its way: its acknowledgement, its refusal or the failure to send it
    /// reaches the subscription's state, announced by an `Item::Settled`.
    Sent,
    /// Every sending thread is taken: nothing was sent.
    Busy,
    /// The request could not be sent.
    Failed(Error),
}

/// Sends listen request `id` again without waiting for the server: from a sending thread when the
/// transport's send waits for it (an HTTP POST), else on this thread by `send_by`.
pub(super) fn send_listen(
    session: &Session,
    follower: &Follower,
    sub: &Arc<Sub>,
    (id, request): (i64, Message),
    deadline: Instant,
    send_by: Instant,
) -> Sending {
    log::debug!("re-opening subscription as {id}");
    if !session.conn.transport.send_waits_for_peer() {
        let sent = session.conn.transport.send(&request, send_by.min(deadline));
        return match listen_sent(session.conn.transport.as_ref(), sub, id, sent) {
            Ok(()) => Sending::Sent,
            Err(err) => {
                follower.listens.remove(sub);
                Sending::Failed(err)
            }
        };
    }
    let job = Job {
        message: request,
        deadline,
        report: Report::Then(after_send(id, Arc::clone(sub))),
    };
    match session.conn.send_later(job) {
        Ok(()) => Sending::Sent,
        Err(_) => {
            follower.listens.remove(sub);
            Sending::Busy
        }
    }
}

/// A new `subscriptions/listen` request for `sub`, whose id it now follows; `None` once the
/// subscription has ended (closed by another thread), when nothing must be sent.
pub(super) fn listen_request(
    session: &Session,
    follower: &Follower,
    sub: &Arc<Sub>,
) -> Option<(i64, Message)> {
    let id = session.conn.next_request_id();
    if !follower.listens.follow(sub, id) {
        return None;
    }
    let params = json!({ "notifications": sub.requested });
    let request = Message::Request(Request::new(id, SUBSCRIPTIONS_LISTEN, Some(params)));
    Some((id, request))
}

/// Records that listen request `id` was sent (or not). One let go of meanwhile is ended on the
/// server now, after it and never before; a failure is returned only while it is still followed.
fn listen_sent(transport: &dyn Transport, sub: &Sub, id: i64, sent: Result<()>) -> Result<()> {
    if sub.sent(id) {
        return sent;
    }
    if let Err(err) = &sent {
        log::debug!("listen request {id}, let go of, could not be sent: {err}");
    }
    let deadline = Instant::now() + CLOSE_DEADLINE;
    end_request(transport, id, "subscription closed or reopened", deadline);
    Ok(())
}

/// Serves a subscription with the handshake era's means.
pub(super) fn open_legacy(session: &Session, follower: &Follower, sub: &Arc<Sub>) {
    let caps = match session.init.read() {
        Ok(init) => init.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
    .map(|init| init.capabilities.clone())
    .unwrap_or_default();
    let wanted = &sub.requested;
    let list_changed = |declared: Option<bool>| declared == Some(true);
    let mut ack = SubscriptionFilter {
        tools_list_changed: wanted.tools_list_changed
            && list_changed(caps.tools.as_ref().and_then(|t| t.list_changed)),
        prompts_list_changed: wanted.prompts_list_changed
            && list_changed(caps.prompts.as_ref().and_then(|p| p.list_changed)),
        resources_list_changed: wanted.resources_list_changed
            && list_changed(caps.resources.as_ref().and_then(|r| r.list_changed)),
        resource_subscriptions: Vec::new(),
    };
    let can_subscribe = caps.resources.as_ref().and_then(|r| r.subscribe) == Some(true);
    // Registered before anything is sent: a server may send an update right after its answer
    // to `resources/subscribe`, and the reading thread hands it over before this thread hears
    // the answer. Until acknowledged below, the subscription takes what it asked for.
    follower.listens.insert(sub);
    if let Some(closed) = session.closed() {
        // The connection ended before the registration, whose end nobody will report.
        follower.listens.remove(sub);
        sub.end(SubscriptionEnd::ConnectionLost {
            reason: closed.reason.clone(),
        });
        return;
    }
    if can_subscribe {
        // One request timeout for all of them: a server that never answers costs it once.
        let deadline = deadline_in(session.conn.request_timeout());
        for uri in &wanted.resource_subscriptions {
            match legacy_call(session, "resources/subscribe", uri, deadline) {
                Ok(()) => {
                    let mut uris = lock(&session.subscriptions);
                    if !uris.contains(uri) {
                        uris.push(uri.clone());
                    }
                    ack.resource_subscriptions.push(uri.clone());
                }
                Err(err) => log::debug!(
                    "resources/subscribe {} failed: {err}",
                    crate::redact::url(uri)
                ),
            }
        }
    }
    sub.acknowledge(ack);
}

/// Sends `method` for `uri` and waits for its answer until `deadline`.
pub(super) fn legacy_call(
    session: &Session,
    method: &str,
    uri: &str,
    deadline: Instant,
) -> Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(Error::Timeout {
            method: method.to_owned(),
            elapsed: Duration::ZERO,
            kind: TimeoutKind::Request,
            stderr_tail: None,
        });
    }
    let options = RequestOptions::default().with_timeout(left);
    let spec = CallSpec {
        method,
        params: Some(json!({ "uri": uri })),
        options: &options,
        handshake: false,
    };
    call(session, spec).map(drop)
}

/// What a sending thread does once it sent listen request `id` of `sub`: records it, and
/// hands a failure to the subscription (success is the server's acknowledgement, which comes
/// through the engine's reading threads).
fn after_send(id: i64, sub: Arc<Sub>) -> AfterSend {
    Box::new(move |transport, outcome| {
        if let Err(err) = listen_sent(transport, &sub, id, outcome) {
            sub.refuse(id, err);
        }
    })
}

/// Ends listen request `id` on the server: over HTTP by closing its stream, elsewhere with
/// `notifications/cancelled`.
pub(super) fn cancel(session: &Session, id: i64, reason: &str) {
    let deadline = Instant::now() + CLOSE_DEADLINE;
    end_request(session.conn.transport.as_ref(), id, reason, deadline);
}

/// As [`cancel`], on `transport`, sending by `deadline`.
fn end_request(transport: &dyn Transport, id: i64, reason: &str, deadline: Instant) {
    transport.abandon(&RequestId::from(id));
    if transport.kind() == "streamable-http" {
        return;
    }
    if let Err(err) = transport.send(&cancellation(id, reason), deadline) {
        log::debug!("could not cancel subscription {id}: {err}");
    }
}

/// Ends listen request `id` on the server without holding the caller: as [`cancel`], with
/// `notifications/cancelled` left to a sending thread (or dropped when none is free).
pub(super) fn abandon(session: &Session, id: i64, reason: &str) {
    session.conn.transport.abandon(&RequestId::from(id));
    if session.conn.transport.kind() != "streamable-http" {
        session.conn.send_cancelled(id, reason);
    }
}
