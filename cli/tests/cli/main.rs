//! Tests for the `umcp` binary: the commands, exit codes and OAuth, installed with `cargo install
//! --path cli` and run from the `PATH` as a user would, end to end against the bundled demo
//! server.

mod agent_skill;
mod asking;
#[cfg(target_os = "linux")]
mod auth;
mod catalog;
mod commands;
mod exit_codes;
mod fake;
mod hostile;
mod hosts;
mod http;
mod listings;
mod lock;
mod messages;
mod scripting;
#[cfg(unix)]
mod sessions;
mod shell;
#[cfg(unix)]
mod signals;
mod skills;
mod tasks;
mod timeouts;
mod trust;
