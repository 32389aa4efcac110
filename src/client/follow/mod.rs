//! Following a server: subscriptions in either era (`Client::listen`), and the response cache,
//! both fed by the engine's reading threads through [`route::Follower`], the engine's
//! observer.

pub(crate) mod cache;
pub(crate) mod listen;
pub(crate) mod open;
pub(crate) mod reopen;
pub(crate) mod route;
pub(crate) mod state;
pub(crate) mod watch;
