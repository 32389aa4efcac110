//! What hosts follow: a stateless-era host's `subscriptions/listen` streams, and the resources
//! hosts subscribed to in either era.
//!
//! Each resource followed is one subscription to its server through the manager (opened again
//! whenever the server reconnects), shared by every host that follows it, with a thread
//! (`umcp-bridge-resource`) that hands its updates on; at most [`MAX_FOLLOWED`] resources and
//! [`MAX_LISTENS`] listen streams at once. A listen stream is a request that stays open: it
//! is acknowledged at once, answered with a graceful end when the bridge stops, and ended by
//! the host's cancellation (or, over HTTP, by closing its stream).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject, RequestId, Response};
use umcp::types::{
    ServerNotification, SubscriptionFilter, META_SUBSCRIPTION_ID, SUBSCRIPTIONS_ACKNOWLEDGED,
};
use umcp::{ManagedSubscription, SubscriptionEvent};

use super::host::Host;
use super::outbox::{Kind, Shared};
use super::upstream::Upstream;
use super::wire::{notification, refusal};
use crate::sync::lock;

/// How many resources hosts may follow at once, each a subscription and a thread.
pub const MAX_FOLLOWED: usize = 64;

/// How many `subscriptions/listen` streams may be open at once.
pub const MAX_LISTENS: usize = 64;

/// One open listen stream.
struct Listen {
    host: Weak<Host>,
    id: RequestId,
    reply: Shared,
    filter: SubscriptionFilter,
}

/// One resource followed, and who follows it.
struct Followed {
    subscription: Arc<ManagedSubscription>,
    /// Handshake-era hosts that subscribed to it.
    sessions: Vec<Weak<Host>>,
    /// Listen streams that name it, by host and request id.
    listens: Vec<(u64, RequestId)>,
}

/// What hosts follow.
#[derive(Default)]
pub struct Followers {
    listens: Mutex<Vec<Listen>>,
    resources: Mutex<HashMap<String, Followed>>,
}

impl Followers {
    /// Opens listen stream `id` of `host`: acknowledged at once with what the bridge honours
    /// (each resource it could follow), and fed from then on.
    pub fn listen(
        self: &Arc<Followers>,
        upstream: &Upstream,
        (host, id, reply): (&Arc<Host>, RequestId, Shared),
        wanted: SubscriptionFilter,
    ) -> Result<(), ErrorObject> {
        if lock(&self.listens).len() >= MAX_LISTENS {
            let why = format!("{MAX_LISTENS} listen streams are open already");
            return Err(refusal(ErrorCode::INTERNAL_ERROR, why));
        }
        let mut honoured = wanted.clone();
        honoured.resource_subscriptions.retain(|uri| {
            let followed = self.follow(upstream, uri, Follower::Listen(host.id, id.clone()));
            if let Err(e) = &followed {
                log::debug!("listen: not following {uri}: {e}");
            }
            followed.is_ok()
        });
        let mut params = serde_json::to_value(&honoured).unwrap_or_else(|_| json!({}));
        params =
            json!({ "notifications": params, "_meta": { META_SUBSCRIPTION_ID: id.to_value() } });
        reply.send(
            notification(SUBSCRIPTIONS_ACKNOWLEDGED, params),
            Kind::Answer,
        );
        lock(&self.listens).push(Listen {
            host: Arc::downgrade(host),
            id,
            reply,
            filter: honoured,
        });
        Ok(())
    }

    /// Ends listen stream `id` of host `host` (the host cancelled it); false when there is none.
    pub fn unlisten(&self, host: u64, id: &RequestId) -> bool {
        let ended = {
            let mut listens = lock(&self.listens);
            let found = listens
                .iter()
                .position(|l| l.id == *id && owner(l) == Some(host));
            found.map(|at| listens.remove(at))
        };
        let Some(listen) = ended else {
            return false;
        };
        for uri in &listen.filter.resource_subscriptions {
            self.unfollow(uri, |f| f.listens.retain(|(h, i)| !(*h == host && i == id)));
        }
        true
    }

    /// Ends every listen stream gracefully (the bridge stops): each gets its result.
    pub fn end_all(&self) {
        let listens: Vec<Listen> = lock(&self.listens).drain(..).collect();
        for listen in listens {
            let meta = json!({ META_SUBSCRIPTION_ID: listen.id.to_value() });
            let result = json!({ "resultType": "complete", "_meta": meta });
            let response = Response::ok(listen.id, result);
            listen.reply.send(response.into(), Kind::Answer);
        }
        let followed: Vec<Followed> = lock(&self.resources).drain().map(|(_, f)| f).collect();
        for f in followed {
            f.subscription.close();
        }
    }

    /// Tells every listen stream that wants it of a notification (with `params` as the
    /// server sent them, without `_meta`).
    pub fn announce(&self, method: &str, uri: Option<&str>, params: &Value) {
        let listens = lock(&self.listens);
        for listen in listens.iter().filter(|l| l.filter.wants(method, uri)) {
            let mut params = params.clone();
            if let Value::Object(object) = &mut params {
                object.insert(
                    "_meta".into(),
                    json!({ META_SUBSCRIPTION_ID: listen.id.to_value() }),
                );
            }
            listen.reply.send(notification(method, params), Kind::Note);
        }
    }

    /// Subscribes handshake-era `host` to resource `uri`.
    pub fn subscribe(
        self: &Arc<Followers>,
        upstream: &Upstream,
        host: &Arc<Host>,
        uri: &str,
    ) -> umcp::Result<()> {
        self.follow(upstream, uri, Follower::Session(Arc::downgrade(host)))
    }

    /// Unsubscribes `host` from `uri`.
    pub fn unsubscribe(&self, host: &Arc<Host>, uri: &str) {
        self.unfollow(uri, |f| f.sessions.retain(|h| !is(h, host)));
    }

    /// Forgets what a host that is gone followed.
    pub fn forget(&self, host: &Arc<Host>) {
        let ids: Vec<RequestId> = lock(&self.listens)
            .iter()
            .filter(|l| owner(l) == Some(host.id) || l.host.strong_count() == 0)
            .map(|l| l.id.clone())
            .collect();
        for id in ids {
            self.unlisten(host.id, &id);
        }
        let uris: Vec<String> = lock(&self.resources).keys().cloned().collect();
        for uri in uris {
            self.unfollow(&uri, |f| f.sessions.retain(|h| !is(h, host)));
        }
    }

    fn follow(
        self: &Arc<Followers>,
        upstream: &Upstream,
        uri: &str,
        who: Follower,
    ) -> umcp::Result<()> {
        let (known, count) = {
            let resources = lock(&self.resources);
            (resources.contains_key(uri), resources.len())
        };
        if !known {
            if count >= MAX_FOLLOWED {
                let why = format!("{MAX_FOLLOWED} resources are followed already");
                return Err(umcp::Error::Invalid(why));
            }
            // Subscribed without the lock: it takes a request to the server.
            let subscription = Arc::new(upstream.follow(uri)?);
            let mut resources = lock(&self.resources);
            match resources.contains_key(uri) {
                true => subscription.close(),
                false => {
                    self.pump(uri, Arc::clone(&subscription))?;
                    let followed = Followed {
                        subscription,
                        sessions: Vec::new(),
                        listens: Vec::new(),
                    };
                    resources.insert(uri.to_owned(), followed);
                }
            }
        }
        let mut resources = lock(&self.resources);
        let Some(followed) = resources.get_mut(uri) else {
            return Err(umcp::Error::Invalid(format!("{uri} is no longer followed")));
        };
        match who {
            Follower::Session(host) => followed.sessions.push(host),
            Follower::Listen(host, id) => followed.listens.push((host, id)),
        }
        Ok(())
    }

    /// Removes a follower of `uri` with `remove`; the last one gone closes the subscription.
    fn unfollow(&self, uri: &str, remove: impl FnOnce(&mut Followed)) {
        let mut resources = lock(&self.resources);
        let Some(followed) = resources.get_mut(uri) else {
            return;
        };
        remove(followed);
        followed.sessions.retain(|h| h.strong_count() > 0);
        if followed.sessions.is_empty() && followed.listens.is_empty() {
            if let Some(followed) = resources.remove(uri) {
                followed.subscription.close();
            }
        }
    }

    /// Starts the thread that hands the updates of `uri` on to its followers, until the
    /// subscription is closed.
    fn pump(
        self: &Arc<Followers>,
        uri: &str,
        subscription: Arc<ManagedSubscription>,
    ) -> umcp::Result<()> {
        let followers = Arc::downgrade(self);
        let followed = uri.to_owned();
        let spawned = std::thread::Builder::new()
            .name("umcp-bridge-resource".into())
            .spawn(move || {
                while let Some(event) = subscription.recv() {
                    let uri = match event {
                        SubscriptionEvent::Notification(ServerNotification::ResourceUpdated(p)) => {
                            p.uri
                        }
                        // Updates may have been missed while the server was away.
                        SubscriptionEvent::Resubscribed { .. } => followed.clone(),
                        _ => continue,
                    };
                    let Some(followers) = followers.upgrade() else {
                        return;
                    };
                    followers.updated(&followed, &uri);
                }
            });
        spawned.map(drop).map_err(|e| umcp::Error::Io(Arc::new(e)))
    }

    /// `uri` (under the followed `followed`) was updated: every follower hears of it.
    fn updated(&self, followed: &str, uri: &str) {
        let params = json!({ "uri": uri });
        let sessions: Vec<Arc<Host>> = lock(&self.resources)
            .get(followed)
            .map(|f| f.sessions.iter().filter_map(Weak::upgrade).collect())
            .unwrap_or_default();
        for host in sessions {
            let note = notification("notifications/resources/updated", params.clone());
            host.out.send(note, Kind::Note);
        }
        self.announce("notifications/resources/updated", Some(uri), &params);
    }
}

/// Who follows a resource.
enum Follower {
    Session(Weak<Host>),
    Listen(u64, RequestId),
}

fn owner(listen: &Listen) -> Option<u64> {
    listen.host.upgrade().map(|h| h.id)
}

fn is(weak: &Weak<Host>, host: &Arc<Host>) -> bool {
    std::ptr::eq(weak.as_ptr(), Arc::as_ptr(host))
}
