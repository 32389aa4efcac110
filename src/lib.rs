// The README links its guides by reference; on docs.rs the first definition of a reference
// wins, so these point its links at the guide modules rather than at `docs/*.md`, and the
// command-line tool's manual at its package page.
//! [guide-client]: crate::guide::client
//! [guide-transports]: crate::guide::transports
//! [guide-eras]: crate::guide::eras
//! [guide-network]: crate::guide::network
//! [guide-following]: crate::guide::following
//! [guide-manager]: crate::guide::manager
//! [guide-tools]: crate::guide::tools
#![cfg_attr(
    feature = "oauth",
    doc = "[guide-authorization]: crate::guide::authorization"
)]
#![cfg_attr(feature = "testing", doc = "[guide-testing]: crate::guide::testing")]
//! [guide-performance]: crate::guide::performance
//! [cli-manual]: https://crates.io/crates/umcp-cli
#![doc = include_str!("../README.md")]
//!
//! # Architecture
//!
//! Three layers meet at one seam each. [`jsonrpc`] holds the wire types and their one-line
//! encoding, with no I/O. [`transport`] moves [`jsonrpc::Message`]s to and from a server and
//! knows no MCP method: the stdio transport owns a child process and its reader and stderr
//! threads (the caller writes its own request while the pipe has room, a writer thread takes
//! over when it is full); the HTTP transports own the POST and SSE streams. Both deliver
//! everything the server sends into one [`transport::Inbox`]. The [`Client`] knows MCP and
//! never sees bytes: the thread that reads a response puts it straight into the waiting
//! caller's slot, notifications are queued on [`Notifications`], and server requests and
//! notification callbacks go through a router thread to a bounded pool of handler threads.
//! The MCP types live in [`types`]; the [`Manager`] runs many clients on top.
//!
//! The modules stand on floors, and a file names only what stands on its own floor or below
//! (`.ci/layers` checks it), from the ground up:
//!
//! 1. `jsonrpc`, `redact`, `private_file`, `capped`, `sha256`, `sync`: the wire types and helpers that
//!    know no MCP.
//! 2. `error`: the one [`Error`].
//! 3. `types`, `lock`: the MCP types, data only; lockfiles of tool definitions, over them.
//! 4. `transport`: moves messages and knows no MCP method.
//! 5. `auth`: OAuth for the HTTP transports.
//! 6. `client`: inside it `engine` → `era` → `follow` → the face, each naming only those before.
//! 7. `config`, `testing`: configuration files, and the testing kit.
//! 8. `manager`: many clients.
//! 9. `guide`, and the crate root.
//!
//! # Naming
//!
//! The transport configurations, [`StdioConfig`] and [`HttpConfig`], are built like
//! [`std::process::Command`]: a setter is named after what it sets (`arg`, `env`, `cwd`,
//! `request_timeout`), and its getter is `get_` that name. The client's and manager's
//! settings ([`Options`], [`RequestOptions`], [`ManagerOptions`], [`ServerConfig`]) are set
//! with `with_` methods and read by the bare name. So [`HttpConfig::request_timeout`] caps the
//! time one HTTP request may wait for its response, and [`Options::request_timeout`] reads
//! the client's default time for a request to be answered.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::all)]

#[cfg(feature = "oauth")]
pub mod auth;
mod capped;
mod client;
mod config;
mod error;
pub mod guide;
pub mod jsonrpc;
pub mod lock;
mod manager;
pub mod private_file;
mod redact;
mod sha256;
mod sync;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod transport;
pub mod types;

// The seeded mutation engine of the in-crate fuzz targets (tests/fuzz/internal/).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../tests/fuzz/engine.rs"]
mod fuzz_engine;

#[cfg(feature = "http")]
pub use client::one_shot;
pub use client::{
    CancelHandle, Client, ElicitationModes, Era, FreshTools, LateResponse, LoadedSkill,
    Notifications, Options, ProtocolMode, RequestOptions, SkillPolicy, Subscription,
    SubscriptionEnd, SubscriptionEvent, TaskHandle, TaskStatus, ToolCall, ToolFilter, WithOptions,
    DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_PROBE_TIMEOUT, NOTIFICATION_BYTES,
};
pub use config::{
    ConfigFile, OAuthSettings, Redacted, ServerConfig, ServerConfigError, ServerTransport,
};
pub use error::{
    AuthError, AuthStep, Closed, Error, Hidden, HiddenTool, HttpError, Result, TimeoutKind,
    ToolField, Unsupported, WwwAuthenticate,
};
pub use manager::{
    ManagedSubscription, Manager, ManagerNotifications, ManagerOptions, ManagerWithOptions,
    NotificationSource, PromptEntry, ResourceEntry, ResourceTemplateEntry, ServerError,
    ServerStatus, StatusEvent, StatusEvents, TaggedNotification, ToolEntry,
};
pub use transport::http::{ClientIdentity, NetworkError, NetworkProblem, Proxy, TrustRoots};
pub use transport::http::{CredentialProvider, HttpConfig, HttpTransportKind, ReconnectPolicy};
#[cfg(feature = "http")]
pub use transport::http::{NetworkCheck, NetworkStep};
pub use transport::{Connect, EnvPolicy, StdioConfig, Transport};
