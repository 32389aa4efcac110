//! The multi-server manager: many configured servers started in parallel, one namespaced tool
//! list, calls routed to the right server, and reconnection when a server goes away.
//!
//! Every server gets a supervisor thread (`umcp-manager-<name>`) that connects it, lists its
//! tools, watches the connection and reconnects with backoff. One server failing never
//! fails the others: each has its own [`ServerStatus`]. HTTP servers with OAuth settings
//! (feature `oauth`) are authorized with tokens from the manager's token store, refreshed
//! silently, and through the manager's user step or [`Manager::authorize`] when a user is
//! needed.
//!
//! Imports run one way, from the face down:
//!
//! - the face, where `impl Manager` lives: `handle` (the [`Manager`], its servers and their
//!   statuses), `tools`, `lists`, `with_options` (per-call options) and `screened` (the tools
//!   a filter or a lock hides);
//! - `supervisor`, one thread per server, which keeps its `slot` (the state the face reads)
//!   and its lists fresh (`refresh`, which also holds the managed subscriptions);
//! - [`ManagerOptions`] (`options`), every builder in one file, over the pieces it is
//!   typed by: `asking`, `auth`, `health`, `cache` and `names`;
//! - `status`, `tracked` and the queues of `status/hub`.

mod asking;
#[cfg(feature = "oauth")]
mod auth;
mod cache;
mod handle;
mod health;
mod lists;
mod names;
mod options;
mod refresh;
mod screened;
mod slot;
mod status;
mod supervisor;
mod tools;
mod tracked;
mod with_options;

pub use handle::Manager;
pub use lists::ResourceTemplateEntry;
pub use options::ManagerOptions;
pub use refresh::ManagedSubscription;
pub use status::{
    ManagerNotifications, NotificationSource, PromptEntry, ResourceEntry, ServerError,
    ServerStatus, StatusEvent, StatusEvents, TaggedNotification, ToolEntry,
};
pub use with_options::ManagerWithOptions;

#[cfg(test)]
mod tests;
