//! Per-request options: timeouts, progress, cancellation and `_meta`.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::error::{Error, Result, TimeoutKind};
use crate::jsonrpc::decode_value;
use crate::types::ProgressNotificationParams;

use super::cancel::CancelHandle;

/// Calls the caller back with each progress notification of its request, on its own thread:
/// with the notification's params as sent, which the closure [`RequestOptions::with_progress`]
/// builds decodes for the caller's callback (so only a program that asks for progress has that
/// decoder).
pub(crate) type ProgressCallback = Arc<dyn Fn(&Value) + Send + Sync>;

/// Options of one request: timeouts, progress and cancellation, given to it through
/// [`Client::with`](crate::Client::with) or [`Manager::with`](crate::Manager::with).
///
/// ```
/// use std::time::{Duration, Instant};
/// use umcp::{CancelHandle, RequestOptions};
///
/// let cancel = CancelHandle::new();
/// let mut meta = serde_json::Map::new();
/// meta.insert("com.example/trace-id".into(), "4bf92f3577b34da6".into());
/// let options = RequestOptions::default()
///     .with_timeout(Duration::from_secs(5))
///     .with_reset_timeout_on_progress(true)
///     .with_max_total_time(Duration::from_secs(120))
///     .with_progress(|p| log::info!("{}/{:?}", p.progress, p.total))
///     .with_cancel(cancel.clone())
///     .with_meta(meta);
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
pub struct RequestOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) reset_on_progress: bool,
    pub(crate) max_total: Option<Duration>,
    pub(crate) progress: Option<ProgressCallback>,
    pub(crate) cancel: Option<CancelHandle>,
    pub(crate) meta: Option<Map<String, Value>>,
    /// Skip the response cache: read by the layers above, which keep the cache.
    pub(crate) no_cache: bool,
    /// Whether the call asks for a task (tasks extension): read by the layers above.
    pub(crate) task: TaskMode,
}

/// How a call asks for a task: not at all, to be followed to its end, or to be handed back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum TaskMode {
    #[default]
    Off,
    Follow,
    Handle,
}

impl RequestOptions {
    /// The time the server has to answer (default: the client's request timeout), counted
    /// from when the request was handed to the transport. Handing it over is bounded by the
    /// same time (plus a fresh budget after a credentials retry on HTTP). A zero timeout
    /// fails with [`Error::Timeout`] at once, without sending.
    ///
    /// See the example on [`RequestOptions`].
    pub fn with_timeout(mut self, timeout: Duration) -> RequestOptions {
        self.timeout = Some(timeout);
        self
    }

    /// Restart the timeout whenever the server reports progress (default off). Progress is
    /// asked for (a progress token is sent) even without [`RequestOptions::with_progress`].
    ///
    /// Without [`RequestOptions::with_max_total_time`], the call then ends after ten times its
    /// timeout at most (five minutes with the default 30 s), so that a server reporting
    /// progress forever cannot hold it forever.
    ///
    /// See the example on [`RequestOptions`].
    pub fn with_reset_timeout_on_progress(mut self, reset: bool) -> RequestOptions {
        self.reset_on_progress = reset;
        self
    }

    /// The maximum total time, whatever progress is reported (default: none, or ten times
    /// the timeout when it is reset on progress). A zero maximum fails at once, without
    /// sending.
    ///
    /// See the example on [`RequestOptions`].
    pub fn with_max_total_time(mut self, max: Duration) -> RequestOptions {
        self.max_total = Some(max);
        self
    }

    /// Asks for progress: a progress token is added to the request and every
    /// `notifications/progress` for it calls `callback` on the calling thread.
    ///
    /// See the example on [`RequestOptions`].
    pub fn with_progress<F>(mut self, callback: F) -> RequestOptions
    where
        F: Fn(&ProgressNotificationParams) + Send + Sync + 'static,
    {
        self.progress = Some(Arc::new(move |params: &Value| {
            match decode_value::<ProgressNotificationParams>(params) {
                Ok(progress) => callback(&progress),
                Err(e) => log::debug!("dropping malformed progress: {e}"),
            }
        }));
        self
    }

    /// Makes the request cancellable through `handle`, from any thread.
    ///
    /// A cancelled or timed-out request is given up at once, and the server is sent
    /// `notifications/cancelled` for it, never before the request itself: over HTTP, a request
    /// still on its way (its POST waiting for a connection or for credentials) is cancelled
    /// right after it went out, and not at all if it never did. A response that comes later
    /// is dropped, or passed to
    /// [`Options::with_late_response_handler`](crate::Options::with_late_response_handler).
    ///
    /// See the example on [`RequestOptions`].
    pub fn with_cancel(mut self, handle: CancelHandle) -> RequestOptions {
        self.cancel = Some(handle);
        self
    }

    /// Extra `_meta` entries sent with the request's params.
    ///
    /// See the example on [`RequestOptions`].
    pub fn with_meta(mut self, meta: Map<String, Value>) -> RequestOptions {
        self.meta = Some(meta);
        self
    }

    /// Skips the cache for this request: it goes to the server, and a cacheable result
    /// replaces the cached one.
    ///
    /// See the example on [`Options::with_response_cache`](crate::Options::with_response_cache).
    pub fn with_no_cache(mut self) -> RequestOptions {
        self.no_cache = true;
        self
    }
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("reset_on_progress", &self.reset_on_progress)
            .field("max_total", &self.max_total)
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            .finish_non_exhaustive()
    }
}

/// How many timeouts a call that resets its timeout on progress may last when no maximum was
/// given: the spec asks for a hard maximum, and nothing may hang.
const RESET_TOTAL_FACTOR: u32 = 10;

impl RequestOptions {
    /// The most a call may last in all: the maximum given, or [`RESET_TOTAL_FACTOR`] of its
    /// timeouts (this one's, or the client's `default_timeout`) when the timeout is reset on
    /// progress.
    pub(crate) fn max_total(&self, default_timeout: Duration) -> Option<Duration> {
        self.max_total.or_else(|| {
            self.reset_on_progress.then(|| {
                self.timeout
                    .unwrap_or(default_timeout)
                    .saturating_mul(RESET_TOTAL_FACTOR)
            })
        })
    }

    /// These options for the rest of a call of `method` begun at `started`: timeout (unless it
    /// resets on progress) and maximum total less the time spent, so a retry never outlasts the
    /// deadline.
    pub(crate) fn left_since(
        &self,
        method: &str,
        started: Instant,
        default_timeout: Duration,
    ) -> Result<RequestOptions> {
        if self.cancel.as_ref().is_some_and(CancelHandle::is_cancelled) {
            return Err(Error::Cancelled {
                method: method.to_owned(),
            });
        }
        let elapsed = started.elapsed();
        // Told as the time the call had (a zero timeout fails having spent none, as a request
        // with one does).
        let timed_out = |kind, budget: Duration| Error::Timeout {
            method: method.to_owned(),
            elapsed: elapsed.min(budget),
            kind,
            stderr_tail: None,
        };
        let left = |budget: Duration| budget.checked_sub(elapsed).filter(|left| !left.is_zero());
        let mut options = self.clone();
        if let Some(total) = self.max_total(default_timeout) {
            let left = left(total).ok_or_else(|| timed_out(TimeoutKind::Total, total))?;
            options.max_total = Some(left);
        }
        if !self.reset_on_progress {
            let timeout = self.timeout.unwrap_or(default_timeout);
            let left = left(timeout).ok_or_else(|| timed_out(TimeoutKind::Request, timeout))?;
            options.timeout = Some(left);
        }
        Ok(options)
    }

    /// Adds the progress token and caller `_meta` to the params, creating the object if needed.
    /// Run again on a retry, it replaces the token with the new id.
    pub(crate) fn add_meta(&self, params: &mut Option<Value>, id: i64) {
        // Resetting the timeout on progress needs progress, callback or not: the server only
        // reports it for requests that carry a token.
        let wants_progress = self.progress.is_some() || self.reset_on_progress;
        if !wants_progress && self.meta.is_none() {
            return;
        }
        let object = match params {
            Some(Value::Object(map)) => map,
            None | Some(Value::Null) => {
                *params = Some(Value::Object(Map::new()));
                match params {
                    Some(Value::Object(map)) => map,
                    _ => return,
                }
            }
            Some(_) => return,
        };
        let meta = object
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            if let Some(extra) = &self.meta {
                meta.extend(extra.clone());
            }
            if wants_progress {
                // The request id doubles as the progress token: unique among active requests.
                meta.insert("progressToken".into(), Value::from(id));
            }
        }
    }
}
