//! What a manager reports: each server's status, the tagged notification and status-event
//! queues, and the entries of the aggregated lists.

use std::fmt;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use crate::error::{Error, HttpError};
use crate::types::{Prompt, Resource, ServerNotification, Tool};

mod hub;

pub(crate) use hub::Hub;

/// Where one managed server stands.
///
/// See the example on [`Manager::status`](crate::Manager::status).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerStatus {
    /// Connecting and running `initialize`; `attempt` counts from 1 since the last
    /// connection (or the start).
    Connecting {
        /// Which attempt this is.
        attempt: u32,
    },
    /// Connected and usable.
    Connected {
        /// The transport in use: `stdio`, `streamable-http` or `sse`.
        transport: &'static str,
        /// How many times the connection was lost and made again.
        reconnects: u32,
    },
    /// Not connected: the last attempt failed or the connection was lost.
    Failed {
        /// What went wrong. Its `Display` carries the details, e.g. the exit status and the
        /// last lines of a stdio server's stderr.
        error: Error,
        /// Failures in a row (0 when a long-lived connection was just lost).
        attempts: u32,
        /// When the next attempt starts; `None` once the manager has given up (see
        /// [`Manager::restart`](crate::Manager::restart)).
        next_attempt: Option<Instant>,
    },
    /// The HTTP server answered 401 or 403 and no user step could help; it is not retried
    /// until restarted with credentials, or authorized with
    /// `Manager::authorize` (for servers with OAuth settings, feature `oauth`).
    NeedsAuthorization {
        /// The failed exchange: its status, `WWW-Authenticate` challenge and
        /// `Mcp-Auth-Server` hint.
        hints: HttpError,
    },
    /// Disabled in the configuration; never started.
    Disabled,
    /// Stopped by [`Manager::remove`](crate::Manager::remove) or
    /// [`Manager::close`](crate::Manager::close).
    Stopped,
}

impl ServerStatus {
    /// A short lowercase name: `connecting`, `connected`, `failed`, `needs-authorization`,
    /// `disabled` or `stopped`.
    ///
    /// See the example on [`Manager::status`](crate::Manager::status).
    pub fn label(&self) -> &'static str {
        match self {
            ServerStatus::Connecting { .. } => "connecting",
            ServerStatus::Connected { .. } => "connected",
            ServerStatus::Failed { .. } => "failed",
            ServerStatus::NeedsAuthorization { .. } => "needs-authorization",
            ServerStatus::Disabled => "disabled",
            ServerStatus::Stopped => "stopped",
        }
    }

    /// True when connected.
    ///
    /// See the example on [`Manager::status`](crate::Manager::status).
    pub fn is_connected(&self) -> bool {
        matches!(self, ServerStatus::Connected { .. })
    }

    /// True unless an attempt to connect is under way.
    ///
    /// See the example on [`Manager::status`](crate::Manager::status).
    pub fn is_settled(&self) -> bool {
        !matches!(self, ServerStatus::Connecting { .. })
    }

    /// The error of a failed server.
    ///
    /// See the example on [`Manager::status`](crate::Manager::status).
    pub fn error(&self) -> Option<&Error> {
        match self {
            ServerStatus::Failed { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Whether the server's tools are worth offering: it is connected, connecting, or will
    /// be retried.
    pub(crate) fn is_live(&self) -> bool {
        match self {
            ServerStatus::Connecting { .. } | ServerStatus::Connected { .. } => true,
            ServerStatus::Failed { next_attempt, .. } => next_attempt.is_some(),
            _ => false,
        }
    }
}

impl fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerStatus::Connecting { attempt: 1 } => f.write_str("connecting"),
            ServerStatus::Connecting { attempt } => write!(f, "connecting (attempt {attempt})"),
            ServerStatus::Connected { transport, .. } => write!(f, "connected over {transport}"),
            ServerStatus::Failed {
                error,
                attempts,
                next_attempt,
            } => {
                f.write_str("not connected")?;
                if *attempts > 1 {
                    write!(f, " after {attempts} attempts")?;
                }
                write!(f, ": {error}")?;
                match next_attempt {
                    Some(at) => {
                        let wait = at.saturating_duration_since(Instant::now());
                        write!(f, " (retrying {})", when(wait))
                    }
                    None => f.write_str(" (not retrying)"),
                }
            }
            ServerStatus::NeedsAuthorization { hints } => write!(f, "needs authorization: {hints}"),
            ServerStatus::Disabled => f.write_str("disabled"),
            ServerStatus::Stopped => f.write_str("stopped"),
        }
    }
}

/// When a wait of `d` ends, for people: `now`, `in 250 ms`, `in 1.5 s`, `in 2 min 5 s`.
pub(super) fn when(d: Duration) -> String {
    let millis = d.as_millis();
    match millis {
        0 => "now".to_owned(),
        1..=999 => format!("in {millis} ms"),
        1000..=59_999 => format!("in {:.1} s", d.as_secs_f64()),
        _ => format!("in {} min {} s", d.as_secs() / 60, d.as_secs() % 60),
    }
}

/// A server notification, tagged with the server that sent it.
///
/// See the example on [`Manager::notifications`](crate::Manager::notifications).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TaggedNotification {
    /// The server's name.
    pub server: String,
    /// The notification.
    pub notification: ServerNotification,
    /// Where it came from.
    pub source: NotificationSource,
}

/// Where a [`TaggedNotification`] came from.
///
/// See the example on [`Manager::notifications`](crate::Manager::notifications).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotificationSource {
    /// The connection itself (handshake era: stdio or the HTTP GET stream).
    Session,
    /// The manager's `subscriptions/listen` subscription to the server's lists (stateless
    /// era).
    Subscription,
}

/// A server's status changed.
///
/// See the example on [`Manager::status_events`](crate::Manager::status_events).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StatusEvent {
    /// The server's name.
    pub server: String,
    /// Its new status.
    pub status: ServerStatus,
}

/// One tool of the aggregated list.
///
/// See the example on [`Manager::known_tools`](crate::Manager::known_tools).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolEntry {
    /// The namespaced name to call it by, e.g. `files__read_file`.
    pub name: String,
    /// The server it belongs to.
    pub server: String,
    /// The tool as the server describes it (with the server's own name).
    pub tool: Tool,
    /// True when the entry comes from the cache or an earlier connection, not from the
    /// server's current connection.
    pub stale: bool,
}

/// One prompt of the aggregated list.
///
/// See the example on [`Manager::list_prompts`](crate::Manager::list_prompts).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PromptEntry {
    /// The namespaced name to get it by.
    pub name: String,
    /// The server it belongs to.
    pub server: String,
    /// The prompt as the server describes it.
    pub prompt: Prompt,
    /// Whether the server announced a change not yet listed again.
    pub stale: bool,
}

/// One resource of the aggregated list.
///
/// See the example on [`Manager::list_resources`](crate::Manager::list_resources).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ResourceEntry {
    /// The server it belongs to; read it with [`Manager::read_resource`](crate::Manager::read_resource).
    pub server: String,
    /// The resource.
    pub resource: Resource,
}

/// A server that could not contribute to an aggregated list.
///
/// See the example on [`Manager::list_resources`](crate::Manager::list_resources).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerError {
    /// The server's name.
    pub server: String,
    /// Why.
    pub error: Error,
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.server, self.error)
    }
}

/// The notifications of every managed server, in arrival order, each tagged with its server.
///
/// All handles share one queue: an item is taken by whichever handle reads it first. When the
/// queue is full the oldest unread item is dropped. The queue ends once the manager is closed
/// and every server has shut down.
///
/// See the example on [`Manager::notifications`](crate::Manager::notifications).
#[derive(Debug, Clone)]
pub struct ManagerNotifications {
    rx: Receiver<TaggedNotification>,
}

/// The status changes of every managed server, in order. Shared and bounded like
/// [`ManagerNotifications`].
///
/// See the example on [`Manager::status_events`](crate::Manager::status_events).
#[derive(Debug, Clone)]
pub struct StatusEvents {
    rx: Receiver<StatusEvent>,
}

impl ManagerNotifications {
    /// Waits for the next notification; `None` once the manager is closed and the queue is
    /// empty.
    ///
    /// See the example on [`Manager::notifications`](crate::Manager::notifications).
    pub fn recv(&self) -> Option<TaggedNotification> {
        self.rx.recv().ok()
    }

    /// Waits up to `timeout` for the next notification.
    ///
    /// See the example on [`Manager::notifications`](crate::Manager::notifications).
    pub fn recv_timeout(&self, timeout: Duration) -> Option<TaggedNotification> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// The next notification if one is queued.
    ///
    /// See the example on [`Manager::notifications`](crate::Manager::notifications).
    pub fn try_recv(&self) -> Option<TaggedNotification> {
        self.rx.try_recv().ok()
    }

    /// A blocking iterator that ends when the manager is closed and the queue is empty.
    ///
    /// See the example on [`Manager::notifications`](crate::Manager::notifications).
    pub fn iter(&self) -> impl Iterator<Item = TaggedNotification> + '_ {
        self.rx.iter()
    }
}

impl StatusEvents {
    /// Waits for the next event; `None` once the manager is closed and the queue is empty.
    ///
    /// See the example on [`Manager::status_events`](crate::Manager::status_events).
    pub fn recv(&self) -> Option<StatusEvent> {
        self.rx.recv().ok()
    }

    /// Waits up to `timeout` for the next event.
    ///
    /// See the example on [`Manager::status_events`](crate::Manager::status_events).
    pub fn recv_timeout(&self, timeout: Duration) -> Option<StatusEvent> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// The next event if one is queued.
    ///
    /// See the example on [`Manager::status_events`](crate::Manager::status_events).
    pub fn try_recv(&self) -> Option<StatusEvent> {
        self.rx.try_recv().ok()
    }

    /// A blocking iterator that ends when the manager is closed and the queue is empty.
    ///
    /// See the example on [`Manager::status_events`](crate::Manager::status_events).
    pub fn iter(&self) -> impl Iterator<Item = StatusEvent> + '_ {
        self.rx.iter()
    }
}
