#![doc = include_str!("../README.md")]
//!
//! # Architecture
//!
//! Three layers meet at one seam each. [`jsonrpc`] holds the wire types and their one-line
//! encoding, with no I/O. [`transport`] moves [`jsonrpc::Message`]s to and from a server and
//! knows no MCP method: the stdio transport owns a child process and its reader, writer and
//! stderr threads; the HTTP transports own the POST and SSE streams. Both deliver everything the
//! server sends into one [`transport::Inbox`]. The [`Client`] knows MCP and never sees bytes: a
//! router thread sorts the inbox into responses (handed to the waiting caller over a channel),
//! notifications (queued on [`Notifications`]) and server requests (answered by handler
//! threads). The MCP types live in [`types`].
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::all)]

#[cfg(feature = "oauth")]
pub mod auth;
mod client;
mod config;
mod error;
pub mod jsonrpc;
mod manager;
mod redact;
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
    CancelHandle, Client, ElicitationModes, Era, FreshTools, LateResponse, Notifications, Options,
    ProtocolMode, RequestOptions, Subscription, SubscriptionEnd, SubscriptionEvent,
    DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_PROBE_TIMEOUT, NOTIFICATION_BYTES,
};
pub use config::{
    ConfigFile, HttpKind, OAuthSettings, ServerConfig, ServerConfigError, ServerTransport,
};
pub use error::{
    AuthError, AuthStep, Closed, Error, HttpError, Result, TimeoutKind, Unsupported,
    WwwAuthenticate,
};
pub use manager::{
    ManagedSubscription, Manager, ManagerNotifications, ManagerOptions, NotificationSource,
    PromptEntry, ResourceEntry, ResourceTemplateEntry, ServerError, ServerStatus, StatusEvent,
    StatusEvents, TaggedNotification, ToolEntry,
};
#[cfg(feature = "http")]
pub use transport::http::{CredentialProvider, HttpConfig, HttpTransportKind, ReconnectPolicy};
pub use transport::{Connect, EnvPolicy, StdioConfig, Transport};
