//! `umcp`: a command-line MCP client. List and call the tools, resources and prompts of one
//! server or of every server in a configuration file; see `umcp --help`.
//!
//! ```text
//! umcp --stdio 'npx -y @modelcontextprotocol/server-everything' tools
//! umcp --stdio 'uvx mcp-server-time' call get_current_time '{"timezone": "UTC"}'
//! umcp --url http://localhost:3000/mcp --header 'Authorization: Bearer x' info
//! umcp --config ~/.cursor/mcp.json --json tools
//! ```
//!
//! Installed with `cargo install --path cli` from a checkout of umcp. The arguments are parsed
//! with `lexopt` (no dependencies of its own); the options, commands and help live in one table,
//! [`spec`], from which `--help`, the bash, zsh and fish completions and the manual page are
//! generated.
//!
//! Each floor names only the ones below it:
//! - at the bottom, how a command ends ([`exit`]: its code and message, the usage error),
//!   and what prints, reads the terminal and describes the commands ([`output`], [`shown`],
//!   [`console`], [`spec`]);
//! - the command line read ([`args`]) and the servers it names found ([`servers`], through
//!   [`trust`] for a project's file), with the lock they are pinned to ([`pinned`]);
//! - one command run against connected servers ([`target`], [`commands`], [`listing`],
//!   [`watch`], [`tasks`], [`skills`]);
//! - connecting and running it ([`run`]), for a plain run, a line of [`shell`] and a command
//!   sent to a [`session`]; [`lock`], which connects and lists the servers to lock them, with
//!   what drifted shown by [`drift`];
//! - `main`: the dispatch.
//!
//! The only unsafe code is the signal handler, in [`signals`], and, in [`session`] (Unix
//! only), the call that asks for the user's id and the connect to a session's socket with a
//! deadline, which std does not offer.
#![deny(unsafe_code)]

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Instant;

mod args;
mod arguments;
mod auth;
mod bridge;
mod catalog;
mod commands;
mod completions;
mod config_files;
mod console;
mod deadline;
mod describe;
mod doctor;
mod drift;
mod exit;
mod grep;
mod help;
mod hosts;
mod interact;
mod listing;
mod lock;
mod logs;
mod man;
mod names;
mod naming;
mod network;
mod oauth;
mod output;
mod pinned;
mod relay;
mod roots;
mod run;
mod secret_words;
mod servers;
mod session;
mod shape;
mod shaping;
mod shell;
mod shown;
mod sign_in;
mod signals;
mod skill_dirs;
mod skills;
mod spec;
mod suggest;
mod sync;
mod target;
mod tasks;
mod trust;
mod user_dirs;
mod verbose;
mod watch;

use deadline::Interrupt;
use exit::{report_as, usage, Exit};
use signals::Shutdown;

fn main() -> ExitCode {
    let shutdown = Shutdown::install();
    let result = dispatch(&shutdown);
    shutdown.finish();
    // `--json` anywhere on the command line: a failure is told as JSON, the command line's
    // own mistakes too.
    let json = std::env::args_os().skip(1).any(|a| a == "--json");
    let code = report_as(result, json);
    // Output that did not all reach stdout fails the run (a closed pipe does not).
    if let Some(error) = output::write_error() {
        output::warn(&format!("umcp: writing the output failed: {error}"));
        return ExitCode::from(code.max(1));
    }
    ExitCode::from(code)
}

/// Runs the command line: a session's process, a command that needs no server, one sent to
/// a session, or one run against servers started here.
fn dispatch(shutdown: &Shutdown) -> Result<(), Exit> {
    let raw: Vec<OsString> = std::env::args_os().skip(1).collect();
    if let Some(words) = names::asked(&raw) {
        return names::print(&words);
    }
    if session::is_daemon(&raw) {
        return session::daemon(shutdown);
    }
    let args = args::parse(raw)?;
    verbose::init(args.verbose);
    let (cmd, rest) = args::command(&args)?;
    match cmd.name {
        "completions" => {
            let shell = rest.first().copied().unwrap_or_default();
            let script = completions::script(shell)
                .ok_or_else(|| usage(format!("no completions for {shell}: bash, zsh or fish")))?;
            return Err(Exit(0, script));
        }
        "man" => return Err(Exit(0, man::page())),
        "servers" => return catalog::run(&args, &rest),
        "session" => return session::run(&args, &rest, shutdown),
        "trust" => return trust::command(&args, &rest),
        "auth" => return auth::run(&args, &rest, shutdown),
        "bridge" => return bridge::run(&args, cmd, shutdown),
        "doctor" => return doctor::run(&args, &rest),
        _ => {}
    }
    relay::check(cmd.name, &args)?;
    if matches!(cmd.name, "record" | "replay") {
        return relay::run(cmd.name, &args, &rest);
    }
    if cmd.name == "lock" {
        if args.session.is_some() {
            return Err(usage(
                "lock connects the servers itself: run it without --session",
            ));
        }
        return lock::run(&args, cmd, shutdown);
    }
    if let Some(name) = &args.session {
        session::check_command(name, &args, cmd)?;
        return match cmd.name {
            #[cfg(unix)]
            "shell" => shell::run_through(name, &args, shutdown),
            _ => session::through(name, shutdown),
        };
    }
    let started = Instant::now();
    let servers = run::configured(&args, cmd)?;
    // The arguments of `call` and `prompt`, checked before anything starts (a prompt's are
    // all text, whatever the server lists; a tool's are typed once its schema is known).
    let arguments = run::arguments(cmd, &rest, arguments::Stdin::Read)?;
    // The shell keeps its lists fresh; any other command runs once and exits.
    let connected = run::connect(&args, servers, shutdown, cmd.name != "shell")?;
    let result = match cmd.name {
        "shell" => shell::run(&connected.manager, &args, shutdown),
        _ => run::execute(
            &connected.manager,
            &args,
            (cmd, &rest, arguments),
            started,
            &Interrupt::default(),
        ),
    };
    connected.finish();
    result
}
