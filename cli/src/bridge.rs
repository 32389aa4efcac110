//! `umcp bridge`: an MCP server for a host, on stdin and stdout (or Streamable HTTP with
//! `--listen`), in front of one server (`--stdio`, `--url`, `--server`) or every server of a
//! configuration file, reached as a umcp client. The host is answered in the protocol era and
//! version it speaks, whatever the servers speak: a 2025 host reaches a 2026-07-28-only
//! server, and the reverse.
//!
//! Everything passes both ways: tools, resources and their subscriptions, prompts,
//! completions, log lines, progress, cancellation, list changes, and a server's questions
//! (elicitation, sampling, roots), which a handshake-era host is sent as requests and a
//! stateless-era host as input rounds of the request they belong to. Authorization stays here:
//! OAuth runs in the bridge, and no token reaches the host. A server that reconnects is seen
//! by the host only as the lists that changed.
//!
//! The parts, each naming only those before it:
//! - [`wire`]: what a host's messages say and what it is answered, per era;
//!   [`outbox`]: the bounded queues to a host;
//! - [`host`]: a host's session and the questions it was asked; [`clock`] and [`jobs`]: the
//!   requests in progress and their deadlines; [`asks`]: a server's questions put to hosts;
//! - [`upstream`] and [`catalog`]: the servers, routing and what hosts are shown;
//!   [`follow`]: listen streams and resource subscriptions;
//! - [`context`], [`fanout`] and [`start`]: the bridge, what the servers announce, and
//!   starting them; [`calls`]: one request worked on;
//! - [`dispatch`]: a host's message taken; [`stdio`] and [`http`]: the two ways in.
//!
//! Threads, each bounded: the reader of stdin (the main thread) and the writer of stdout;
//! one per request in progress ([`jobs::MAX_JOBS`]); the clock; the two of [`fanout`]; one per
//! followed resource ([`follow::MAX_FOLLOWED`]); with `--listen`, the acceptor and one per
//! connection ([`http::MAX_CONNECTIONS`]); and the library's own for each server.

use crate::args::Args;
use crate::exit::{usage, Exit};
use crate::signals::Shutdown;
use crate::spec::Cmd;

mod asks;
mod calls;
mod catalog;
mod clock;
mod context;
mod diag;
mod dispatch;
mod fanout;
pub mod flags;
mod follow;
mod host;
mod http;
mod jobs;
mod outbox;
mod start;
mod stdio;
mod token;
mod upstream;
mod wire;

use context::{Bridge, Settings};
use start::Declared;

/// Runs the bridge until its host is gone (stdin ended) or a signal stops it; the servers are
/// closed by the caller (`Shutdown::finish`), ending their sessions.
pub fn run(args: &Args, cmd: &Cmd, shutdown: &Shutdown) -> Result<(), Exit> {
    diag::install();
    // The servers as every command takes them: `--protocol` over the file's, the lock when
    // they are pinned (`--frozen`, or a file that says so).
    let servers = crate::run::configured(args, cmd)?;
    if servers.servers.is_empty() {
        return Err(usage("bridge: no server to bridge to"));
    }
    if let Some(flag) = args.bridge.without_listen() {
        return Err(usage(format!("--{flag} is for bridge --listen")));
    }
    // A server that needs the user to sign in waits for the user too.
    let signing_in = servers.servers.iter().any(|s| s.oauth().is_some());
    let settings = Settings {
        timeout: args.timeout,
        startup: match signing_in {
            true => args.timeout.saturating_add(crate::oauth::USER_WAIT),
            false => args.timeout,
        },
    };
    let bridge = Bridge::new(settings)
        .map_err(|e| Exit(1, format!("bridge: cannot start a thread: {e}")))?;
    let served = match &args.bridge.listen {
        Some(address) => {
            let listener = http::Listener::bind(address, &args.bridge)?;
            start::start(&bridge, (args, servers), &Declared::everything(), shutdown)?;
            http::serve(&bridge, listener)
        }
        None => {
            let mut servers = Some(servers);
            stdio::serve(&bridge, |first| match servers.take() {
                Some(servers) => {
                    start::start(&bridge, (args, servers), &Declared::by(first), shutdown)
                }
                None => Ok(()),
            })
        }
    };
    bridge.stop();
    served
}
