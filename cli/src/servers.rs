//! The servers a command runs against: from `--stdio`, `--url`, `--config`, or the first
//! configuration file found in the usual places.

use std::path::{Path, PathBuf};

use umcp::lock::{Lockfile, LOCKFILE_NAME};
use umcp::{ConfigFile, HttpConfig, HttpTransportKind, ServerConfig, ServerStatus, StdioConfig};

use crate::args::Args;
use crate::exit::{usage, Exit};
use crate::output::warn;
use crate::{config_files, hosts, shown, trust};

/// The servers a command runs against, and where their lockfile is.
pub struct Servers {
    /// The servers, less the disabled ones and those `--server` leaves out.
    pub list: Vec<ServerConfig>,
    /// `mcp.lock` beside the configuration file, or in the working directory for a server of
    /// the command line; `--out` wins for `lock`.
    pub lockfile: PathBuf,
    /// Whether the configuration file says `"frozen": true`.
    pub frozen: bool,
    /// Every server the configuration file names, disabled and malformed ones too; `None`
    /// for a server of the command line.
    pub in_file: Option<Vec<String>>,
}

/// The servers named on the command line, or found in a configuration file.
pub fn servers(args: &Args) -> Result<Servers, Exit> {
    check_options(args)?;
    let given = |server: ServerConfig| Servers {
        list: vec![server],
        lockfile: PathBuf::from(LOCKFILE_NAME),
        frozen: false,
        in_file: None,
    };
    if let Some(line) = &args.stdio {
        return Ok(given(from_stdio(line, args)?));
    }
    if let Some(url) = &args.url {
        return Ok(given(from_url(url, args)?));
    }
    let (path, file) = match &args.config {
        Some(path) => (PathBuf::from(path), None),
        None => found_file()?,
    };
    let file = match file {
        Some(file) => file,
        // Named with --config: trusted as the user's word.
        None => hosts::load(&path).map_err(|e| usage(shown::block(&e)))?,
    };
    let in_file = file.servers.iter().map(|s| s.name.clone());
    let in_file = in_file.chain(file.errors.iter().map(|e| e.server.clone()));
    Ok(Servers {
        in_file: Some(in_file.collect()),
        lockfile: Lockfile::beside(&path),
        frozen: file.frozen,
        list: from_file(&path, file, args.server.as_deref())?,
    })
}

/// Refuses options that do not go together: one way of naming servers, and the options of
/// each for it alone.
fn check_options(args: &Args) -> Result<(), Exit> {
    let given = [
        args.stdio.is_some(),
        args.url.is_some(),
        args.config.is_some(),
    ];
    if given.iter().filter(|g| **g).count() > 1 {
        return Err(usage("give only one of --stdio, --url and --config"));
    }
    if args.oauth.for_server() && args.url.is_none() {
        return Err(usage(
            "the --oauth options are for --url servers (--config entries have `oauth` settings)",
        ));
    }
    if let Some(name) = args.env_unset.first() {
        return Err(crate::args::unset_env(name));
    }
    if !args.env_given.is_empty() && args.stdio.is_none() {
        return Err(usage("--env is for --stdio servers"));
    }
    if !args.headers.is_empty() && args.url.is_none() {
        return Err(usage("--header is for --url servers"));
    }
    if args.transport.is_some() && args.url.is_none() {
        return Err(usage("--transport is for --url servers"));
    }
    if let (Some(option), None) = (args.network.first_given(), &args.url) {
        return Err(usage(format!(
            "{option} is for --url servers (--config entries have `proxy`, `tls` and `unixSocket` settings)"
        )));
    }
    if args.server.is_some() && (args.stdio.is_some() || args.url.is_some()) {
        return Err(usage(
            "--server picks a server of a configuration file, not of --stdio or --url",
        ));
    }
    Ok(())
}

/// The server of `--stdio LINE`, with the `--env` variables.
fn from_stdio(line: &str, args: &Args) -> Result<ServerConfig, Exit> {
    // The library's own splitter, so a line means here what it means in code.
    let stdio = StdioConfig::from_command_line(line).map_err(|e| usage(e.to_string()))?;
    let program = program_name(stdio.get_command());
    // Named after what an interpreter or launcher runs, not after it.
    let name = named(crate::naming::launched(&program, stdio.get_args()).unwrap_or(program));
    // The line's own `NAME=value` assignments stay, and `--env` adds to them.
    let command = args
        .env
        .iter()
        .fold(stdio, |command, (k, v)| command.env(k, v));
    Ok(ServerConfig::new(name, command))
}

/// The server of `--url URL`, with its transport, headers and OAuth settings.
pub fn from_url(given: &str, args: &Args) -> Result<ServerConfig, Exit> {
    let kind = args.transport.as_deref().unwrap_or("auto");
    let kind =
        HttpTransportKind::parse(kind).ok_or_else(|| usage(format!("unknown transport {kind}")))?;
    // `${VAR}` in the URL and header values comes from the environment, as in a
    // configuration file, so a token need not be on the command line.
    let expand = |what: &str, text: &str| {
        ConfigFile::expand(text).map_err(|e| usage(format!("{what}: {e}")))
    };
    let url = expand("--url", given)?;
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    let web = matches!(scheme.as_deref(), Some("http" | "https"));
    if !web || shown::host(&url).is_none() {
        return Err(usage(format!(
            "--url {given}: not an http:// or https:// URL with a host"
        )));
    }
    let name = named(shown::host(&url).unwrap_or_default().to_owned());
    // Signed in with `umcp auth login`: its tokens are used, no flag needed.
    let signed_in = args.oauth.settings().is_ok_and(|s| s.is_none())
        && crate::sign_in::signed_in(&args.oauth, &name, &url);
    let mut http = HttpConfig::new(url).transport(kind);
    for (name, value) in &args.headers {
        http = http.header(name, expand(&format!("--header {name}"), value)?);
    }
    let http = args.network.apply(http).map_err(usage)?;
    let mut config = ServerConfig::new(name, http);
    if let Some(settings) = args.oauth.settings().map_err(usage)? {
        config = config.with_oauth(settings);
    } else if signed_in {
        config = config.with_oauth(args.oauth.settings_or_default().map_err(usage)?);
    }
    Ok(config)
}

/// The first configuration file found where umcp looks that holds servers, with them (a
/// project's read once trusted).
fn found_file() -> Result<(PathBuf, Option<ConfigFile>), Exit> {
    let candidates = config_files::candidates();
    let project = config_files::project();
    let holding = |p: &&PathBuf| p.is_file() && hosts::may_hold_servers(p);
    for found in candidates.iter().filter(holding) {
        // A file of the working directory came with the checkout: used once trusted.
        if project.contains(found) {
            let mine = config_files::user().into_iter().find(|p| p.is_file());
            let file = trust::servers_of_project(found, mine.as_deref())?;
            return Ok((found.clone(), Some(file)));
        }
        let file = hosts::load(found).map_err(|e| usage(shown::block(&e)))?;
        // A host's file that lists none (Claude Code's state file, say) is passed over.
        if file.servers.is_empty() && file.errors.is_empty() {
            continue;
        }
        warn(&format!("umcp: using the servers of {}", found.display()));
        return Ok((found.clone(), Some(file)));
    }
    let tried: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    Err(usage(format!(
        "no server given (--stdio, --url or --config), and no servers in:\n  {}",
        tried.join("\n  ")
    )))
}

/// The program a command runs, as a server's name: its file name, less a Windows `.exe`,
/// `.cmd` or `.bat` (`/usr/bin/npx` and `npx.cmd` are both `npx`).
fn program_name(command: &str) -> String {
    let file = Path::new(command)
        .file_name()
        .map_or_else(|| command.to_owned(), |f| f.to_string_lossy().into_owned());
    let lower = file.to_ascii_lowercase();
    match [".exe", ".cmd", ".bat"]
        .iter()
        .find(|ext| lower.ends_with(*ext))
    {
        Some(ext) => file[..file.len() - ext.len()].to_owned(),
        None => file,
    }
}

/// The name of the server given on the command line: `wanted` (its program or its URL's
/// host), or `server` when that is empty. There is one such server, so no name to avoid.
fn named(wanted: String) -> String {
    match wanted.trim() {
        "" => "server".to_owned(),
        name => name.to_owned(),
    }
}

/// The servers of the configuration file at `path`, less the disabled ones and those
/// `--server` leaves out.
fn from_file(path: &Path, file: ConfigFile, only: Option<&str>) -> Result<Vec<ServerConfig>, Exit> {
    let shown = path.display();
    let wanted = |name: &str| only.unwrap_or(name) == name;
    if let Some(only) = only {
        let mut names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
        names.extend(file.errors.iter().map(|e| e.server.as_str()));
        if !names.contains(&only) {
            names.sort_unstable();
            names.dedup();
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            let listed = match names.as_slice() {
                [] => "it has none".to_owned(),
                _ => format!("its servers: {}", names.join(", ")),
            };
            return Err(usage(format!(
                "no server named `{only}` in {shown} ({listed})"
            )));
        }
    }
    for error in file.errors.iter().filter(|e| wanted(&e.server)) {
        warn(&format!(
            "umcp: skipping {}",
            shown::block(&error.to_string())
        ));
    }
    let mut servers = file.servers;
    servers.retain(|s| wanted(&s.name));
    if let [server] = servers.as_slice() {
        if server.disabled {
            return Err(usage(format!(
                "server `{}` is disabled in {shown}",
                server.name
            )));
        }
    }
    servers.retain(|s| !s.disabled);
    if servers.is_empty() {
        return Err(usage(format!("no usable server in {shown}")));
    }
    Ok(servers)
}

/// Why a server is not connected, as a one-shot run puts it: the reason alone. The status's
/// own `Display` adds the manager's retry bookkeeping (`(not retrying)`, `after 2 attempts`),
/// which means nothing to a run that never retries.
pub fn why_down(status: &ServerStatus) -> String {
    match status {
        ServerStatus::Failed { error, .. } => error.to_string(),
        ServerStatus::Connecting { .. } => "still connecting".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_given_on_the_command_line_are_named_by_program_or_host() {
        assert_eq!(
            program_name("/usr/local/bin/mcp-server-time"),
            "mcp-server-time"
        );
        assert_eq!(program_name("npx.cmd"), "npx");
        assert_eq!(program_name("Server.EXE"), "Server");
        assert_eq!(program_name("server.py"), "server.py");
        assert_eq!(named("npx".into()), "npx");
        assert_eq!(named(String::new()), "server");
    }
}
