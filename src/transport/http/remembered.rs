//! Which `auto` URLs turned out to speak the legacy HTTP+SSE transport, so that connecting to
//! them again skips the refused Streamable HTTP request.
//!
//! The memory is a hint, never a trap: a remembered URL is tried over SSE first, and when that
//! is refused (400, 404 or 405, as a server that moved to Streamable HTTP answers the GET) the
//! URL is forgotten and Streamable HTTP is used. It lives for the process, and holds at most
//! [`CAPACITY`] URLs (when full, it starts over).

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

/// The most URLs remembered.
const CAPACITY: usize = 256;

fn urls() -> MutexGuard<'static, HashSet<String>> {
    static URLS: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    URLS.get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Whether `url` spoke legacy SSE when last connected.
pub(super) fn is_sse(url: &str) -> bool {
    urls().contains(url)
}

/// Remembers that `url` speaks legacy SSE.
pub(super) fn remember_sse(url: &str) {
    let mut urls = urls();
    if urls.len() >= CAPACITY && !urls.contains(url) {
        urls.clear();
    }
    if urls.insert(url.to_owned()) {
        log::debug!("{} speaks legacy SSE", crate::redact::url(url));
    }
}

/// Forgets `url`, so that its next connection tries Streamable HTTP first again.
pub(super) fn forget(url: &str) {
    if urls().remove(url) {
        log::debug!("{} no longer speaks legacy SSE", crate::redact::url(url));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_until_forgotten_and_bounded() {
        remember_sse("http://remembered.test/sse");
        assert!(is_sse("http://remembered.test/sse"));
        assert!(!is_sse("http://other.test/sse"));
        forget("http://remembered.test/sse");
        assert!(!is_sse("http://remembered.test/sse"));
        for n in 0..=CAPACITY {
            remember_sse(&format!("http://many.test/{n}"));
        }
        assert!(urls().len() <= CAPACITY);
    }
}
