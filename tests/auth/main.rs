//! OAuth against a loopback MCP server and authorization server: each discovery variant,
//! each way to a client identity, each token endpoint authentication method, refresh,
//! step-up and its limit, the resource check, the handlers, and the file store.
#![cfg(feature = "oauth")]

#[path = "../common/http_server.rs"]
mod http_server;

#[path = "../common/auth_server/mod.rs"]
mod auth_server;

#[path = "../common/log_capture.rs"]
mod log_capture;

#[path = "../common/oauth_client.rs"]
mod oauth_client;

mod device;
mod discovery;
mod handlers;
mod registration;
mod storage;
mod tokens;
