//! `umcp session`: servers kept connected by a background process, which the commands of
//! `umcp --session NAME …` run through, so that a stateful server keeps its state between
//! the commands of a script and its start-up is paid once.
//!
//! `session start NAME` starts the process (this program again, in a process group of its
//! own, so that the terminal's Ctrl-C does not reach it) with a socket pair for its stdin,
//! over which it reports its start-up as a command does: the same messages and exit codes,
//! and the command returns once the servers are up. The process then listens on a socket in
//! a directory only the user can reach ([`dir`]), and runs the commands sent to it, several at
//! once, with the same code a command run directly does ([`crate::run::execute`]), each on the
//! console of the `umcp` that sent it ([`wire`] is what they say). Unix only, for now.

use std::ffi::OsString;

use crate::args::Args;
use crate::exit::{usage, Exit};
use crate::signals::Shutdown;
use crate::spec::Cmd;

#[cfg(unix)]
mod caller;
#[cfg(unix)]
mod daemon;
#[cfg(unix)]
mod dir;
#[cfg(unix)]
mod turns;
#[cfg(unix)]
mod wire;
#[cfg(unix)]
mod words;

#[cfg(unix)]
pub use caller::{Kept, Printed, Sink};
#[cfg(unix)]
pub use words::for_session;

/// The first word of the command line that makes `umcp` a session's process: no option or
/// command a user types.
const PROCESS: &str = "--umcp-session-process";

/// Whether this is a session's process. Its command line is that word alone: the options
/// of `session start` (a literal header or secret among them) come over its connection to
/// the `umcp` that started it, never in its command line, which anyone may read (`ps`) for
/// as long as the session lives.
pub fn is_daemon(raw: &[OsString]) -> bool {
    raw.len() == 1 && raw[0] == PROCESS
}

/// The names of the sessions whose sockets are in the runtime directory, for completions.
pub fn names() -> Vec<String> {
    #[cfg(unix)]
    return dir::runtime_dir()
        .map(|d| dir::names(&d))
        .unwrap_or_default();
    #[cfg(not(unix))]
    Vec::new()
}

/// Runs a session's process.
pub fn daemon(shutdown: &Shutdown) -> Result<(), Exit> {
    #[cfg(unix)]
    return daemon::run(shutdown);
    #[cfg(not(unix))]
    {
        let _ = shutdown;
        Err(unsupported())
    }
}

#[cfg(not(unix))]
fn unsupported() -> Exit {
    Exit(
        1,
        "sessions are not available on Windows yet: run each command on its own".into(),
    )
}

/// The options given that only `session start` takes: they say which servers to start and
/// how, which a running session has settled.
fn start_options(args: &Args) -> Vec<&'static str> {
    let oauth = &args.oauth;
    let given = [
        ("stdio", args.stdio.is_some()),
        ("url", args.url.is_some()),
        ("config", args.config.is_some()),
        ("server", args.server.is_some()),
        ("env", !args.env_given.is_empty()),
        ("header", !args.headers.is_empty()),
        ("transport", args.transport.is_some()),
        ("protocol", args.protocol.is_some()),
        ("oauth", oauth.for_server() || oauth.token_store.is_some()),
        (
            args.network
                .first_given()
                .map_or("proxy", |o| o.trim_start_matches('-')),
            args.network.first_given().is_some(),
        ),
        ("log", args.log.is_some()),
        ("root", !args.roots.is_empty()),
        ("verbose", args.verbose > 0),
        ("idle", args.idle.is_some()),
    ];
    given
        .iter()
        .filter(|(_, g)| *g)
        .map(|(name, _)| *name)
        .collect()
}

/// Checks the options of `session start NAME`.
pub fn check_start(args: &Args, name: &str) -> Result<(), Exit> {
    #[cfg(unix)]
    dir::check_name(name)?;
    #[cfg(not(unix))]
    let _ = name;
    if args.session.is_some() {
        return Err(usage(
            "--session runs a command through a session; session start takes the server options",
        ));
    }
    Ok(())
}

/// Checks a command to run through a session: the options that pick and configure servers
/// belong to `session start`, and the commands that need no server do not go through one.
pub fn check_through(args: &Args, cmd: &Cmd) -> Result<(), Exit> {
    // `--server` picks one of the session's servers for this command; the other options
    // started them.
    let settled = start_options(args).into_iter().find(|o| *o != "server");
    if let Some(option) = settled {
        return Err(usage(format!(
            "--{option} is given to umcp session start, not to a command run through a session"
        )));
    }
    if matches!(
        cmd.name,
        "session" | "servers" | "completions" | "man" | "help"
    ) {
        return Err(usage(format!(
            "umcp {} does not run through a session: leave out --session",
            cmd.name
        )));
    }
    Ok(())
}

/// `session start NAME`, `session list` or `session stop NAME`.
pub fn run(args: &Args, rest: &[&str], shutdown: &Shutdown) -> Result<(), Exit> {
    if let (Some(option), Some(&"list" | &"stop")) = (start_options(args).first(), rest.first()) {
        return Err(usage(format!("--{option} is for session start")));
    }
    if args.session.is_some() && rest.first() != Some(&"start") {
        return Err(usage(
            "session takes the session's name after the subcommand, not --session",
        ));
    }
    #[cfg(unix)]
    match rest {
        ["start", name] => start(args, name, shutdown),
        ["list"] => list(args.json),
        ["stop", name] => stop(name),
        _ => Err(usage(
            "bad arguments: umcp session start NAME|list|stop NAME",
        )),
    }
    #[cfg(not(unix))]
    {
        let _ = shutdown;
        Err(unsupported())
    }
}

/// Checks `cmd` before it runs through session `name` (see [`check_through`]), and the
/// session's name; sessions need Unix.
pub fn check_command(name: &str, args: &Args, cmd: &Cmd) -> Result<(), Exit> {
    check_through(args, cmd)?;
    #[cfg(unix)]
    return dir::check_name(name);
    #[cfg(not(unix))]
    {
        let _ = name;
        Err(unsupported())
    }
}

/// Runs a command through session `name` once [`check_command`] passed it: this program's own
/// command line is sent, and what the session prints is printed here.
pub fn through(name: &str, shutdown: &Shutdown) -> Result<(), Exit> {
    #[cfg(unix)]
    {
        // The words were read as text already: none is lost here.
        let words = std::env::args_os().skip(1);
        let words = words.map(|w| w.to_string_lossy().into_owned()).collect();
        let words = words::for_session(words, crate::arguments::Stdin::Read)?;
        let signals = Some((shutdown, caller::OnSignal::Exit));
        match send_command(name, words, &mut Printed, signals)? {
            0 => Ok(()),
            code => Err(Exit(code, String::new())),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (name, shutdown);
        Err(unsupported())
    }
}

/// Sends session `name` a command (`umcp`'s arguments) and relays its output to `sink`;
/// returns its exit code. `shell`: Ctrl-C stops the command and the program goes on.
#[cfg(unix)]
pub fn send_command(
    name: &str,
    words: Vec<String>,
    sink: &mut dyn Sink,
    signals: Option<(&Shutdown, caller::OnSignal)>,
) -> Result<u8, Exit> {
    use crate::console::{Console, Local, Stream};
    let stream = reach(name)?;
    let run = wire::Run {
        args: words,
        stdin: Local.is_terminal(Stream::Stdin),
        stdout: Local.is_terminal(Stream::Stdout),
        stderr: Local.is_terminal(Stream::Stderr),
    };
    caller::relay(stream, &wire::Request::Run(run), name, sink, signals)
}

/// What a shell's Ctrl-C does to a command sent to a session: stops it, not the shell.
#[cfg(unix)]
pub fn shell_signals(shutdown: &Shutdown) -> Option<(&Shutdown, caller::OnSignal)> {
    Some((shutdown, caller::OnSignal::Stop))
}

/// A connection to session `name`; exit code 3 when it is not running.
#[cfg(unix)]
fn reach(name: &str) -> Result<std::os::unix::net::UnixStream, Exit> {
    let dir = dir::runtime_dir()?;
    match dir::connect(&dir::socket(&dir, name))? {
        dir::Found::Live(stream) => Ok(stream),
        dir::Found::Stale => Err(Exit(
            3,
            format!("session `{name}` is not running (it had ended; its socket was removed)"),
        )),
        dir::Found::Missing => Err(Exit(
            3,
            format!("no session named `{name}` (umcp session list shows them)"),
        )),
    }
}

/// `session start NAME`: starts the session's process and relays its start-up.
#[cfg(unix)]
fn start(args: &Args, name: &str, shutdown: &Shutdown) -> Result<(), Exit> {
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    use crate::console::{Console, Local, Stream};

    check_start(args, name)?;
    let failed = |e: std::io::Error| Exit(1, format!("cannot start the session's process: {e}"));
    let exe = std::env::current_exe().map_err(failed)?;
    let (ours, theirs) = UnixStream::pair().map_err(failed)?;
    // The arguments go over the connection: a command line is anyone's to read.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.into_string())
        .collect::<Result<_, _>>()
        .map_err(|_| crate::exit::usage("session start takes its arguments as UTF-8 text"))?;
    let mut child = Command::new(exe)
        .arg(PROCESS)
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Out of the terminal's foreground group: a Ctrl-C typed later is not for it.
        .process_group(0)
        .spawn()
        .map_err(failed)?;
    let run = wire::Run {
        args,
        stdin: Local.is_terminal(Stream::Stdin),
        stdout: Local.is_terminal(Stream::Stdout),
        stderr: Local.is_terminal(Stream::Stderr),
    };
    let signals = Some((shutdown, caller::OnSignal::Exit));
    match caller::relay(ours, &wire::Request::Run(run), name, &mut Printed, signals) {
        Ok(0) => Ok(()),
        Ok(code) => {
            let _ = child.wait();
            Err(Exit(code, String::new()))
        }
        Err(_) => {
            // It ended without a word: how is all there is to say.
            let status = match child.wait() {
                Ok(status) => format!(" ({status})"),
                Err(_) => String::new(),
            };
            Err(Exit(
                1,
                format!("the process of session `{name}` ended before it was ready{status}"),
            ))
        }
    }
}

/// `session list`: each running session, asked for its state.
#[cfg(unix)]
fn list(json: bool) -> Result<(), Exit> {
    use wire::{Reader, Reply, Request};
    let dir = dir::runtime_dir()?;
    let mut rows = Vec::new();
    for name in dir::names(&dir) {
        let dir::Found::Live(stream) = dir::connect(&dir::socket(&dir, &name))? else {
            continue;
        };
        let asked = stream
            .set_write_timeout(Some(wire::HELLO))
            .and_then(|()| wire::send(&stream, &Request::Status {}))
            .and_then(|()| Reader::new(stream))
            .and_then(|mut reader| reader.next_within::<Reply>(wire::HELLO));
        let row = match asked {
            Ok(Reply::Status(status)) => {
                let servers: Vec<String> = status
                    .servers
                    .iter()
                    .map(|s| format!("{} ({})", s.name, crate::shown::line(&s.state)))
                    .collect();
                let line = format!(
                    "{name}  pid {}  {}  idle {}s of {}s{}",
                    status.pid,
                    servers.join(", "),
                    status.idle,
                    status.idle_limit,
                    if status.busy { "  (busy)" } else { "" }
                );
                (serde_json::to_value(&status).unwrap_or_default(), line)
            }
            _ => (
                serde_json::json!({"name": name, "error": "not answering"}),
                format!("{name}  not answering"),
            ),
        };
        rows.push(row);
    }
    crate::output::Output { json }.list(rows.into_iter());
    Ok(())
}

/// `session stop NAME`: the session ends, and its servers with it.
#[cfg(unix)]
fn stop(name: &str) -> Result<(), Exit> {
    dir::check_name(name)?;
    let stream = reach(name).map_err(|Exit(_, message)| Exit(1, message))?;
    match caller::relay(stream, &wire::Request::Stop {}, name, &mut Printed, None)? {
        0 => Ok(()),
        code => Err(Exit(code, String::new())),
    }
}
