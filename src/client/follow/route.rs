//! The follow layer as the engine sees it ([`Follower`], its [`Observer`]): what the reading
//! threads hand to subscriptions (tagged notifications, the acknowledgement, the listen
//! request's own response, gaps and the end of the connection), and the response cache,
//! which every notification may make stale and the eras consult ([`ResponseCache`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::Value;

use crate::error::{Closed, Error, Result};
use crate::jsonrpc::{decode_value, Notification};
use crate::sync::lock;
use crate::types::{
    ServerNotification, SubscriptionsAcknowledgedNotificationParams, META_SUBSCRIPTION_ID,
    SUBSCRIPTIONS_ACKNOWLEDGED, SUBSCRIPTIONS_LISTEN,
};

use super::super::engine::observer::Observer;
use super::super::engine::pending::Answer;
use super::super::era::session::{CallSpec, ResponseCache};
use super::cache::{Cache, CacheOptions};
use super::state::{Item, Registry, Sub, SubscriptionEnd, SubscriptionEvent};

/// What follows a server on one connection: its subscriptions and its cached results.
pub(crate) struct Follower {
    /// The open subscriptions (`client.listen`).
    pub(crate) listens: Registry,
    pub(crate) cache: Cache,
    /// What each subscription's queue holds (`None`: the notification capacity).
    pub(crate) capacity: Option<usize>,
    /// The tool-list changes announced so far, in either era: a lock's check lists again
    /// after one.
    tool_changes: AtomicU64,
}

impl Follower {
    /// Nothing followed yet, an empty cache with `options`, and subscriptions holding
    /// `capacity` events each.
    pub(crate) fn new(options: CacheOptions, capacity: Option<usize>) -> Follower {
        Follower {
            listens: Registry::default(),
            cache: Cache::new(options),
            capacity,
            tool_changes: AtomicU64::new(0),
        }
    }

    /// How many tool-list changes the server has announced.
    pub(crate) fn tool_changes(&self) -> u64 {
        self.tool_changes.load(Ordering::SeqCst)
    }
}

impl Observer for Follower {
    fn notification(&self, notification: Notification) -> Option<Notification> {
        if notification.method == "notifications/tools/list_changed" {
            self.tool_changes.fetch_add(1, Ordering::SeqCst);
        }
        route(&self.listens, &self.cache, notification)
    }

    fn unmatched(&self, id: i64, result: Result<Answer>) -> Option<Result<Answer>> {
        // The response to a `subscriptions/listen` request ends that subscription.
        let Some(sub) = self.listens.by_id(id) else {
            return Some(result);
        };
        let result = result.and_then(|answer| answer.decode(SUBSCRIPTIONS_LISTEN));
        finish(&self.listens, &self.cache, &sub, id, result);
        None
    }

    fn gap(&self, reason: &str) {
        gap(&self.listens, &self.cache, reason);
    }

    fn closed(&self, closed: &Closed) {
        // A closed connection ends every subscription.
        self.listens.end_all(&closed.reason);
    }
}

impl ResponseCache for Follower {
    fn keeps_legacy(&self, method: &str) -> bool {
        self.cache.keeps_legacy(method)
    }

    fn through(
        &self,
        spec: &CallSpec<'_>,
        legacy: bool,
        context: &dyn Fn() -> u64,
        wire: &mut dyn FnMut(&CallSpec<'_>) -> Result<Answer>,
    ) -> Result<Answer> {
        self.cache.through(spec, legacy, context, wire)
    }
}

/// Takes what belongs to a subscription; returns the notification when it is for the shared
/// queue too (untagged list changes and resource updates are both: the handshake era has no
/// tags, and a handshake-era subscription wanting them gets a copy).
fn route(registry: &Registry, cache: &Cache, notification: Notification) -> Option<Notification> {
    let uri = notification
        .params
        .as_ref()
        .and_then(|p| p.get("uri"))
        .and_then(Value::as_str);
    // What changed is stale in the cache from now on, whoever the notification is for.
    cache.invalidate(&notification.method, uri);
    if notification.method == "notifications/cancelled" {
        // On stdio a server may end a subscription by cancelling its listen request, tagged
        // with the subscription like everything else about it or not.
        let cancelled = notification.params.as_ref().and_then(|p| {
            let id = p.get("requestId")?;
            Some((as_id(id)?, p.get("reason").and_then(Value::as_str)))
        });
        if let Some((id, reason)) = cancelled {
            if let Some(sub) = registry.by_id(id) {
                registry.remove(&sub);
                sub.end(SubscriptionEnd::CancelledByServer {
                    reason: reason.map(str::to_owned),
                });
                return None;
            }
        }
    }
    if let Some(id) = subscription_id(&notification) {
        match registry.by_id(id) {
            Some(sub) if notification.method == SUBSCRIPTIONS_ACKNOWLEDGED => {
                let params = notification.params.unwrap_or(Value::Null);
                let ack: SubscriptionsAcknowledgedNotificationParams =
                    decode_value(&params).unwrap_or_default();
                sub.acknowledge_listen(id, ack.notifications);
            }
            // The server must not send what was not asked for; one that does is not heard.
            Some(sub) if !sub.requested.wants(&notification.method, uri) => log::debug!(
                "dropping `{}` for subscription {id}, which did not ask for it",
                notification.method
            ),
            Some(sub) => sub.deliver(ServerNotification::from_notification(notification)),
            None => log::debug!(
                "dropping `{}` for subscription {id}, which is not open",
                notification.method
            ),
        }
        return None;
    }
    let subs = registry.snapshot();
    if !subs.is_empty() {
        let uri = notification
            .params
            .as_ref()
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str);
        let mut copy = None;
        // A stateless-era subscription takes only what carries its id: every notification of
        // its stream does, and on stdio the id is how it is told from the others (the spec's
        // MUST). Untagged ones are the handshake era's subscriptions'.
        for sub in subs.into_iter().filter(|sub| !sub.modern) {
            if sub.effective().wants(&notification.method, uri) {
                let note = copy.get_or_insert_with(|| {
                    ServerNotification::from_notification(notification.clone())
                });
                sub.deliver(note.clone());
            }
        }
    }
    Some(notification)
}

/// The response to `sub`'s listen request `id`: the subscription's end, or its refusal, or a
/// broken stream (HTTP) that its handle opens again. What the broken stream would have said
/// is lost, so nothing cached can be trusted from then on.
fn finish(registry: &Registry, cache: &Cache, sub: &Arc<Sub>, id: i64, result: Result<Value>) {
    let acknowledged = lock(&sub.status).acknowledged.is_some();
    match result {
        Ok(_) => {
            log::debug!("the server ended subscription {id}");
            registry.remove(sub);
            sub.end(SubscriptionEnd::Completed);
        }
        Err(err @ Error::Rpc(_)) if !acknowledged => {
            registry.remove(sub);
            sub.refuse(id, err);
        }
        Err(err @ Error::Rpc(_)) => {
            registry.remove(sub);
            sub.end(SubscriptionEnd::Failed {
                reason: err.to_string(),
            });
        }
        Err(err) if acknowledged => {
            // The stream broke (HTTP) without a result: the handle opens it again.
            log::debug!("subscription {id} broke: {err}");
            cache.clear();
            sub.push(Item::Broken(err.to_string()));
        }
        Err(err) => {
            registry.remove(sub);
            sub.refuse(id, err);
        }
    }
}

/// After notifications may have been lost: the cache is cleared, and every handshake-era
/// subscription (fed by that stream) hears of the gap; stateless ones report their own.
fn gap(registry: &Registry, cache: &Cache, reason: &str) {
    cache.clear();
    for sub in registry.snapshot().into_iter().filter(|s| !s.modern) {
        sub.push(Item::Event(SubscriptionEvent::Resubscribed {
            reason: reason.to_owned(),
        }));
    }
}

fn subscription_id(notification: &Notification) -> Option<i64> {
    let meta = notification.params.as_ref()?.get("_meta")?;
    as_id(meta.get(META_SUBSCRIPTION_ID)?)
}

/// Reads a request id as this client writes them (numbers), accepting a numeric string.
fn as_id(value: &Value) -> Option<i64> {
    value
        .as_i64()
        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
}
