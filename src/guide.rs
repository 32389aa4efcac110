//! Guides: how the pieces work together, with examples, beyond what one item's documentation
//! says.
//!
//! Each page is a file of the repository's `docs/` folder; their examples are compiled as doc
//! tests. Start with the crate's front page, then:
//!
//! - [`client`]: options and per-call options, tasks, deadlines, cancellation and closing,
//!   forms, capabilities and schemas, errors, and how malformed messages are answered, with
//!   examples.
//! - [`transports`]: stdio and HTTP servers: environment, stderr, process groups, sessions,
//!   streams, the legacy fallback and every deadline, with examples.
//! - [`network`]: proxies, trust roots and extra CAs, client certificates and Unix sockets:
//!   what is read from the environment, and what middleboxes change.
//! - [`eras`]: the stateless 2026-07-28 era and the handshake era, how a server's era is
//!   found and remembered, and what it costs, with an example.
//! - [`following`]: `listen`, lists kept fresh and the response cache, with examples.
//! - [`skills`]: the Skills extension: listing a server's skills, loading one, and what is
//!   verified before anything of it is used.
//! - [`manager`]: many servers from a configuration file or from code, their statuses,
//!   restarts, names and authorization, with examples.
//! - [`tools`]: tools chosen with filters, pinned with `mcp.lock` and typed with
//!   `umcp-codegen`, with examples.
#![cfg_attr(
    feature = "oauth",
    doc = "- [`authorization`]: OAuth 2.1 with and without a user, concurrent flows, and what is
  kept out of logs, with an example."
)]
#![cfg_attr(
    feature = "testing",
    doc = "- [`testing`]: testing code that uses umcp, with a fake server in the process or a
  recorded session played back, with examples."
)]
//! - [`performance`]: threads, queues, speed, memory and dependencies, as measured, with an
//!   example.

#[doc = include_str!("../docs/client.md")]
pub mod client {}

#[doc = include_str!("../docs/transports.md")]
pub mod transports {}

#[doc = include_str!("../docs/network.md")]
pub mod network {}

#[doc = include_str!("../docs/eras.md")]
pub mod eras {}

#[doc = include_str!("../docs/following.md")]
pub mod following {}

#[doc = include_str!("../docs/skills.md")]
pub mod skills {}

#[doc = include_str!("../docs/manager.md")]
pub mod manager {}

#[doc = include_str!("../docs/tools.md")]
pub mod tools {}

#[doc = include_str!("../docs/authorization.md")]
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub mod authorization {}

#[doc = include_str!("../docs/testing.md")]
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing {}

#[doc = include_str!("../docs/performance.md")]
pub mod performance {}
