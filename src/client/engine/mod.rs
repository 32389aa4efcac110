//! JSON-RPC over one transport.

pub(crate) mod cancel;
pub(crate) mod handover;
pub(crate) mod late;
pub(crate) mod notifications;
pub(crate) mod pending;
pub(crate) mod queued;
pub(crate) mod request_options;
pub(crate) mod router;
pub(crate) mod router_thread;
pub(crate) mod senders;
pub(crate) mod settings;
