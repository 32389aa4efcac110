//! Following a server: subscriptions, fresh lists and the response cache.

pub(crate) mod cache;
pub(crate) mod listen;
