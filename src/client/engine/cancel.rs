//! The cancel handle: one request, or several, or a connect, cancelled from another thread.

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::sync::lock;

use super::pending::{Reply, Slot};

/// Cancels a request from another thread.
///
/// The waiting call returns [`Error::Cancelled`](crate::Error::Cancelled) at once and the
/// server is sent `notifications/cancelled`, never before the request itself: over HTTP a
/// request still on its way is cancelled right after it went out, and not at all if it never
/// did. Cancelling before the request starts makes it fail without being sent. Clones share
/// the same state, and one handle given to several requests cancels all of them.
///
/// The same handle cancels a connect in progress, given through
/// [`Options::with_connect_cancel`](crate::Options::with_connect_cancel).
///
/// ```no_run
/// use std::time::Duration;
/// use serde_json::json;
/// use umcp::{CancelHandle, RequestOptions};
///
/// # fn main() -> umcp::Result<()> {
/// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
/// let cancel = CancelHandle::new();
/// let options = RequestOptions::default().with_cancel(cancel.clone());
/// let stopper = cancel.clone();
/// std::thread::spawn(move || {
///     std::thread::sleep(Duration::from_secs(5));
///     stopper.cancel(); // the call below returns Error::Cancelled at once
/// });
/// match client.with(&options).call_tool("slow", json!({})) {
///     Err(umcp::Error::Cancelled { .. }) => assert!(cancel.is_cancelled()),
///     other => log::info!("{other:?}"),
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct CancelHandle {
    inner: Arc<Mutex<CancelState>>,
}

#[derive(Default)]
struct CancelState {
    cancelled: bool,
    /// The requests waiting under this handle: a key, the request id and its caller's slot.
    waiters: Vec<(u64, i64, Arc<Slot>)>,
    /// What else runs on cancel (a connect in progress): a key and the hook.
    hooks: Vec<(u64, Hook)>,
    next_key: u64,
}

/// Run once, on the cancelling thread, when the handle is cancelled; must not block.
pub(crate) type Hook = Arc<dyn Fn() + Send + Sync>;

/// A request's (or a hook's) registration with a [`CancelHandle`]; removed when dropped.
pub(crate) struct Attached {
    handle: CancelHandle,
    key: u64,
}

impl CancelHandle {
    /// A handle that has not been cancelled.
    ///
    /// See the example on [`CancelHandle`].
    pub fn new() -> CancelHandle {
        CancelHandle::default()
    }

    /// Cancels every request and connect this handle was given to (and any later one).
    /// Returns at once: a connect in progress closes its connection on a thread of its own.
    ///
    /// See the example on [`CancelHandle`].
    pub fn cancel(&self) {
        let (waiters, hooks) = {
            let mut state = lock(&self.inner);
            state.cancelled = true;
            (
                std::mem::take(&mut state.waiters),
                std::mem::take(&mut state.hooks),
            )
        };
        for (_, id, slot) in waiters {
            slot.put(id, Reply::Cancel);
        }
        for (_, hook) in hooks {
            hook();
        }
    }

    /// Whether [`cancel`](CancelHandle::cancel) was called.
    ///
    /// See the example on [`CancelHandle`].
    pub fn is_cancelled(&self) -> bool {
        lock(&self.inner).cancelled
    }

    /// Registers request `id` waiting on `slot`; `None` when already cancelled.
    pub(crate) fn attach(&self, id: i64, slot: &Arc<Slot>) -> Option<Attached> {
        let mut state = lock(&self.inner);
        if state.cancelled {
            return None;
        }
        let key = state.next_key;
        state.next_key = key.wrapping_add(1);
        state.waiters.push((key, id, Arc::clone(slot)));
        Some(Attached {
            handle: self.clone(),
            key,
        })
    }

    /// Registers `hook` to run on cancel; `None` when already cancelled.
    pub(crate) fn on_cancel(&self, hook: Hook) -> Option<Attached> {
        let mut state = lock(&self.inner);
        if state.cancelled {
            return None;
        }
        let key = state.next_key;
        state.next_key = key.wrapping_add(1);
        state.hooks.push((key, hook));
        Some(Attached {
            handle: self.clone(),
            key,
        })
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        let mut state = lock(&self.handle.inner);
        state.waiters.retain(|(key, _, _)| *key != self.key);
        state.hooks.retain(|(key, _)| *key != self.key);
    }
}

impl fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelHandle")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}
