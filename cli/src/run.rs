//! Connecting and running a command: the servers a command line names, started and connected
//! by a manager, and one command run against them. A plain `umcp COMMAND`, a line of
//! `umcp shell` and a command sent to a session all run through here.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use umcp::lock::Lockfile;
use umcp::{
    Manager, ManagerOptions, Options, ProtocolMode, RequestOptions, ServerConfig, ServerStatus,
};

use crate::args::Args;
use crate::arguments::{self, Arguments, Stdin};
use crate::deadline::{Deadline, Interrupt};
use crate::exit::{usage, Exit};
use crate::output::{warn, Output};
use crate::signals::Shutdown;
use crate::spec::Cmd;
use crate::target::Target;
use crate::{interact, logs, oauth, servers, shown, sign_in};

/// How long a server whose start failed within `--timeout` may take beyond it to be closed,
/// so that the failure is what gets reported: a stdio server that ignores the end of its
/// input gets its close grace, then SIGTERM and its kill grace (2 s each by default).
const CLOSE_MARGIN: Duration = Duration::from_secs(10);

/// The servers a command starts, and the lock their tools are pinned to, if any.
pub struct Configured {
    pub servers: Vec<ServerConfig>,
    /// The lock, with `--frozen` or a configuration file that says `"frozen": true`.
    pub lock: Option<Lockfile>,
    /// Where the lockfile is (see [`servers::Servers::lockfile`]).
    pub lockfile: PathBuf,
    /// Every server the configuration file names (see [`servers::Servers::in_file`]).
    pub in_file: Option<Vec<String>>,
}

/// The servers of the command line or configuration file, as `args` asks for them, checked
/// against what `cmd` needs, and their lock when they are pinned.
pub fn configured(args: &Args, cmd: &Cmd) -> Result<Configured, Exit> {
    let found = servers::servers(args)?;
    let mut servers = found.list;
    // `--protocol` on the command line wins over a `protocol` key in the configuration file,
    // `auto` too (which probes a server the file pins).
    if let Some(protocol) = &args.protocol {
        for server in &mut servers {
            server.protocol = Some(protocol.clone());
        }
    }
    one_server(cmd, servers.len())?;
    crate::network::remember(&servers);
    // `lock` reads the servers as they are, whatever the file says.
    let lock = match (args.frozen || found.frozen) && cmd.name != "lock" {
        true => Some(crate::pinned::load(&found.lockfile, "--frozen")?),
        false => None,
    };
    Ok(Configured {
        servers,
        lock,
        lockfile: found.lockfile,
        in_file: found.in_file,
    })
}

/// Fails with a usage error when `cmd` needs one server and there are `count`.
pub fn one_server(cmd: &Cmd, count: usize) -> Result<(), Exit> {
    if cmd.one_server && count != 1 {
        return Err(usage(format!(
            "{} needs one server: add --server NAME",
            cmd.name
        )));
    }
    Ok(())
}

/// The arguments of `call` and `prompt`, read from the words after the name (and from stdin
/// or files, as they say).
pub fn arguments(cmd: &Cmd, rest: &[&str], stdin: Stdin<'_>) -> Result<Arguments, Exit> {
    let arguments = match cmd.name {
        "call" | "prompt" => {
            let words = arguments::resolve(rest.get(1..).unwrap_or_default(), stdin);
            let words = words.map_err(usage)?;
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            arguments::parse(&words).map_err(usage)?
        }
        _ => Arguments::Json(Value::Null),
    };
    Ok(match cmd.name {
        "prompt" => Arguments::Json(arguments.for_prompt().map_err(usage)?),
        _ => arguments,
    })
}

/// The servers, started and connected, and the printer of their log messages (`--log`).
pub struct Connected {
    pub manager: Arc<Manager>,
    logs: Option<logs::Printer>,
}

impl Connected {
    /// Closes the servers when log messages are printed, for the last ones to be.
    pub fn finish(self) {
        if let Some(logs) = self.logs {
            self.manager.close();
            logs.finish();
        }
    }
}

/// Starts `servers` as `args` configures them and waits until each one is connected or has
/// failed (each failure said on stderr); exit code 3 when none connected, unless the command
/// is `ping`, which reports each server. For a `one_shot` command the servers get only what
/// it asks for: their list changes are not followed, nor their prompts listed on connect.
pub fn connect(
    args: &Args,
    Configured { servers, lock, .. }: Configured,
    shutdown: &Shutdown,
    one_shot: bool,
) -> Result<Connected, Exit> {
    let pinned = lock.is_some();
    // A server of `--stdio` or `--url` is named after its program or host; one of a file,
    // given or found, by its name there.
    let from_command_line = args.stdio.is_some() || args.url.is_some();
    let timeout = args.timeout;
    let mut client_options = Options::default()
        .with_tasks(true)
        .with_request_timeout(timeout)
        .with_protocol_mode(args.protocol.clone().unwrap_or(ProtocolMode::Auto));
    if let Some(level) = args.log {
        client_options = client_options.with_log_level(level);
    }
    if !args.roots.is_empty() {
        client_options = client_options.with_roots(crate::roots::roots(&args.roots)?);
    }
    let options = ManagerOptions::default()
        .without_cache()
        .with_reconnect_attempts(0)
        .with_startup_timeout(timeout)
        .with_client_options(client_options)
        .with_elicitation_handler(interact::handler(&servers, from_command_line));
    let options = match one_shot {
        true => options.without_following_lists(),
        false => options,
    };
    let options = sign_in::configure(options, &args.oauth).map_err(usage)?;
    let options = match lock {
        Some(lock) => options.with_tool_lock(lock),
        None => options,
    };
    // The manager's start-up timeout bounds each connect (probe and `initialize` together);
    // a user in a browser gets the authorization flow's own time on top.
    let mut wait = timeout.saturating_add(CLOSE_MARGIN);
    if servers.iter().any(|s| s.oauth().is_some()) {
        wait = wait.saturating_add(oauth::USER_WAIT);
    }
    let manager = shutdown.start(|| Manager::start(servers, options));
    manager.wait_ready(wait);
    for (name, status) in manager.statuses() {
        if !status.is_connected() {
            // A server's failure may hold its stderr tail: escaped, as all it wrote.
            let why = shown::block(&servers::why_down(&status));
            match status {
                ServerStatus::Connecting { .. } => {
                    warn(&format!("umcp: server `{name}`: {why} after {wait:.0?}"));
                }
                _ => warn(&format!("umcp: server `{name}`: {why}")),
            }
        }
    }
    if pinned {
        crate::pinned::report_hidden(&manager);
    }
    let command = args.command.first().map(String::as_str);
    // `ping` reports every server, those that never connected too.
    if !manager.statuses().iter().any(|(_, s)| s.is_connected()) && command != Some("ping") {
        return Err(Exit(3, String::new()));
    }
    let logs = args.log.is_some().then(|| logs::Printer::start(&manager));
    Ok(Connected { manager, logs })
}

/// Runs one command against the connected servers, for a plain `umcp` command or a session. Its
/// requests share one `--timeout`, counted from the last connection or `since`, whichever is later,
/// so the manager's listings on connecting count against it.
pub fn execute(
    manager: &Manager,
    args: &Args,
    (cmd, rest, arguments): (&Cmd, &[&str], Arguments),
    since: Instant,
    interrupt: &Interrupt,
) -> Result<(), Exit> {
    let mut names = manager.server_names();
    // Through a session of several servers, `--server` names the one this command is for
    // (a plain run has started that one alone).
    if let (Some(server), true) = (&args.server, names.len() > 1) {
        if !names.contains(server) {
            return Err(usage(format!(
                "no server named {} here: {}",
                shown::line(server),
                shown::line(&names.join(", "))
            )));
        }
        names = vec![server.clone()];
    }
    one_server(cmd, names.len())?;
    let timeout = args.timeout;
    let connected = names
        .iter()
        .filter_map(|name| manager.connected_since(name))
        .max()
        .unwrap_or_else(Instant::now);
    let deadline = Deadline::start(
        RequestOptions::default().with_timeout(timeout),
        timeout,
        connected.max(since),
        interrupt,
    );
    let target = Target {
        manager,
        args,
        single: (names.len() == 1).then(|| names[0].clone()),
        out: Output { json: args.json },
        deadline,
        watch: (args.watch.clone(), args.watch_for),
    };
    target.execute(cmd.name, rest, arguments)
}
