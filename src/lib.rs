//! A blocking Model Context Protocol (MCP) client: stdio, Streamable HTTP and legacy HTTP+SSE
//! servers from plain threads, with no async runtime.
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::all)]

mod client;
mod config;
mod error;
pub mod jsonrpc;
mod manager;
pub mod transport;
pub mod types;

pub use client::{CancelHandle, Client, Notifications, Options, RequestOptions};
pub use config::{ConfigFile, HttpKind, ServerConfig, ServerConfigError, ServerTransport};
pub use error::{Closed, Error, HttpError, Result, TimeoutKind, Unsupported, WwwAuthenticate};
pub use manager::{
    Manager, ManagerNotifications, ManagerOptions, PromptEntry, ResourceEntry, ServerError,
    ServerStatus, StatusEvent, StatusEvents, TaggedNotification, ToolEntry,
};
#[cfg(feature = "http")]
pub use transport::http::{CredentialProvider, HttpConfig, HttpTransportKind, ReconnectPolicy};
pub use transport::{Connect, EnvPolicy, StdioConfig, Transport};
