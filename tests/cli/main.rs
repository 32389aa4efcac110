//! Tests for the `umcp` binary: the commands, exit codes and OAuth, installed with `cargo install --path . --features cli`
//! and run from the `PATH` as a user would, end to end against the bundled demo server.

#[allow(dead_code)] // Only the binary's path is used here.
#[path = "../common/demo.rs"]
mod demo;

#[path = "../common/umcp.rs"]
mod umcp;

#[allow(dead_code)] // Only server-everything is used here.
#[path = "../common/peers/mod.rs"]
mod peers;

#[cfg(feature = "http")]
#[path = "../common/http_server.rs"]
mod http_server;

#[cfg(feature = "http")]
#[path = "../common/http_demo.rs"]
mod http_demo;

#[cfg(feature = "oauth")]
#[path = "../common/auth_server/mod.rs"]
mod auth_server;

#[path = "../common/python.rs"]
mod python;

mod asking;
mod catalog;
mod commands;
mod exit_codes;
mod fake;
mod hostile;
#[cfg(feature = "http")]
mod http;
mod listings;
mod messages;
#[cfg(unix)]
mod sessions;
mod shell;
#[cfg(unix)]
mod signals;
mod skills;
mod tasks;
mod timeouts;
mod trust;
