//! The servers a command runs against: from `--stdio`, `--url`, `--config`, or the first
//! configuration file found in the usual places.

use std::path::{Path, PathBuf};

use umcp::{ConfigFile, HttpConfig, HttpTransportKind, ServerConfig, ServerStatus, StdioConfig};

use crate::args::{usage, Args};
use crate::output::warn;
use crate::{shown, Exit};

/// The servers named on the command line, or found in a configuration file.
pub fn servers(args: &Args) -> Result<Vec<ServerConfig>, Exit> {
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
    if !args.env.is_empty() && args.stdio.is_none() {
        return Err(usage("--env is for --stdio servers"));
    }
    if !args.headers.is_empty() && args.url.is_none() {
        return Err(usage("--header is for --url servers"));
    }
    if args.transport.is_some() && args.url.is_none() {
        return Err(usage("--transport is for --url servers"));
    }
    if args.server.is_some() && (args.stdio.is_some() || args.url.is_some()) {
        return Err(usage(
            "--server picks a server of a configuration file, not of --stdio or --url",
        ));
    }
    if let Some(line) = &args.stdio {
        // The library's own splitter, so a line means here what it means in code.
        let stdio = StdioConfig::from_command_line(line).map_err(|e| usage(e.to_string()))?;
        let name = named(program_name(stdio.get_command()));
        let command = StdioConfig::new(stdio.get_command()).args(stdio.get_args().iter().cloned());
        let command = args
            .env
            .iter()
            .fold(command, |command, (k, v)| command.env(k, v));
        return Ok(vec![ServerConfig::new(name, command)]);
    }
    if let Some(url) = &args.url {
        let kind = args.transport.as_deref().unwrap_or("auto");
        let kind = HttpTransportKind::parse(kind)
            .ok_or_else(|| usage(format!("unknown transport {kind}")))?;
        // `${VAR}` in the URL and header values comes from the environment, as in a
        // configuration file, so a token need not be on the command line.
        let expand = |what: &str, text: &str| {
            ConfigFile::expand(text).map_err(|e| usage(format!("{what}: {e}")))
        };
        let given = url;
        let url = expand("--url", url)?;
        let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        let web = matches!(scheme.as_deref(), Some("http" | "https"));
        if !web || shown::host(&url).is_none() {
            return Err(usage(format!(
                "--url {given}: not an http:// or https:// URL with a host"
            )));
        }
        let name = named(shown::host(&url).unwrap_or_default().to_owned());
        let mut http = HttpConfig::new(url).transport(kind);
        for (name, value) in &args.headers {
            http = http.header(name, expand(&format!("--header {name}"), value)?);
        }
        let mut config = ServerConfig::new(name, http);
        if let Some(settings) = args.oauth.settings().map_err(usage)? {
            config = config.with_oauth(settings);
        }
        return Ok(vec![config]);
    }
    let (path, file) = match &args.config {
        Some(path) => (PathBuf::from(path), None),
        None => {
            let candidates = config_candidates();
            let found = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
                let tried: Vec<String> =
                    candidates.iter().map(|p| p.display().to_string()).collect();
                usage(format!(
                    "no server given (--stdio, --url or --config), and no configuration file in:\n  {}",
                    tried.join("\n  ")
                ))
            })?;
            // A file of the working directory came with the checkout: used once trusted.
            if project_candidates().contains(found) {
                let mine = user_candidates().into_iter().find(|p| p.is_file());
                let file = crate::trust::servers_of_project(found, mine.as_deref())?;
                (found.clone(), Some(file))
            } else {
                warn(&format!("umcp: using the servers of {}", found.display()));
                (found.clone(), None)
            }
        }
    };
    let file = match file {
        Some(file) => file,
        // Named with --config, or the user's own: trusted as the user's word.
        None => ConfigFile::load(&path).map_err(|e| usage(shown::block(&e.to_string())))?,
    };
    from_file(&path, file, args.server.as_deref())
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

/// The configuration files looked for when none is given, in the documented order (see
/// `FILES` in the help): the project's, then the user's own.
pub fn config_candidates() -> Vec<PathBuf> {
    let mut candidates = project_candidates().to_vec();
    candidates.extend(user_candidates());
    candidates
}

/// The project's configuration files, in the working directory: used once trusted (see
/// [`trust`](crate::trust)).
pub fn project_candidates() -> [PathBuf; 2] {
    [
        PathBuf::from(".mcp.json"),
        PathBuf::from(".vscode/mcp.json"),
    ]
}

/// The user's own configuration files, under the home directory, of Claude Desktop, Cursor
/// and VS Code.
fn user_candidates() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from);
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let app_data = std::env::var_os("APPDATA").map(PathBuf::from);
    // The per-user application directory of each platform.
    let user_dir = |app: &str| -> Option<PathBuf> {
        if cfg!(target_os = "macos") {
            home.as_ref()
                .map(|h| h.join("Library/Application Support").join(app))
        } else if cfg!(windows) {
            app_data.as_ref().map(|a| a.join(app))
        } else {
            config_home.as_ref().map(|c| c.join(app))
        }
    };
    let mut candidates = Vec::new();
    candidates.extend(user_dir("Claude").map(|d| d.join("claude_desktop_config.json")));
    candidates.extend(home.as_ref().map(|h| h.join(".cursor/mcp.json")));
    candidates.extend(user_dir("Code").map(|d| d.join("User/mcp.json")));
    candidates
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
