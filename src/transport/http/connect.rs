//! Connecting to a URL: the transport kind asked for, or for `auto` the next candidate, with a
//! memory of the URLs that turned out to speak the legacy HTTP+SSE transport, so that
//! connecting to them again skips the refused Streamable HTTP request.
//!
//! The memory is a hint, never a trap: a remembered URL is tried over SSE first, and when that
//! is refused (400, 404 or 405, as a server that moved to Streamable HTTP answers the GET) the
//! URL is forgotten and Streamable HTTP is used. It lives for the process, and holds at most
//! [`CAPACITY`] URLs (when full, it starts over).

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use super::{legacy, streamable, wire, HttpConfig, HttpTransportKind, AUTO_CANDIDATES};
use crate::error::Result;
use crate::transport::{deadline_after, Connect, Inbox, Transport};

impl Connect for HttpConfig {
    /// Streamable HTTP connects without network traffic (the first POST is the first
    /// exchange); legacy SSE opens its event stream and waits for the `endpoint` event.
    ///
    /// With [`HttpTransportKind::Auto`], a URL that spoke legacy SSE before in this process is
    /// tried over SSE first, skipping the Streamable HTTP request it refused then; if SSE is
    /// refused now, the URL is forgotten and Streamable HTTP is used.
    fn connect(&self, inbox: Inbox) -> Result<Box<dyn Transport>> {
        self.connect_by(inbox, deadline_after(Instant::now(), Duration::MAX))
    }

    /// As `connect`; waiting for the legacy SSE `endpoint` event ends by `deadline` at the
    /// latest, even when the connect timeout is later.
    fn connect_by(&self, inbox: Inbox, deadline: Instant) -> Result<Box<dyn Transport>> {
        let wire = wire::Wire::new(self.clone())?;
        let auto = self.kind == HttpTransportKind::Auto;
        match self.effective_kind() {
            HttpTransportKind::Sse => {
                let transport = legacy::connect(wire, inbox, deadline)?;
                if auto {
                    remember_sse(&self.url);
                }
                Ok(transport)
            }
            _ if auto && is_sse(&self.url) => {
                match legacy::connect(wire::Wire::new(self.clone())?, inbox.clone(), deadline) {
                    Err(e) if e.refuses_transport() => {
                        forget(&self.url);
                        Ok(Box::new(streamable::StreamableHttp::new(
                            wire, inbox, deadline,
                        )))
                    }
                    connected => connected,
                }
            }
            _ => Ok(Box::new(streamable::StreamableHttp::new(
                wire, inbox, deadline,
            ))),
        }
    }

    fn fallback(&self) -> Option<Box<dyn Connect>> {
        if self.kind != HttpTransportKind::Auto || self.candidate + 1 >= AUTO_CANDIDATES.len() {
            return None;
        }
        let mut next = self.clone();
        next.candidate += 1;
        Some(Box::new(next))
    }

    fn describe(&self) -> String {
        crate::redact::url(&self.url)
    }
}

/// The most URLs remembered.
const CAPACITY: usize = 256;

fn urls() -> MutexGuard<'static, HashSet<String>> {
    static URLS: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    URLS.get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Whether `url` spoke legacy SSE when last connected.
fn is_sse(url: &str) -> bool {
    urls().contains(url)
}

/// Remembers that `url` speaks legacy SSE.
fn remember_sse(url: &str) {
    let mut urls = urls();
    if urls.len() >= CAPACITY && !urls.contains(url) {
        urls.clear();
    }
    if urls.insert(url.to_owned()) {
        log::debug!("{} speaks legacy SSE", crate::redact::url(url));
    }
}

/// Forgets `url`, so that its next connection tries Streamable HTTP first again.
fn forget(url: &str) {
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
