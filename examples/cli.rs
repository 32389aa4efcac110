//! A small command-line MCP client built on [`umcp::Manager`]: list and call the tools, resources
//! and prompts of one server or of every server in a configuration file.
//!
//! ```text
//! cargo run --example cli -- --stdio 'target/debug/examples/demo --server' tools
//! cargo run --example cli -- --stdio 'target/debug/examples/demo --server' call add '{"a": 2, "b": 3}'
//! cargo run --example cli -- --url http://localhost:3000/mcp --header 'Authorization: Bearer x' tools
//! cargo run --example cli -- --config ~/.cursor/mcp.json --json tools
//! cargo run --example cli -- --url https://mcp.example.com/mcp --oauth tools
//! ```
//!
//! OAuth (feature `oauth`): `--oauth` authorizes a `--url` server, optionally with a
//! pre-registered client (`--oauth-client-id`, `--oauth-client-secret`; a secret on the
//! command line is visible to other local users, so prefer a `--config` entry with
//! `${VAR}`) and scopes (`--oauth-scopes 'a b'`). `--config` entries use their own `oauth`
//! settings. When a server needs the user, the authorization URL is printed to stderr
//! ("Open this page to authorize: …") and the redirect is awaited on 127.0.0.1 for up to 5
//! minutes. Tokens are kept in `--token-store FILE`, by default in the per-user file of
//! `ManagerOptions::default_token_file`, so later runs need no browser.
//!
//! Exit codes: 0 ok, 1 other errors, 2 usage error, 3 connection or authorization failure,
//! 4 the tool reported an error (`isError`).

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Value};
use umcp::types::{ContentBlock, EmbeddedResource};
use umcp::{ConfigFile, HttpKind, Manager, ManagerOptions, Options, ProtocolMode, ServerConfig};

#[path = "cli/oauth.rs"]
mod oauth;
#[path = "cli/output.rs"]
mod output;

use output::{first_line, pretty, Output};

const USAGE: &str = "usage: cli SERVER [--json] [--timeout SECS] [--token-store FILE]
           [--protocol auto|legacy|modern] COMMAND
SERVER:  --stdio 'CMD ARGS…'
         --url URL [--transport auto|streamable-http|sse] [--header 'Name: value']…
               [--oauth [--oauth-client-id ID] [--oauth-client-secret SECRET]
                        [--oauth-scopes 'SCOPE…']]
         --config FILE [--server NAME]
COMMAND: tools | resources | prompts | call TOOL [JSON] | read URI | prompt NAME [JSON]";

/// How the program ends: the message for stderr and the exit code.
struct Exit(u8, String);

fn usage(message: impl Into<String>) -> Exit {
    Exit(2, format!("{}\n{USAGE}", message.into()))
}

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Exit(0, _)) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(Exit(code, message)) => {
            if !message.is_empty() {
                eprintln!("cli: {message}");
            }
            ExitCode::from(code)
        }
    }
}

/// The parsed command line.
#[derive(Default)]
struct Args {
    stdio: Option<String>,
    url: Option<String>,
    transport: Option<String>,
    headers: Vec<String>,
    config: Option<String>,
    server: Option<String>,
    json: bool,
    timeout: Option<String>,
    protocol: Option<String>,
    oauth: oauth::Flags,
    command: Vec<String>,
}

fn parse_args(raw: Vec<String>) -> Result<Args, Exit> {
    let mut args = Args::default();
    let mut it = raw.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .ok_or_else(|| usage(format!("{flag} needs a value")))
        };
        match arg.as_str() {
            "--stdio" => args.stdio = Some(value("--stdio")?),
            "--url" => args.url = Some(value("--url")?),
            "--transport" => args.transport = Some(value("--transport")?),
            "--header" => args.headers.push(value("--header")?),
            "--config" => args.config = Some(value("--config")?),
            "--server" => args.server = Some(value("--server")?),
            "--timeout" => args.timeout = Some(value("--timeout")?),
            "--protocol" => args.protocol = Some(value("--protocol")?),
            "--oauth" => args.oauth.enabled = true,
            "--oauth-client-id" => args.oauth.client_id = Some(value("--oauth-client-id")?),
            "--oauth-client-secret" => {
                args.oauth.client_secret = Some(value("--oauth-client-secret")?)
            }
            "--oauth-scopes" => args.oauth.scopes = Some(value("--oauth-scopes")?),
            "--token-store" => args.oauth.token_store = Some(value("--token-store")?),
            "--json" => args.json = true,
            "-h" | "--help" => return Err(Exit(0, String::new())),
            flag if flag.starts_with("--") => return Err(usage(format!("unknown option {flag}"))),
            _ => args.command.push(arg),
        }
    }
    Ok(args)
}

fn run(raw: Vec<String>) -> Result<(), Exit> {
    let args = parse_args(raw)?;
    let timeout = match &args.timeout {
        Some(secs) => secs
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| usage(format!("--timeout {secs}: not a number of seconds")))?,
        None => Duration::from_secs(30),
    };
    // The protocol era: `auto` (the default) probes each server, `legacy` and `modern` skip
    // the probe.
    let protocol = match &args.protocol {
        Some(mode) => ProtocolMode::parse(mode)
            .ok_or_else(|| usage(format!("--protocol {mode}: not auto, legacy or modern")))?,
        None => ProtocolMode::Auto,
    };
    let servers = servers(&args)?;
    let single = servers.len() == 1;
    let (command, rest) = args
        .command
        .split_first()
        .ok_or_else(|| usage("no command"))?;
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    // Check the command before starting anything.
    match (command.as_str(), rest.as_slice()) {
        ("tools" | "resources" | "prompts", []) => {}
        ("call" | "prompt", [_] | [_, _]) => {}
        ("read", [_]) if single => {}
        ("read", [_]) => return Err(usage("read needs one server: add --server NAME")),
        _ => return Err(usage(format!("bad command: {}", args.command.join(" ")))),
    }
    let options = ManagerOptions::default()
        .without_cache()
        .with_reconnect_attempts(0)
        .with_startup_timeout(timeout)
        .with_client_options(
            Options::default()
                .with_request_timeout(timeout)
                .with_protocol_mode(protocol),
        );
    let options = oauth::configure(options, &args.oauth).map_err(usage)?;
    // The JSON arguments of `call` and `prompt`, checked before anything starts.
    let arguments = json_arg(rest.get(1).copied())?;
    // A user in a browser gets the authorization flow's own time on top.
    let mut wait = timeout + Duration::from_secs(5);
    if servers.iter().any(|s| s.oauth().is_some()) {
        wait += oauth::USER_WAIT;
    }
    let manager = Manager::start(servers, options);
    manager.wait_ready(wait);
    let mut all_connected = true;
    for (name, status) in manager.statuses() {
        if !status.is_connected() {
            all_connected = false;
            eprintln!("cli: server `{name}`: {status}");
        }
    }
    if !manager.statuses().iter().any(|(_, s)| s.is_connected()) {
        return Err(Exit(3, String::new()));
    }
    let target = Target {
        manager: &manager,
        single: single.then(|| manager.server_names().remove(0)),
        all_connected,
        out: Output { json: args.json },
    };
    target.execute(command, &rest, arguments)
}

/// The servers a command runs against.
struct Target<'a> {
    manager: &'a Manager,
    /// The server's name when there is only one: names are then used as the server gives them.
    single: Option<String>,
    all_connected: bool,
    out: Output,
}

impl Target<'_> {
    fn execute(&self, command: &str, rest: &[&str], arguments: Value) -> Result<(), Exit> {
        let (manager, out, single) = (self.manager, &self.out, self.single.is_some());
        match (command, rest) {
            ("tools", _) => out.list(manager.tools().into_iter().map(|e| {
                let name = if single { e.tool.name.clone() } else { e.name };
                let line = format!("{name}  {}", first_line(e.tool.description.as_deref()));
                (
                    json!({"name": name, "server": e.server, "tool": e.tool}),
                    line,
                )
            })),
            ("resources", _) => {
                let (resources, errors) = manager.list_resources();
                errors.iter().for_each(|e| eprintln!("cli: {e}"));
                out.list(resources.iter().map(|e| {
                    let r = &e.resource;
                    let line =
                        format!("{}  {}", r.uri, r.description.as_deref().unwrap_or(&r.name));
                    (json!({"server": e.server, "resource": r}), line)
                }));
            }
            ("prompts", _) => {
                let (prompts, errors) = manager.list_prompts();
                errors.iter().for_each(|e| eprintln!("cli: {e}"));
                out.list(prompts.iter().map(|e| {
                    let name = if single { &e.prompt.name } else { &e.name };
                    let line = format!("{name}  {}", first_line(e.prompt.description.as_deref()));
                    (
                        json!({"name": name, "server": e.server, "prompt": e.prompt}),
                        line,
                    )
                }));
            }
            ("call", [tool, ..]) => {
                let result = match &self.single {
                    Some(server) => manager
                        .client(server)
                        .and_then(|c| c.call_tool(tool, arguments)),
                    None => manager.call_tool(tool, arguments),
                };
                let result = result.map_err(|e| self.failed(e))?;
                out.content(&result, &result.content);
                if result.content.is_empty() && !out.json {
                    if let Some(structured) = &result.structured_content {
                        println!("{}", pretty(structured));
                    }
                }
                if result.is_error() {
                    return Err(Exit(4, String::new()));
                }
            }
            ("read", [uri]) => {
                let server = self.single.as_deref().unwrap_or_default();
                let result = manager
                    .read_resource(server, uri)
                    .map_err(|e| self.failed(e))?;
                let blocks: Vec<ContentBlock> = result
                    .contents
                    .iter()
                    .map(|c| ContentBlock::Resource(EmbeddedResource::new(c.clone())))
                    .collect();
                out.content(&result, &blocks);
            }
            ("prompt", [name, ..]) => {
                let result = match &self.single {
                    Some(server) => manager
                        .client(server)
                        .and_then(|c| c.get_prompt(name, arguments)),
                    None => manager.get_prompt(name, arguments),
                };
                let result = result.map_err(|e| self.failed(e))?;
                if let (Some(description), false) = (&result.description, out.json) {
                    println!("# {description}");
                }
                let blocks: Vec<ContentBlock> =
                    result.messages.iter().map(|m| m.content.clone()).collect();
                out.content(&result, &blocks);
            }
            _ => return Err(usage("bad command")),
        }
        Ok(())
    }

    /// An unknown name may belong to a server that did not connect: that is exit code 3.
    fn failed(&self, error: umcp::Error) -> Exit {
        match error {
            umcp::Error::Config(_) if !self.all_connected => Exit(3, error.to_string()),
            other => Exit(1, other.to_string()),
        }
    }
}

/// The servers named on the command line.
fn servers(args: &Args) -> Result<Vec<ServerConfig>, Exit> {
    let given = [
        args.stdio.is_some(),
        args.url.is_some(),
        args.config.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(usage("give exactly one of --stdio, --url and --config"));
    }
    if args.oauth.for_server() && args.url.is_none() {
        return Err(usage(
            "the --oauth options are for --url servers (--config entries have `oauth` settings)",
        ));
    }
    if let Some(line) = &args.stdio {
        let words = split_words(line).map_err(usage)?;
        let (command, rest) = words
            .split_first()
            .ok_or_else(|| usage("--stdio needs a command"))?;
        return Ok(vec![
            ServerConfig::stdio("server", command.clone()).with_args(rest.iter().cloned())
        ]);
    }
    if let Some(url) = &args.url {
        let kind = args.transport.as_deref().unwrap_or("auto");
        let kind =
            HttpKind::parse(kind).ok_or_else(|| usage(format!("unknown transport {kind}")))?;
        let mut config = ServerConfig::http("server", url.clone()).with_http_kind(kind);
        for header in &args.headers {
            let (name, value) = header
                .split_once(':')
                .ok_or_else(|| usage(format!("header without a colon: {header}")))?;
            config = config.with_header(name.trim(), value.trim());
        }
        if let Some(settings) = args.oauth.settings() {
            config = config.with_oauth(settings);
        }
        return Ok(vec![config]);
    }
    let path = args.config.as_deref().unwrap_or_default();
    let file = ConfigFile::load(path.as_ref()).map_err(|e| usage(e.to_string()))?;
    let wanted = |name: &str| args.server.as_deref().unwrap_or(name) == name;
    for error in file.errors.iter().filter(|e| wanted(&e.server)) {
        eprintln!("cli: skipping {error}");
    }
    let mut servers = file.servers;
    servers.retain(|s| wanted(&s.name));
    if let [server] = servers.as_slice() {
        if server.disabled {
            return Err(usage(format!(
                "server `{}` is disabled in {path}",
                server.name
            )));
        }
    }
    servers.retain(|s| !s.disabled);
    if servers.is_empty() {
        return Err(usage(format!("no usable server in {path}")));
    }
    Ok(servers)
}

/// Splits a command line on whitespace; single and double quotes group words, and a
/// backslash outside single quotes takes the next character as is.
fn split_words(line: &str) -> Result<Vec<String>, String> {
    let (mut words, mut word, mut in_word) = (Vec::new(), String::new(), false);
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => word.push(c),
            (_, '\\') => word.push(chars.next().ok_or("a trailing backslash")?),
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, c) if c.is_whitespace() => {
                if std::mem::take(&mut in_word) {
                    words.push(std::mem::take(&mut word));
                }
                continue;
            }
            (None, c) => word.push(c),
        }
        in_word = true;
    }
    if quote.is_some() {
        return Err(format!("unterminated quote in {line}"));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

fn json_arg(text: Option<&str>) -> Result<Value, Exit> {
    let Some(text) = text else {
        return Ok(Value::Null);
    };
    match serde_json::from_str::<Value>(text) {
        Ok(value @ (Value::Object(_) | Value::Null)) => Ok(value),
        Ok(_) => Err(usage("the arguments must be a JSON object")),
        Err(e) => Err(usage(format!("the arguments are not JSON: {e}"))),
    }
}
