//! The two protocol eras over the engine: the handshake era (`initialize`, sessions, server
//! requests) and the stateless era (`server/discover`, per-request `_meta`, input rounds and
//! tasks). Every request of the client enters through [`call::call`].

pub(crate) mod call;
pub(crate) mod clock;
pub(crate) mod discover;
pub(crate) mod finish;
#[cfg(feature = "http")]
pub(crate) mod headers;
pub(crate) mod inputs;
pub(crate) mod lifecycle;
pub(crate) mod meta;
#[cfg(feature = "http")]
pub(crate) mod relist;
pub(crate) mod rounds;
pub(crate) mod session;
pub(crate) mod state;
pub(crate) mod task;
pub(crate) mod transport;
pub(crate) mod verdicts;
pub(crate) mod wire;
