//! OAuth against a loopback MCP server and authorization server: each discovery variant,
//! each way to a client identity, each token endpoint authentication method, refresh,
//! step-up and its limit, the resource check, the handlers, and the file store.
#![cfg(feature = "oauth")]

use umcp_test_support::auth_server;

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
