//! The engine: JSON-RPC over one transport. Request ids, the pending table and each caller's
//! slot, deadlines, progress, cancellation, the sending threads, the router and its bounded
//! server-request pool, and the notification queue. It knows no protocol era, no cache and no
//! subscription, and of MCP's methods only the notifications that carry progress and
//! cancellation; the layers above plug in what answers the server's requests
//! ([`pool::Serve`]) and what hears about the rest ([`observer::Observer`]).

pub(crate) mod cancel;
pub(crate) mod connection;
pub(crate) mod exchange;
pub(crate) mod handover;
pub(crate) mod late;
pub(crate) mod notes;
pub(crate) mod notifications;
pub(crate) mod observer;
pub(crate) mod pending;
pub(crate) mod pool;
pub(crate) mod queued;
pub(crate) mod request_options;
pub(crate) mod router;
pub(crate) mod router_thread;
pub(crate) mod senders;
pub(crate) mod settings;
