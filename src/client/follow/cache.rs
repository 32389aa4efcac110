//! The response cache of one connection, driven by the caching hints of 2026-07-28
//! (`ttlMs`, `cacheScope`) on `server/discover`, the list methods and `resources/read`.
//!
//! Every request passes [`Cache::through`] on its way to the wire: a fresh entry for the same
//! method and the same result-affecting params (everything but `_meta`) answers without a round
//! trip. An absent, zero or negative `ttlMs` means stale at once, so only results with a positive
//! one are kept; rounds of a multi round-trip request (params with `inputResponses` or
//! `requestState`) are never served nor stored. A list-changed or resource-updated notification
//! drops the matching entries at once ([`Cache::invalidate`], called as the engine's reading thread
//! hands the notification over).
//!
//! The cache belongs to one connection, whose credentials are those of its one transport, so
//! a `private` entry is never shared with another connection (and no token is ever part of a
//! key); when the transport's authorization context changes (a logout, a new grant), the
//! private entries are dropped, being the identity's before. Each private entry is tagged
//! with the context its request was sent under and served only under it, and an answer that
//! lands after a change is not stored. Handshake-era servers send no hints; their results
//! are cached only with
//! [`Options::with_cache_ttl_without_hints`](crate::Options::with_cache_ttl_without_hints).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::error::Result;
use crate::sync::lock;

use super::super::engine::pending::Answer;
use super::super::era::session::CallSpec;

/// The methods whose results carry caching hints.
const CACHEABLE_METHODS: [&str; 8] = [
    "server/discover",
    "skills/list",
    "skills/get",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// How many results one connection keeps; when full, expired entries go first, then the one
/// closest to expiring.
const CAPACITY: usize = 256;

/// The client-wide cache settings (builders on [`Options`](crate::Options)).
#[derive(Debug, Clone)]
pub(crate) struct CacheOptions {
    pub(crate) enabled: bool,
    pub(crate) ttl_without_hints: Option<Duration>,
}

impl Default for CacheOptions {
    fn default() -> CacheOptions {
        CacheOptions {
            enabled: true,
            ttl_without_hints: None,
        }
    }
}

struct Entry {
    /// The result as it came: the server's text where the transport kept it.
    value: Answer,
    fresh_until: Instant,
    method: String,
    uri: Option<String>,
    /// Not marked `cacheScope: "public"`: it belongs to the authorization context it was
    /// fetched under (handshake-era results, which carry no scope, count as private).
    private: bool,
    /// The authorization context the request was sent under.
    context: u64,
}

/// One connection's cached results.
#[derive(Default)]
pub(crate) struct Cache {
    options: CacheOptions,
    entries: Mutex<HashMap<String, Entry>>,
    /// The transport's authorization context at the last request.
    context: AtomicU64,
}

impl Cache {
    /// An empty cache with `options`.
    pub(crate) fn new(options: CacheOptions) -> Cache {
        Cache {
            options,
            entries: Mutex::default(),
            context: AtomicU64::new(0),
        }
    }

    /// Whether a handshake-era call of `method` goes through the cache: only when the user
    /// asked to cache without hints, since those servers send none.
    pub(crate) fn keeps_legacy(&self, method: &str) -> bool {
        let options = &self.options;
        options.enabled
            && options.ttl_without_hints.is_some()
            && CACHEABLE_METHODS.contains(&method)
    }

    /// Answers `spec` from the cache when fresh, else through `wire`. A new authorization
    /// context first drops the private entries: they were another identity's. `context` reads
    /// the transport's current one, before the request and again after its answer: a private
    /// result is kept only when both are the context the cache last saw, so an answer that
    /// lands after a change (fetched for the identity before) is never stored for the next.
    pub(crate) fn through(
        &self,
        spec: &CallSpec<'_>,
        legacy: bool,
        context: &dyn Fn() -> u64,
        wire: &mut dyn FnMut(&CallSpec<'_>) -> Result<Answer>,
    ) -> Result<Answer> {
        let sent_under = context();
        if self.context.swap(sent_under, Ordering::SeqCst) != sent_under {
            log::debug!("the authorization changed: private cached results dropped");
            lock(&self.entries).retain(|_, e| !e.private);
        }
        let Some(key) = self.key(spec) else {
            return wire(spec);
        };
        if !spec.options.no_cache {
            if let Some(value) = self.fresh(&key, sent_under) {
                log::trace!("`{}` answered from the cache", spec.method);
                return Ok(value);
            }
        }
        let result = wire(spec);
        match &result {
            Ok(value) => self.keep(spec, key, value, legacy, sent_under, context()),
            Err(_) if has_cursor(spec.params.as_ref()) => {
                // A cursor the server no longer accepts: the pages of that list are all
                // suspect.
                self.drop_method(spec.method);
            }
            Err(_) => {}
        }
        result
    }

    /// The fresh entry under `key` that a request under authorization `context` may have: a
    /// private one only if fetched under that context. A stale one is dropped.
    fn fresh(&self, key: &str, context: u64) -> Option<Answer> {
        let now = Instant::now();
        let mut entries = lock(&self.entries);
        let entry = entries.get(key)?;
        if entry.fresh_until <= now {
            entries.remove(key);
            return None;
        }
        (!entry.private || entry.context == context).then(|| entry.value.clone())
    }

    /// Stores `value`, the answer to `spec` sent under authorization context `sent_under`,
    /// when it may be cached; a private one only if the context is still the same `now`, and
    /// the cache has seen no other meanwhile.
    fn keep(
        &self,
        spec: &CallSpec<'_>,
        key: String,
        value: &Answer,
        legacy: bool,
        sent_under: u64,
        now: u64,
    ) {
        let Some((ttl, private)) = self.ttl(value, legacy) else {
            return;
        };
        let current = self.context.load(Ordering::SeqCst);
        if private && (now != sent_under || current != sent_under) {
            log::debug!(
                "the authorization changed while `{}` was answered: its private result is not kept",
                spec.method
            );
            return;
        }
        let entry = Entry {
            value: value.clone(),
            fresh_until: Instant::now(),
            method: spec.method.to_owned(),
            uri: params_uri(spec.params.as_ref()),
            private,
            context: sent_under,
        };
        self.store(key, entry, ttl);
    }

    /// Drops what a notification says changed.
    pub(crate) fn invalidate(&self, method: &str, uri: Option<&str>) {
        match method {
            "notifications/tools/list_changed" => self.drop_method("tools/list"),
            "notifications/prompts/list_changed" => self.drop_method("prompts/list"),
            "notifications/resources/list_changed" => {
                self.drop_method("resources/list");
                self.drop_method("resources/templates/list");
            }
            "notifications/resources/updated" => {
                let Some(updated) = uri else { return };
                // The updated URI may be a sub-resource of the one read, or the other way
                // round.
                lock(&self.entries).retain(|_, e| {
                    let related = e.uri.as_deref().is_some_and(|read| {
                        read == updated || read.starts_with(updated) || updated.starts_with(read)
                    });
                    !(e.method == "resources/read" && related)
                });
            }
            _ => {}
        }
    }

    /// Drops everything: the notifications that would have said what changed may be lost.
    pub(crate) fn clear(&self) {
        lock(&self.entries).clear();
    }

    /// The key of a cacheable request: the method and its params without `_meta`, or `None`
    /// when the request may not be cached.
    fn key(&self, spec: &CallSpec<'_>) -> Option<String> {
        if !self.options.enabled || !CACHEABLE_METHODS.contains(&spec.method) {
            return None;
        }
        let mut params = spec.params.clone().unwrap_or(Value::Null);
        if let Value::Object(map) = &mut params {
            if map.contains_key("inputResponses") || map.contains_key("requestState") {
                return None;
            }
            map.remove("_meta");
        }
        Some(format!("{}\n{}", spec.method, canonical(&params)))
    }

    /// How long `value` stays fresh, if it may be cached at all, and whether it is private.
    fn ttl(&self, value: &Answer, legacy: bool) -> Option<(Duration, bool)> {
        let hints: Hints = value.peek().ok()?;
        let private = hints.cache_scope.as_ref().and_then(Value::as_str) != Some("public");
        let result_type = hints.result_type.as_ref().and_then(Value::as_str);
        if result_type.is_some_and(|t| t != "complete") {
            return None;
        }
        match hints.ttl_ms {
            Some(ttl) => {
                // As the typed results read it: a float, or a number of any size, counts too.
                let ms = crate::types::lenient::ttl_millis(&ttl).filter(|ms| *ms > 0)?;
                Some((Duration::from_millis(ms), private))
            }
            None if legacy => self.options.ttl_without_hints.map(|ttl| (ttl, private)),
            None => None,
        }
    }

    fn store(&self, key: String, mut entry: Entry, ttl: Duration) {
        let now = Instant::now();
        // A TTL too long for the clock is as good as forever: a day is plenty.
        let fresh_until = now
            .checked_add(ttl)
            .unwrap_or_else(|| now + Duration::from_secs(86_400));
        let mut entries = lock(&self.entries);
        if entries.len() >= CAPACITY && !entries.contains_key(&key) {
            entries.retain(|_, e| e.fresh_until > now);
            if entries.len() >= CAPACITY {
                let soonest = entries
                    .iter()
                    .min_by_key(|(_, e)| e.fresh_until)
                    .map(|(k, _)| k.clone());
                if let Some(soonest) = soonest {
                    entries.remove(&soonest);
                }
            }
        }
        entry.fresh_until = fresh_until;
        entries.insert(key, entry);
    }

    fn drop_method(&self, method: &str) {
        lock(&self.entries).retain(|_, e| e.method != method);
    }
}

/// JSON with object keys sorted, so equal params give equal keys.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::from(k.as_str()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// The fields of a result that say whether and how long it may be cached.
#[derive(Deserialize)]
struct Hints {
    #[serde(rename = "resultType", default)]
    result_type: Option<Value>,
    #[serde(rename = "ttlMs", default)]
    ttl_ms: Option<Value>,
    #[serde(rename = "cacheScope", default)]
    cache_scope: Option<Value>,
}

fn params_uri(params: Option<&Value>) -> Option<String> {
    params?.get("uri")?.as_str().map(str::to_owned)
}

fn has_cursor(params: Option<&Value>) -> bool {
    params.and_then(|p| p.get("cursor")).is_some()
}

#[cfg(test)]
mod tests {
    use super::canonical;
    use serde_json::json;

    #[test]
    fn equal_params_give_equal_keys_whatever_the_order() {
        let a = json!({"uri": "x", "cursor": "c", "n": [1, {"b": 1, "a": 2}]});
        let b = json!({"n": [1, {"a": 2, "b": 1}], "cursor": "c", "uri": "x"});
        assert_eq!(canonical(&a), canonical(&b));
        assert_ne!(
            canonical(&a),
            canonical(&json!({"uri": "y", "cursor": "c"}))
        );
    }
}
