//! Parsing the command line with `lexopt`, against the options of [`spec`].

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use umcp::types::{LoggingLevel, SubscriptionFilter};
use umcp::ProtocolMode;

use crate::exit::{usage, Exit};
use crate::help;
use crate::oauth;
use crate::shaping::Shaping;
use crate::spec::{self, Cmd};
use crate::suggest;

/// The parsed command line.
#[derive(Default)]
pub struct Args {
    pub stdio: Option<String>,
    pub env: Vec<(String, String)>,
    pub url: Option<String>,
    pub transport: Option<String>,
    pub headers: Vec<(String, String)>,
    /// `--proxy`, `--cacert`, `--system-trust`, `--cert`, `--key` and `--unix-socket`.
    pub network: crate::network::Flags,
    pub config: Option<String>,
    pub server: Option<String>,
    pub json: bool,
    pub timeout: Duration,
    /// Whether `--timeout` was given (a sign-in waits for the user otherwise).
    pub timeout_given: bool,
    /// `--protocol`, when given: `auto` probes each server; `legacy` and `modern` skip the
    /// probe. Given, it wins over a configuration file's `protocol` key, `auto` too.
    pub protocol: Option<ProtocolMode>,
    /// `--log`: the servers' log messages to show, from this level up.
    pub log: Option<LoggingLevel>,
    pub oauth: oauth::Flags,
    /// What `watch` follows; empty means every list.
    pub watch: SubscriptionFilter,
    /// `--for`: how long `watch` runs.
    pub watch_for: Option<Duration>,
    /// The options given that only `watch` takes, for the error when another command has them.
    pub watch_options: Vec<&'static str>,
    /// `--list` and `--revoke FILE`, for `trust`.
    pub trust: TrustFlags,
    /// `--out`: where `record` writes the session, and `lock` the lockfile.
    pub out: Option<String>,
    /// `--check`: `lock` compares instead of writing.
    pub check: bool,
    /// `--frozen`: the servers' tools are pinned to the lockfile.
    pub frozen: bool,
    /// The command and its arguments.
    pub command: Vec<String>,
    /// `--session NAME`: the command runs through that session's process.
    pub session: Option<String>,
    /// `--idle`: how long a session's process waits for a command before it ends.
    pub idle: Option<Duration>,
    /// The options of `bridge`.
    pub bridge: crate::bridge::flags::Flags,
    /// Each `--env` as it was given (`KEY=VALUE` or `NAME`), for the configuration file
    /// `servers add` writes, where `NAME` stays a reference to the variable.
    pub env_given: Vec<String>,
    /// The names of `--env NAME` not set in umcp's environment: written as references by
    /// `servers add`, and a usage error for a server run now.
    pub env_unset: Vec<String>,
    /// `--raw`, `--structured`, `--max-chars` and `--save`: how a result is printed.
    pub shaping: Shaping,
    /// `--meta`: what the command's requests carry in `_meta`.
    pub meta: Map<String, Value>,
    /// `--root DIR`: the directories offered to the servers as roots, as given.
    pub roots: Vec<String>,
    /// `--task`: `call` starts the tool as a task and prints its id.
    pub task: bool,
    /// `--no-check`: `call` sends its arguments unchecked.
    pub no_check: bool,
    /// `-v` (1), `-vv` (2): how much of umcp's own log is shown.
    pub verbose: u8,
}

/// `--list` and `--revoke FILE`, the options of `trust`.
#[derive(Default)]
pub struct TrustFlags {
    pub list: bool,
    pub revoke: Option<String>,
}

impl TrustFlags {
    /// Whether either was given (they are for `trust` only).
    pub fn given(&self) -> bool {
        self.list || self.revoke.is_some()
    }
}

/// Parses `raw` (without the program name). Help and the version end the program with
/// exit code 0 and their text.
pub fn parse(raw: Vec<OsString>) -> Result<Args, Exit> {
    use lexopt::prelude::*;
    let mut args = Args {
        timeout: Duration::from_secs(30),
        ..Args::default()
    };
    let mut help = false;
    let mut parser = lexopt::Parser::from_args(raw);
    while let Some(arg) = parser.next().map_err(bad)? {
        match arg {
            Long(name) => {
                let name = name.to_owned();
                let flag = spec::flag_named(&name).ok_or_else(|| {
                    let longs = spec::FLAGS.iter().map(|f| f.long);
                    let hint = suggest::closest(&name, longs).map(|f| format!("--{f}"));
                    usage(format!("unknown option --{name}{}", did_you_mean(hint)))
                })?;
                let value = match flag.value {
                    Some(_) => Some(parser.value().map_err(bad)?.string().map_err(bad)?),
                    None => None,
                };
                if !flag.choices.is_empty() {
                    let v = value.as_deref().unwrap_or_default();
                    // `--protocol` takes a stateless-era version too, as its help says.
                    let version = name == "protocol" && ProtocolMode::parse(v).is_some();
                    if !flag.choices.contains(&v) && !version {
                        let more = match name.as_str() {
                            "protocol" => " or a stateless-era version (2026-07-28)",
                            _ => "",
                        };
                        return Err(usage(format!(
                            "--{name} {v}: expected one of {}{more}",
                            flag.choices.join(", ")
                        )));
                    }
                }
                if crate::network::Flags::takes(&name) {
                    args.network.set(&name, value.unwrap_or_default());
                } else {
                    apply(&mut args, &name, value, &mut help)?;
                }
            }
            Short('h') => help = true,
            Short('v') => args.verbose = args.verbose.saturating_add(1),
            Short(c) => return Err(usage(format!("unknown option -{c}"))),
            Value(word) => args.command.push(word.string().map_err(bad)?),
        }
    }
    if help || args.command.first().map(String::as_str) == Some("help") {
        // `call TOOL --help` describes the tool, which takes its servers.
        if let (true, [call, tool, ..]) = (help, args.command.as_slice()) {
            if call == "call" {
                args.command = vec!["describe".into(), tool.clone()];
                return Ok(args);
            }
        }
        let topic = match args.command.as_slice() {
            [first, topic, ..] if first == "help" => Some(topic),
            [first, ..] if first != "help" => Some(first),
            _ => None,
        };
        let Some(topic) = topic else {
            return Err(Exit(0, help::help()));
        };
        let cmd = spec::command(topic).ok_or_else(|| unknown_command(topic))?;
        return Err(Exit(0, help::command_help(cmd)));
    }
    Ok(args)
}

/// `--env KEY=VALUE`, or `--env NAME` for umcp's own `NAME`, which keeps a secret off the
/// command line (where `ps` and the shell's history see it).
fn env_entry(text: &str) -> Result<(String, String), Exit> {
    if let Some((key, value)) = text.split_once('=') {
        if key.is_empty() {
            return Err(usage(format!("--env {text}: expected KEY=VALUE or NAME")));
        }
        return Ok((key.to_owned(), value.to_owned()));
    }
    if text.is_empty() {
        return Err(usage("--env: expected KEY=VALUE or NAME"));
    }
    match std::env::var(text) {
        Ok(value) => Ok((text.to_owned(), value)),
        // Known only once the command is: `servers add` writes `${NAME}`, set or not.
        Err(_) => Ok((text.to_owned(), String::new())),
    }
}

/// The usage error for `--env NAME` of a variable that is not set, for a server run now.
pub fn unset_env(name: &str) -> Exit {
    usage(format!(
        "--env {name}: `{name}` is not set (or not UTF-8) in umcp's environment"
    ))
}

/// `--header 'Name: value'` as its name and value, both checked.
fn header_entry(text: &str) -> Result<(String, String), Exit> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| usage(format!("header without a colon: {text}")))?;
    let (name, value) = (name.trim(), value.trim());
    // What HTTP allows (RFC 9110 §5.1, §5.5), so that a typo is told here and not as a
    // connection failure once the server was asked.
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        // The value is left out: it may be a secret.
        return Err(usage(format!("--header: `{name}` is not a header name")));
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(usage(format!(
            "--header {name}: the value holds a control character"
        )));
    }
    Ok((name.to_owned(), value.to_owned()))
}

/// Stores one option's value.
fn apply(args: &mut Args, name: &str, value: Option<String>, help: &mut bool) -> Result<(), Exit> {
    let text = value.unwrap_or_default();
    if for_scripts(args, name, &text)? {
        return Ok(());
    }
    match name {
        "stdio" => args.stdio = Some(text),
        "env" => add_env(args, text)?,
        "url" => args.url = Some(text),
        "transport" => args.transport = Some(text),
        "header" => args.headers.push(header_entry(&text)?),
        "config" => args.config = Some(text),
        "server" => args.server = Some(text),
        "json" => args.json = true,
        "timeout" => (args.timeout, args.timeout_given) = (seconds(name, &text)?, true),
        "for" | "tools" | "prompts" | "resources" | "resource" => {
            if let Some(flag) = spec::flag_named(name) {
                args.watch_options.push(flag.long);
            }
            args.watch = match name {
                "tools" => std::mem::take(&mut args.watch).tools(),
                "prompts" => std::mem::take(&mut args.watch).prompts(),
                "resources" => std::mem::take(&mut args.watch).resources(),
                "resource" => std::mem::take(&mut args.watch).resource(text.clone()),
                _ => std::mem::take(&mut args.watch),
            };
            if name == "for" {
                args.watch_for = Some(seconds(name, &text)?);
            }
        }
        "protocol" => {
            // The choices and versions were checked against the spec: all parse.
            let mode = ProtocolMode::parse(&text)
                .ok_or_else(|| usage(format!("--protocol {text}: not auto, legacy or modern")))?;
            args.protocol = Some(mode);
        }
        "log" => {
            // The choices were checked against the spec: all eight parse.
            let level = LoggingLevel::from_name(&text);
            args.log = Some(level.ok_or_else(|| usage(format!("--log {text}: not a log level")))?);
        }
        "list" => args.trust.list = true,
        "revoke" => args.trust.revoke = Some(text),
        "oauth" => args.oauth.enabled = true,
        "oauth-client-id" => args.oauth.client_id = Some(text),
        "oauth-client-secret" => args.oauth.client_secret = Some(text),
        "oauth-client-secret-file" => args.oauth.client_secret_file = Some(text),
        "oauth-scopes" => args.oauth.scopes = Some(text),
        "token-store" => args.oauth.token_store = Some(text),
        "profile" => args.oauth.profile = Some(text),
        "flow" => args.oauth.flow = Some(text),
        "out" => args.out = Some(text),
        "check" => args.check = true,
        "frozen" => args.frozen = true,
        _ if args.bridge.set(name, text.clone()) => {}
        "session" => args.session = Some(text),
        "idle" => args.idle = Some(seconds(name, &text)?),
        "help" => *help = true,
        "version" => {
            return Err(Exit(0, format!("umcp {}", env!("CARGO_PKG_VERSION"))));
        }
        _ => return Err(usage(format!("unknown option --{name}"))),
    }
    Ok(())
}

/// `--env KEY=VALUE` or `--env NAME`: a variable for the `--stdio` server, or one not set,
/// which only `servers add` may take (it writes `${NAME}`).
fn add_env(args: &mut Args, text: String) -> Result<(), Exit> {
    let (key, value) = env_entry(&text)?;
    if !text.contains('=') && std::env::var(&text).is_err() {
        args.env_unset.push(key);
    } else {
        args.env.push((key, value));
    }
    args.env_given.push(text);
    Ok(())
}

/// Stores one of the options that shape a command's input and output for scripts
/// (`--raw`, `--meta`, `--task`, `-v` …); `false` for any other option.
fn for_scripts(args: &mut Args, name: &str, text: &str) -> Result<bool, Exit> {
    match name {
        "raw" => args.shaping.raw = true,
        "structured" => args.shaping.structured = true,
        "max-chars" => {
            let n = text.parse::<usize>().ok().filter(|n| *n > 0);
            let n = n.ok_or_else(|| usage(format!("--max-chars {text}: not a positive number")))?;
            args.shaping.max_chars = Some(n);
        }
        "save" => args.shaping.save = Some(PathBuf::from(text)),
        "meta" => {
            let (key, value) = meta_entry(text)?;
            args.meta.insert(key, value);
        }
        "root" => args.roots.push(text.to_owned()),
        "task" => args.task = true,
        "no-check" => args.no_check = true,
        "verbose" => args.verbose = args.verbose.saturating_add(1),
        _ => return Ok(false),
    }
    Ok(true)
}

/// `--meta KEY=VALUE` (text) or `KEY:=JSON`, as a call's arguments are written.
fn meta_entry(text: &str) -> Result<(String, Value), Exit> {
    let bad = || usage(format!("--meta {text}: expected KEY=VALUE or KEY:=JSON"));
    let (key, value) = text.split_once('=').ok_or_else(bad)?;
    let (key, value) = match key.strip_suffix(':') {
        Some(key) => (key, serde_json::from_str(value).map_err(|_| bad())?),
        None => (key, Value::String(value.to_owned())),
    };
    if key.is_empty() {
        return Err(bad());
    }
    Ok((key.to_owned(), value))
}

/// A positive number of seconds (below a billion, so it fits any clock).
fn seconds(name: &str, text: &str) -> Result<Duration, Exit> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| usage(format!("--{name} {text}: not a number of seconds")))
}

/// The command and its arguments, checked against the spec.
pub fn command(args: &Args) -> Result<(&'static Cmd, Vec<&str>), Exit> {
    let (name, rest) = args
        .command
        .split_first()
        .ok_or_else(|| usage("no command"))?;
    let cmd = spec::command(name).ok_or_else(|| unknown_command(name))?;
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    let (least, most) = cmd.arity;
    if rest.len() < least || rest.len() > most {
        return Err(usage(format!(
            "bad arguments: umcp {} {}",
            cmd.name, cmd.args
        )));
    }
    let subcommands = spec::subcommands(cmd.name);
    if !subcommands.is_empty() {
        let (word, words) = rest.split_first().map_or(("", 0), |(w, r)| (*w, r.len()));
        // A subcommand may be listed twice, with as many words after it as it takes.
        if !subcommands
            .iter()
            .any(|(name, n)| *name == word && *n == words)
        {
            return Err(usage(format!(
                "bad arguments: umcp {} {}",
                cmd.name, cmd.args
            )));
        }
    }
    check_command_options(args, cmd)?;
    if args.idle.is_some() && cmd.name != "session" {
        return Err(usage(format!(
            "--idle is for session start, not {}",
            cmd.name
        )));
    }
    if let (Some(flag), false) = (args.watch_options.first(), cmd.name == "watch") {
        return Err(usage(format!("--{flag} is for watch, not {}", cmd.name)));
    }
    if let (Some(flag), false) = (args.bridge.given(), cmd.name == "bridge") {
        return Err(usage(format!("--{flag} is for bridge, not {}", cmd.name)));
    }
    if args.check && cmd.name != "lock" {
        return Err(usage(format!("--check is for lock, not {}", cmd.name)));
    }
    if args.trust.given() && cmd.name != "trust" {
        return Err(usage(format!(
            "--list and --revoke are for trust, not {}",
            cmd.name
        )));
    }
    if let ("complete", Some(kind)) = (cmd.name, rest.first()) {
        if !["prompt", "resource"].contains(kind) {
            return Err(usage(format!(
                "complete {kind}: expected prompt or resource"
            )));
        }
    }
    Ok((cmd, rest))
}

/// The usage error for `name`, which is no command, with the closest one.
fn unknown_command(name: &str) -> Exit {
    let hint = suggest::closest(name, spec::COMMANDS.iter().map(|c| c.name));
    usage(format!(
        "unknown command {}{}",
        crate::shown::line(name),
        did_you_mean(hint.map(str::to_owned))
    ))
}

/// Refuses the options of one command given to another, and the ways of printing given
/// together.
fn check_command_options(args: &Args, cmd: &Cmd) -> Result<(), Exit> {
    args.shaping.check(args.json)?;
    let only = [
        ("task", args.task, &["call"][..]),
        ("no-check", args.no_check, &["call"][..]),
        (
            "structured",
            args.shaping.structured,
            &["call", "tasks"][..],
        ),
    ];
    for (flag, given, commands) in only {
        if given && !commands.contains(&cmd.name) {
            return Err(usage(format!(
                "--{flag} is for {}, not {}",
                commands.join(" and "),
                cmd.name
            )));
        }
    }
    Ok(())
}

/// ` (did you mean WORD?)`, or nothing without a word to offer.
fn did_you_mean(word: Option<String>) -> String {
    word.map(|w| format!(" (did you mean {w}?)"))
        .unwrap_or_default()
}

fn bad(error: lexopt::Error) -> Exit {
    usage(error.to_string())
}
