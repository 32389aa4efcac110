//! Opening a subscription on the server (`subscriptions/listen`, or the handshake era's
//! `resources/subscribe`), and ending it there.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use crate::error::{Error, Result, TimeoutKind};
use crate::jsonrpc::{Message, Notification, Request, RequestId};
use crate::types::{SubscriptionFilter, SUBSCRIPTIONS_LISTEN};

use super::super::options::{lock, RequestOptions};
use super::super::senders::{Job, Report};
use super::super::session::{CallSpec, Shared};
use super::state::{Settled, Sub};
use super::CLOSE_DEADLINE;

/// Sends `subscriptions/listen` and waits for its acknowledgement.
pub(super) fn open_modern(shared: &Shared, sub: &Arc<Sub>) -> Result<()> {
    let started = Instant::now();
    let deadline = started + shared.options.request_timeout;
    let (id, request) = listen_request(shared, sub);
    log::debug!("opening subscription {id}");
    if let Err(err) = shared.transport.send(&request, deadline) {
        shared.listens.remove(sub);
        return Err(err);
    }
    match sub.wait_settled(deadline) {
        Settled::Acknowledged => Ok(()),
        Settled::Refused(err) => Err(err),
        Settled::Ended(end) => Err(Error::Protocol(format!(
            "subscription {id} ended before it was acknowledged: {end:?}"
        ))),
        Settled::TimedOut => {
            shared.listens.remove(sub);
            cancel(shared, id, "not acknowledged in time");
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
    /// Request `id` is on its way: its acknowledgement, its refusal or the failure to send it
    /// reaches the subscription's state, announced by an `Item::Settled`.
    Sent(i64),
    /// Every sending thread is taken: nothing was sent.
    Busy,
    /// Request `id` could not be sent.
    Failed(i64, Error),
}

/// Sends `subscriptions/listen` for `sub` again without waiting for the server: from a
/// sending thread, by `deadline`, when the transport's send waits for the server (an HTTP
/// POST waits for its status), else on the caller's thread by `send_by` at the latest.
pub(super) fn reopen_modern(
    shared: &Shared,
    sub: &Arc<Sub>,
    deadline: Instant,
    send_by: Instant,
) -> Sending {
    let (id, request) = listen_request(shared, sub);
    log::debug!("re-opening subscription as {id}");
    if !shared.transport.send_waits_for_peer() {
        return match shared.transport.send(&request, send_by.min(deadline)) {
            Ok(()) => Sending::Sent(id),
            Err(err) => {
                shared.listens.remove(sub);
                Sending::Failed(id, err)
            }
        };
    }
    let job = Job {
        message: request,
        deadline,
        report: Report::Listen(id, Arc::clone(sub)),
    };
    match shared.send_later(job) {
        Ok(()) => Sending::Sent(id),
        Err(_) => {
            shared.listens.remove(sub);
            Sending::Busy
        }
    }
}

/// A new `subscriptions/listen` request for `sub`, whose id it now follows.
fn listen_request(shared: &Shared, sub: &Arc<Sub>) -> (i64, Message) {
    let id = shared.next_request_id();
    {
        let mut status = lock(&sub.status);
        status.id = Some(id);
        status.acknowledged = None;
        status.refused = None;
    }
    // Registered before sending, so an early acknowledgement finds it.
    shared.listens.insert(sub);
    let params = json!({ "notifications": sub.requested });
    let request = Message::Request(Request::new(id, SUBSCRIPTIONS_LISTEN, Some(params)));
    (id, request)
}

/// Serves a subscription with the handshake era's means.
pub(super) fn open_legacy(shared: &Shared, sub: &Arc<Sub>) {
    let caps = match shared.init.read() {
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
    if can_subscribe {
        // One request timeout for all of them: a server that never answers costs it once.
        let deadline = Instant::now() + shared.options.request_timeout;
        for uri in &wanted.resource_subscriptions {
            match legacy_call(shared, "resources/subscribe", uri, deadline) {
                Ok(()) => {
                    let mut uris = lock(&shared.subscriptions);
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
    shared.listens.insert(sub);
}

/// Sends `method` for `uri` and waits for its answer until `deadline`.
pub(super) fn legacy_call(
    shared: &Shared,
    method: &str,
    uri: &str,
    deadline: Instant,
) -> Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(Error::Timeout {
            method: method.to_owned(),
            elapsed: std::time::Duration::ZERO,
            kind: TimeoutKind::Request,
            stderr_tail: None,
        });
    }
    let options = RequestOptions::default().with_timeout(left);
    shared
        .call(CallSpec {
            method,
            params: Some(json!({ "uri": uri })),
            options: &options,
            handshake: false,
        })
        .map(|_| ())
}

/// Ends listen request `id` on the server: over HTTP by closing its stream, elsewhere with
/// `notifications/cancelled`.
pub(super) fn cancel(shared: &Shared, id: i64, reason: &str) {
    shared.transport.abandon(&RequestId::from(id));
    if shared.transport.kind() == "streamable-http" {
        return;
    }
    let params = json!({ "requestId": id, "reason": reason });
    let message = Message::Notification(Notification::new("notifications/cancelled", Some(params)));
    if let Err(err) = shared
        .transport
        .send(&message, Instant::now() + CLOSE_DEADLINE)
    {
        log::debug!("could not cancel subscription {id}: {err}");
    }
}

/// Ends listen request `id` on the server without holding the caller: as [`cancel`], with
/// `notifications/cancelled` left to a sending thread (or dropped when none is free).
pub(super) fn abandon(shared: &Shared, id: i64, reason: &str) {
    shared.transport.abandon(&RequestId::from(id));
    if shared.transport.kind() != "streamable-http" {
        shared.send_cancelled(id, reason);
    }
}
