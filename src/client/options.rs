//! Client-wide options, per-request options and the cancel handle.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::Sender;
use serde_json::{Map, Value};

use crate::jsonrpc::ErrorObject;
use crate::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    Implementation, ListRootsResult, ProgressNotificationParams, Root, ServerNotification,
};

use super::session::Reply;

pub(crate) type SamplingHandler = Arc<
    dyn Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> + Send + Sync,
>;
pub(crate) type ElicitationHandler =
    Arc<dyn Fn(ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync>;
pub(crate) type RootsHandler = Arc<dyn Fn() -> Result<ListRootsResult, ErrorObject> + Send + Sync>;
pub(crate) type NotificationCallback = Arc<dyn Fn(&ServerNotification) + Send + Sync>;
pub(crate) type ProgressCallback = Arc<dyn Fn(&ProgressNotificationParams) + Send + Sync>;

/// How a [`Client`](crate::Client) behaves: identity, timeouts, and the handlers that answer
/// the server's requests.
///
/// Registering a handler declares the matching client capability in `initialize`.
///
/// ```
/// use std::time::Duration;
/// use umcp::Options;
/// use umcp::types::{Implementation, Root};
///
/// let options = Options::default()
///     .with_client_info(Implementation::new("my-tool", "1.2.0"))
///     .with_request_timeout(Duration::from_secs(10))
///     .with_roots(vec![Root::new("file:///home/me/project")]);
/// assert_eq!(options.request_timeout(), Duration::from_secs(10));
/// ```
#[derive(Clone)]
pub struct Options {
    pub(crate) client_info: Implementation,
    pub(crate) request_timeout: Duration,
    pub(crate) init_timeout: Duration,
    pub(crate) notification_capacity: usize,
    pub(crate) reinitialize_on_expiry: bool,
    pub(crate) sampling: Option<SamplingHandler>,
    pub(crate) elicitation: Option<ElicitationHandler>,
    pub(crate) roots: Option<RootsHandler>,
    pub(crate) on_notification: Option<NotificationCallback>,
    pub(crate) experimental: Option<Map<String, Value>>,
    /// The protocol era settings; builders in `era.rs`.
    pub(crate) era: super::era::EraOptions,
    /// The response cache settings; builders in `cache.rs`.
    pub(crate) cache: super::cache::CacheOptions,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            client_info: Implementation::new("umcp", env!("CARGO_PKG_VERSION")),
            request_timeout: Duration::from_secs(30),
            init_timeout: Duration::from_secs(30),
            notification_capacity: 1024,
            reinitialize_on_expiry: true,
            sampling: None,
            elicitation: None,
            roots: None,
            on_notification: None,
            experimental: None,
            era: super::era::EraOptions::default(),
            cache: super::cache::CacheOptions::default(),
        }
    }
}

impl Options {
    /// The name and version sent as `clientInfo` (default: `umcp` and this crate's version).
    pub fn with_client_info(mut self, info: Implementation) -> Options {
        self.client_info = info;
        self
    }

    /// The default timeout of every request (default 30 s). [`RequestOptions`] override it.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Options {
        self.request_timeout = timeout;
        self
    }

    /// How long the `initialize` handshake may take (default 30 s).
    pub fn with_init_timeout(mut self, timeout: Duration) -> Options {
        self.init_timeout = timeout;
        self
    }

    /// How many unread notifications are kept (default 1024); past that the oldest are dropped.
    pub fn with_notification_capacity(mut self, capacity: usize) -> Options {
        self.notification_capacity = capacity.max(1);
        self
    }

    /// Whether an expired HTTP session is re-initialized transparently and the request retried
    /// once (default `true`). With `false` the caller gets [`Error::SessionExpired`](crate::Error::SessionExpired).
    pub fn with_reinitialize_on_expiry(mut self, enabled: bool) -> Options {
        self.reinitialize_on_expiry = enabled;
        self
    }

    /// Answers `sampling/createMessage`, and declares the `sampling` capability.
    pub fn with_sampling_handler<F>(mut self, handler: F) -> Options
    where
        F: Fn(CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.sampling = Some(Arc::new(handler));
        self
    }

    /// Answers `elicitation/create` (form and URL mode), and declares the `elicitation`
    /// capability with both modes. See [`ElicitResult::accept_defaults`] for a form helper.
    pub fn with_elicitation_handler<F>(mut self, handler: F) -> Options
    where
        F: Fn(ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync + 'static,
    {
        self.elicitation = Some(Arc::new(handler));
        self
    }

    /// Answers `roots/list` with these roots, and declares the `roots` capability.
    pub fn with_roots(self, roots: Vec<Root>) -> Options {
        self.with_roots_handler(move || Ok(ListRootsResult::new(roots.clone())))
    }

    /// Answers `roots/list` by calling `handler`, and declares the `roots` capability (with
    /// `listChanged`; see [`Client::notify_roots_list_changed`](crate::Client::notify_roots_list_changed)).
    pub fn with_roots_handler<F>(mut self, handler: F) -> Options
    where
        F: Fn() -> Result<ListRootsResult, ErrorObject> + Send + Sync + 'static,
    {
        self.roots = Some(Arc::new(handler));
        self
    }

    /// Calls `callback` for every server notification, before it is queued on
    /// [`Notifications`](crate::Notifications). It runs on the client's router thread: keep it short.
    pub fn with_notification_callback<F>(mut self, callback: F) -> Options
    where
        F: Fn(&ServerNotification) + Send + Sync + 'static,
    {
        self.on_notification = Some(Arc::new(callback));
        self
    }

    /// Declares `experimental` client capabilities.
    pub fn with_experimental_capabilities(mut self, experimental: Map<String, Value>) -> Options {
        self.experimental = Some(experimental);
        self
    }

    /// The default request timeout.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// The `initialize` timeout.
    pub fn init_timeout(&self) -> Duration {
        self.init_timeout
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("client_info", &self.client_info)
            .field("request_timeout", &self.request_timeout)
            .field("init_timeout", &self.init_timeout)
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots.is_some())
            .finish_non_exhaustive()
    }
}

/// Options of one request: timeouts, progress and cancellation.
///
/// ```
/// use std::time::Duration;
/// use umcp::{CancelHandle, RequestOptions};
///
/// let cancel = CancelHandle::new();
/// let options = RequestOptions::default()
///     .with_timeout(Duration::from_secs(5))
///     .with_reset_timeout_on_progress(true)
///     .with_max_total_time(Duration::from_secs(120))
///     .with_progress(|p| log::info!("{}/{:?}", p.progress, p.total))
///     .with_cancel(cancel.clone());
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
    /// Skip the response cache (builder in `cache.rs`).
    pub(crate) no_cache: bool,
}

impl RequestOptions {
    /// The time the server has to answer (default: the client's request timeout), counted
    /// from when the request was handed to the transport. Handing it over is bounded by the
    /// same time (plus a fresh budget after a credentials retry on HTTP).
    pub fn with_timeout(mut self, timeout: Duration) -> RequestOptions {
        self.timeout = Some(timeout);
        self
    }

    /// Restart the timeout whenever the server reports progress (default off).
    pub fn with_reset_timeout_on_progress(mut self, reset: bool) -> RequestOptions {
        self.reset_on_progress = reset;
        self
    }

    /// The maximum total time, whatever progress is reported.
    pub fn with_max_total_time(mut self, max: Duration) -> RequestOptions {
        self.max_total = Some(max);
        self
    }

    /// Asks for progress: a progress token is added to the request and every
    /// `notifications/progress` for it calls `callback` on the calling thread.
    pub fn with_progress<F>(mut self, callback: F) -> RequestOptions
    where
        F: Fn(&ProgressNotificationParams) + Send + Sync + 'static,
    {
        self.progress = Some(Arc::new(callback));
        self
    }

    /// Makes the request cancellable through `handle`, from any thread.
    pub fn with_cancel(mut self, handle: CancelHandle) -> RequestOptions {
        self.cancel = Some(handle);
        self
    }

    /// Extra `_meta` entries sent with the request's params.
    pub fn with_meta(mut self, meta: Map<String, Value>) -> RequestOptions {
        self.meta = Some(meta);
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

/// Cancels a request from another thread.
///
/// The waiting call returns [`Error::Cancelled`](crate::Error::Cancelled) at once and the
/// server is sent `notifications/cancelled`. Cancelling before the request starts makes it
/// fail without being sent. Clones share the same state.
#[derive(Clone, Default)]
pub struct CancelHandle {
    inner: Arc<Mutex<CancelState>>,
}

#[derive(Default)]
struct CancelState {
    cancelled: bool,
    waiter: Option<Sender<Reply>>,
}

impl CancelHandle {
    /// A handle that has not been cancelled.
    pub fn new() -> CancelHandle {
        CancelHandle::default()
    }

    /// Cancels the request this handle was given to (and any later one).
    pub fn cancel(&self) {
        let mut state = lock(&self.inner);
        state.cancelled = true;
        if let Some(waiter) = state.waiter.take() {
            let _ = waiter.send(Reply::Cancel);
        }
    }

    /// Whether [`cancel`](CancelHandle::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        lock(&self.inner).cancelled
    }

    /// Registers the waiting request; returns `false` when already cancelled.
    pub(crate) fn attach(&self, waiter: Sender<Reply>) -> bool {
        let mut state = lock(&self.inner);
        if state.cancelled {
            return false;
        }
        state.waiter = Some(waiter);
        true
    }
}

impl fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelHandle")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// Locks a mutex, recovering the data if a panicking thread poisoned it: every structure
/// guarded this way stays consistent between statements.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
