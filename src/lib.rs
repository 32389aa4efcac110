//! A blocking Model Context Protocol (MCP) client: stdio, Streamable HTTP and legacy HTTP+SSE
//! servers from plain threads, with no async runtime.
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::all)]

#[cfg(feature = "oauth")]
pub mod auth;
mod client;
mod error;
pub mod jsonrpc;
pub mod transport;
pub mod types;

pub use client::{CancelHandle, Client, Notifications, Options, RequestOptions};
pub use error::{
    AuthError, AuthStep, Closed, Error, HttpError, Result, TimeoutKind, Unsupported,
    WwwAuthenticate,
};
#[cfg(feature = "http")]
pub use transport::http::{CredentialProvider, HttpConfig, HttpTransportKind, ReconnectPolicy};
pub use transport::{Connect, EnvPolicy, StdioConfig, Transport};
