//! Responses that arrive after their request was given up (it timed out, or was cancelled),
//! passed to an optional handler instead of being dropped.
//!
//! The handler runs on the router thread, like the notification callback, with panics caught;
//! the thread that read the response only queues it. Which requests were given up is kept
//! only while a handler is set, for the last [`ABANDONED_MAX`] of them: a response to an older
//! one is dropped as before.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::error::Result;
use crate::sync::lock;

use super::pending::Answer;

/// How many given-up requests are remembered for their late responses.
pub(crate) const ABANDONED_MAX: usize = 256;

/// A response that arrived after its request was given up.
///
/// See the example on
/// [`Options::with_late_response_handler`](crate::Options::with_late_response_handler).
#[derive(Debug)]
#[non_exhaustive]
pub struct LateResponse {
    /// The request's JSON-RPC id.
    pub id: i64,
    /// The request's method, such as `tools/call`.
    pub method: String,
    /// Why the request was given up: `timed out`, `cancelled by the client`, or `no response
    /// can arrive` (an HTTP server accepted it without a response, with no stream open to
    /// carry one).
    pub reason: String,
    /// The result as the server sent it, or its error.
    pub result: Result<Value>,
}

/// Takes the responses that came after their request was given up.
pub(crate) type LateHandler = Arc<dyn Fn(LateResponse) + Send + Sync>;

/// The requests given up whose responses may still come, oldest first.
pub(crate) struct Abandoned {
    /// Only kept when there is a handler to tell.
    enabled: bool,
    entries: Mutex<VecDeque<(i64, String, String)>>,
}

impl Abandoned {
    /// Remembers given-up requests only when `enabled` (a handler is set).
    pub(crate) fn new(enabled: bool) -> Abandoned {
        Abandoned {
            enabled,
            entries: Mutex::new(VecDeque::new()),
        }
    }

    /// Remembers that request `id` was given up, forgetting the oldest beyond the bound.
    pub(crate) fn record(&self, id: i64, method: &str, reason: &str) {
        if !self.enabled {
            return;
        }
        let mut entries = lock(&self.entries);
        if entries.len() >= ABANDONED_MAX {
            entries.pop_front();
        }
        entries.push_back((id, method.to_owned(), reason.to_owned()));
    }

    /// The late response `result` to given-up request `id`, which is forgotten; `None` when
    /// it was not given up (or too long ago, or there is no handler).
    pub(crate) fn response(&self, id: i64, result: Result<Answer>) -> Option<LateResponse> {
        let (method, reason) = self.take(id)?;
        let result = result.and_then(|answer| answer.decode(&method));
        Some(LateResponse {
            id,
            method,
            reason,
            result,
        })
    }

    /// The method and reason of given-up request `id`, forgetting it.
    fn take(&self, id: i64) -> Option<(String, String)> {
        if !self.enabled {
            return None;
        }
        let mut entries = lock(&self.entries);
        let at = entries.iter().position(|(known, ..)| *known == id)?;
        entries
            .remove(at)
            .map(|(_, method, reason)| (method, reason))
    }
}

/// Calls `handler` with `late`, on the router thread.
pub(crate) fn deliver(handler: Option<&LateHandler>, late: LateResponse) {
    let Some(handler) = handler else {
        return;
    };
    let (id, method) = (late.id, late.method.clone());
    let call = std::panic::AssertUnwindSafe(|| handler(late));
    if std::panic::catch_unwind(call).is_err() {
        log::error!("the late-response handler panicked on request {id} `{method}`; carrying on");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_the_last_given_up_requests_only_with_a_handler() {
        let without = Abandoned::new(false);
        without.record(1, "tools/call", "timed out");
        assert_eq!(without.take(1), None);

        let with = Abandoned::new(true);
        for id in 0..=ABANDONED_MAX as i64 {
            with.record(id, "tools/call", "timed out");
        }
        assert_eq!(
            with.take(0),
            None,
            "the oldest is forgotten beyond the bound"
        );
        let last = ABANDONED_MAX as i64;
        assert_eq!(
            with.take(last),
            Some(("tools/call".into(), "timed out".into()))
        );
        assert_eq!(with.take(last), None, "taken once");
    }
}
