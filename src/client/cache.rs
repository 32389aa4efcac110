//! The response cache of one connection, driven by the caching hints of 2026-07-28
//! (`ttlMs`, `cacheScope`) on `server/discover`, the list methods and `resources/read`.
//!
//! Every request passes [`through`] on its way to the wire: a fresh entry for the same method
//! and the same result-affecting params (everything but `_meta`) answers without a round trip.
//! An absent, zero or negative `ttlMs` means stale at once, so only results with a positive
//! one are kept; rounds of a multi round-trip request (params with `inputResponses` or
//! `requestState`) are never served nor stored. A list-changed or resource-updated
//! notification drops the matching entries at once ([`invalidate`], called by the router).
//!
//! The cache belongs to one connection, whose credentials are those of its one transport, so
//! a `private` entry never reaches another authorisation context: it is never shared at all
//! (and no token is ever part of a key). Handshake-era servers send no hints; their results
//! are cached only with [`Options::with_cache_ttl_without_hints`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::error::Result;

use super::options::{lock, Options, RequestOptions};
use super::pending::Answer;
use super::session::{CallSpec, Shared};
use super::Era;

/// The methods whose results carry caching hints.
const CACHEABLE_METHODS: [&str; 6] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// How many results one connection keeps; when full, expired entries go first, then the one
/// closest to expiring.
const CAPACITY: usize = 256;

/// The client-wide cache settings (builders on [`Options`]).
#[derive(Debug, Clone)]
pub(crate) struct CacheOptions {
    enabled: bool,
    ttl_without_hints: Option<Duration>,
}

impl Default for CacheOptions {
    fn default() -> CacheOptions {
        CacheOptions {
            enabled: true,
            ttl_without_hints: None,
        }
    }
}

impl Options {
    /// Whether results with caching hints are cached at all (default on).
    ///
    /// ```
    /// use std::time::Duration;
    /// use umcp::{Options, RequestOptions};
    ///
    /// let options = Options::default()
    ///     .with_response_cache(true)
    ///     // Lists from servers that give no cache hints are kept this long:
    ///     .with_cache_ttl_without_hints(Duration::from_secs(30));
    /// // One request that must see the server's current answer:
    /// let fresh = RequestOptions::default().with_no_cache();
    /// # let _ = (options, fresh);
    /// ```
    pub fn with_response_cache(mut self, enabled: bool) -> Options {
        self.cache.enabled = enabled;
        self
    }

    /// Caches results that carry no hints (handshake-era servers) for `ttl`; by default
    /// they are not cached.
    ///
    /// See the example on [`Options::with_response_cache`].
    pub fn with_cache_ttl_without_hints(mut self, ttl: Duration) -> Options {
        self.cache.ttl_without_hints = Some(ttl);
        self
    }
}

impl RequestOptions {
    /// Skips the cache for this request: it goes to the server, and a cacheable result
    /// replaces the cached one.
    ///
    /// See the example on [`Options::with_response_cache`].
    pub fn with_no_cache(mut self) -> RequestOptions {
        self.no_cache = true;
        self
    }
}

struct Entry {
    /// The result as it came: the server's text where the transport kept it.
    value: Answer,
    fresh_until: Instant,
    method: String,
    uri: Option<String>,
}

/// One connection's cached results.
#[derive(Default)]
pub(crate) struct Cache {
    entries: Mutex<HashMap<String, Entry>>,
}

/// Whether a handshake-era call of `method` goes through the cache: only when the user asked
/// to cache without hints ([`Options::with_cache_ttl_without_hints`]), since those servers
/// send none.
pub(crate) fn wanted_in_legacy(shared: &Shared, method: &str) -> bool {
    let cache = &shared.options.cache;
    cache.enabled && cache.ttl_without_hints.is_some() && CACHEABLE_METHODS.contains(&method)
}

/// Answers `spec` from the cache when a fresh entry exists, else with `wire` (storing what
/// may be cached).
pub(crate) fn through(
    shared: &Shared,
    spec: &CallSpec<'_>,
    wire: impl FnOnce(&CallSpec<'_>) -> Result<Answer>,
) -> Result<Answer> {
    let Some(key) = key(shared, spec) else {
        return wire(spec);
    };
    let cache = &shared.cache;
    if !spec.options.no_cache {
        let now = Instant::now();
        let mut entries = lock(&cache.entries);
        match entries.get(&key) {
            Some(entry) if entry.fresh_until > now => {
                log::trace!("`{}` answered from the cache", spec.method);
                return Ok(entry.value.clone());
            }
            Some(_) => {
                entries.remove(&key);
            }
            None => {}
        }
    }
    let result = wire(spec);
    match &result {
        Ok(value) => {
            if let Some(ttl) = ttl(shared, value) {
                let uri = params_uri(spec.params.as_ref());
                store(cache, key, spec.method, uri, value.clone(), ttl);
            }
        }
        Err(_) if has_cursor(spec.params.as_ref()) => {
            // A cursor the server no longer accepts: the pages of that list are all suspect.
            drop_method(cache, spec.method);
        }
        Err(_) => {}
    }
    result
}

/// Drops what a notification says changed.
pub(crate) fn invalidate(cache: &Cache, method: &str, uri: Option<&str>) {
    match method {
        "notifications/tools/list_changed" => drop_method(cache, "tools/list"),
        "notifications/prompts/list_changed" => drop_method(cache, "prompts/list"),
        "notifications/resources/list_changed" => {
            drop_method(cache, "resources/list");
            drop_method(cache, "resources/templates/list");
        }
        "notifications/resources/updated" => {
            let Some(updated) = uri else { return };
            // The updated URI may be a sub-resource of the one read, or the other way round.
            lock(&cache.entries).retain(|_, e| {
                let related = e.uri.as_deref().is_some_and(|read| {
                    read == updated || read.starts_with(updated) || updated.starts_with(read)
                });
                !(e.method == "resources/read" && related)
            });
        }
        _ => {}
    }
}

/// The key of a cacheable request: the method and its params without `_meta`, or `None`
/// when the request may not be cached.
fn key(shared: &Shared, spec: &CallSpec<'_>) -> Option<String> {
    if !shared.options.cache.enabled || !CACHEABLE_METHODS.contains(&spec.method) {
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
}

/// How long `value` stays fresh, if it may be cached at all.
fn ttl(shared: &Shared, value: &Answer) -> Option<Duration> {
    let hints: Hints = value.peek().ok()?;
    let result_type = hints.result_type.as_ref().and_then(Value::as_str);
    if result_type.is_some_and(|t| t != "complete") {
        return None;
    }
    match hints.ttl_ms {
        Some(ttl) => {
            // As the typed results read it: a float, or a number of any size, counts too.
            let ms = crate::types::lenient::ttl_millis(&ttl).filter(|ms| *ms > 0)?;
            Some(Duration::from_millis(ms))
        }
        None if shared.era.era() == Era::Legacy => shared.options.cache.ttl_without_hints,
        None => None,
    }
}

fn store(
    cache: &Cache,
    key: String,
    method: &str,
    uri: Option<String>,
    value: Answer,
    ttl: Duration,
) {
    let now = Instant::now();
    // A TTL too long for the clock is as good as forever: a day is plenty.
    let fresh_until = now
        .checked_add(ttl)
        .unwrap_or_else(|| now + Duration::from_secs(86_400));
    let mut entries = lock(&cache.entries);
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
    entries.insert(
        key,
        Entry {
            value,
            fresh_until,
            method: method.to_owned(),
            uri,
        },
    );
}

/// Drops everything: the notifications that would have said what changed may be lost.
pub(crate) fn clear(cache: &Cache) {
    lock(&cache.entries).clear();
}

fn drop_method(cache: &Cache, method: &str) {
    lock(&cache.entries).retain(|_, e| e.method != method);
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
