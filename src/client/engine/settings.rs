//! The engine's share of the client's options: what it reads once, at connect time.

use std::sync::Arc;
use std::time::Duration;

use crate::jsonrpc::Notification;
use crate::types::ServerNotification;

use super::late::LateHandler;

/// Calls the user back with each server notification that goes to the shared queue.
pub(crate) type NotificationCallback = Arc<dyn Fn(&ServerNotification) + Send + Sync>;

/// The callback as the engine runs it: on the notification as the server sent it, decoding
/// it for the user's [`NotificationCallback`] (built by the builder that sets that, so a
/// program without a callback has no decoder for it).
pub(crate) type RawCallback = Arc<dyn Fn(&Notification) + Send + Sync>;

/// How many server requests are handled at once by default.
const DEFAULT_HANDLER_THREADS: usize = 4;

/// The engine's settings, set through the builders of [`Options`](crate::Options).
#[derive(Clone)]
pub(crate) struct Settings {
    /// The default timeout of every request.
    pub(crate) request_timeout: Duration,
    /// How many unread notifications are kept.
    pub(crate) notification_capacity: usize,
    /// How many server requests are answered at once.
    pub(crate) handler_threads: usize,
    /// The user's callback, as given (the manager chains its own with it).
    pub(crate) on_notification: Option<NotificationCallback>,
    /// The same callback as the engine runs it.
    pub(crate) on_raw_notification: Option<RawCallback>,
    pub(crate) on_late_response: Option<LateHandler>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            request_timeout: Duration::from_secs(30),
            notification_capacity: 1024,
            handler_threads: DEFAULT_HANDLER_THREADS,
            on_notification: None,
            on_raw_notification: None,
            on_late_response: None,
        }
    }
}
