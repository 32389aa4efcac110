//! The two protocol eras over the engine.

pub(crate) mod discover;
pub(crate) mod lifecycle;
pub(crate) mod meta;
pub(crate) mod rounds;
pub(crate) mod session;
pub(crate) mod state;
pub(crate) mod transport;
