//! The router thread: sorts what the transport delivers into responses, notifications and
//! server requests.

use std::sync::{Arc, Weak};

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::error::{Closed, Error};
use crate::jsonrpc::{Message, Notification, Response};
use crate::transport::Inbound;
use crate::types::{ProgressNotificationParams, ServerNotification};

use super::options::lock;
use super::server_requests;
use super::session::{Reply, Shared};

/// Starts the router for `shared`, reading `inbox` until the connection closes.
///
/// The thread holds only a weak reference between messages, so dropping the last client
/// handle is never blocked by the router keeping the session alive.
/// `done` is dropped when the thread ends, which is how `close` waits for it with a bound.
pub(crate) fn spawn(
    shared: &Arc<Shared>,
    inbox: Receiver<Inbound>,
    done: Sender<()>,
) -> std::io::Result<()> {
    let weak = Arc::downgrade(shared);
    let handle = std::thread::Builder::new()
        .name("umcp-router".into())
        .spawn(move || {
            run(weak, inbox);
            drop(done);
        })?;
    *lock(&shared.router) = Some(handle);
    Ok(())
}

fn run(weak: Weak<Shared>, inbox: Receiver<Inbound>) {
    for inbound in inbox.iter() {
        let Some(shared) = weak.upgrade() else { return };
        match inbound {
            Inbound::Message(message) => route(&shared, message),
            Inbound::Batch(messages) => {
                // Batches exist only in protocol 2025-03-26; elsewhere they break the protocol.
                let version = shared
                    .protocol_version
                    .read()
                    .map(|v| v.clone())
                    .unwrap_or_default();
                if version == "2025-03-26" {
                    for message in messages {
                        route(&shared, message);
                    }
                } else {
                    log::debug!(
                        "dropping a batch of {} under protocol {version:?}",
                        messages.len()
                    );
                }
            }
            Inbound::Failed(id, error) => {
                if let Some(n) = id.as_i64() {
                    finish(&shared, n, Err(error));
                }
            }
            Inbound::Closed(closed) => {
                close_all(&shared, closed);
                return;
            }
        }
    }
    // Every sender is gone without a closing word: the transport ended.
    if let Some(shared) = weak.upgrade() {
        close_all(
            &shared,
            Arc::new(Closed {
                reason: "transport ended".into(),
                ..Closed::default()
            }),
        );
    }
}

fn route(shared: &Arc<Shared>, message: Message) {
    match message {
        Message::Response(Response {
            id: Some(id),
            result,
        }) => match id.as_i64() {
            Some(n) => finish(shared, n, result.map_err(Error::Rpc)),
            None => log::debug!("dropping a response with unknown id {id}"),
        },
        Message::Response(Response { id: None, result }) => {
            log::debug!("server reported an uncorrelated error: {result:?}");
        }
        Message::Notification(notification) => notify(shared, notification),
        Message::Request(request) => server_requests::handle(shared, request),
    }
}

/// Hands the outcome to the waiting caller, or drops it when nobody waits any more.
fn finish(shared: &Shared, id: i64, result: crate::Result<serde_json::Value>) {
    // Hook: the response to a `subscriptions/listen` request ends that subscription.
    let Some(result) = super::listen::route::finish(shared, id, result) else {
        return;
    };
    let entry = lock(&shared.pending).entries.remove(&id);
    match entry {
        Some(entry) => {
            log::trace!("request {id} `{}` answered", entry.method);
            let _ = entry.tx.send(Reply::Done(result));
        }
        None => log::debug!("dropping a late or unknown response for request {id}"),
    }
}

fn notify(shared: &Shared, notification: Notification) {
    // Hook: subscriptions take what is tagged for them and copy the list changes they want.
    let Some(notification) = super::listen::route::route(shared, notification) else {
        return;
    };
    if notification.method == "notifications/progress" {
        if let Some(params) = notification.params.clone() {
            if let Ok(progress) = serde_json::from_value::<ProgressNotificationParams>(params) {
                route_progress(shared, progress);
                return;
            }
        }
    }
    let note = ServerNotification::from_notification(notification);
    if let ServerNotification::Cancelled(params) = &note {
        if let Some(id) = &params.request_id {
            lock(&shared.cancelled_by_server).push(id.clone());
        }
    }
    if let Some(callback) = &shared.options.on_notification {
        callback(&note);
    }
    let Some(tx) = lock(&shared.notify_tx).clone() else {
        return;
    };
    let rx = &shared.notify_rx;
    let mut note = note;
    loop {
        match tx.try_send(note) {
            Ok(()) => return,
            Err(TrySendError::Full(back)) => {
                // Keep the newest: drop the oldest unread notification to make room.
                if let Ok(old) = rx.try_recv() {
                    log::debug!("notification queue full; dropped {}", old.method());
                }
                note = back;
            }
            Err(TrySendError::Disconnected(_)) => return,
        }
    }
}

/// Progress goes to the request that asked for it; the token is that request's id.
fn route_progress(shared: &Shared, progress: ProgressNotificationParams) {
    let id = token_id(&progress);
    let pending = lock(&shared.pending);
    match id.and_then(|n| pending.entries.get(&n)) {
        Some(entry) => {
            let _ = entry.tx.send(Reply::Progress(progress));
        }
        None => log::debug!("dropping progress for an unknown token"),
    }
}

fn token_id(progress: &ProgressNotificationParams) -> Option<i64> {
    let value = serde_json::to_value(&progress.progress_token).ok()?;
    value
        .as_i64()
        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
}

fn close_all(shared: &Shared, closed: Arc<Closed>) {
    let entries = {
        let mut pending = lock(&shared.pending);
        if pending.closed.is_none() {
            pending.closed = Some(closed.clone());
        }
        std::mem::take(&mut pending.entries)
    };
    lock(&shared.notify_tx).take();
    // Hook: a closed connection ends every subscription.
    super::listen::route::close_all(shared, &closed);
    log::debug!(
        "connection closed ({}); failing {} pending",
        closed.reason,
        entries.len()
    );
    for (_, entry) in entries {
        let _ = entry
            .tx
            .send(Reply::Done(Err(Error::Closed(closed.clone()))));
    }
}
