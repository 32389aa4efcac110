//! Every host's servers: `servers list` without `--config` lists the servers of every
//! configuration file umcp finds (the project's and the user's, of each host), and `servers
//! import HOST|FILE` copies a host's servers into the file `--config` names.
//!
//! Nothing of a file is run or expanded to list or copy it: every `${VAR}` is read as
//! written, and what is shown has its secrets hidden, as `servers show` hides them.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use umcp::{ConfigFile, EnvPolicy, Redacted, ServerConfig, ServerTransport};

use super::edit::{self, Document};
use crate::args::Args;
use crate::config_files::{self, HostFile};
use crate::exit::{usage, Exit};
use crate::output::{warn, Output};
use crate::{hosts, shown};

/// The servers of the file at `path`, every variable left as its `${NAME}`.
pub fn as_written(path: &Path) -> Result<ConfigFile, String> {
    hosts::load_with(path, &|name| Some(format!("${{{name}}}")))
}

/// `servers list` without `--config`: one row a server, naming its host and file; a file
/// that cannot be read is said so on stderr, and the others listed.
pub fn list(json: bool) -> Result<(), Exit> {
    let project = config_files::project();
    let mut rows = Vec::new();
    let mut found = false;
    for file in config_files::hosts() {
        if !file.path.is_file() || !hosts::may_hold_servers(&file.path) {
            continue;
        }
        found = true;
        let config = match as_written(&file.path) {
            Ok(config) => config,
            Err(why) => {
                warn(&format!("umcp: skipping {}", shown::block(&why)));
                continue;
            }
        };
        let scope = match project.contains(&file.path) {
            true => "project",
            false => "user",
        };
        rows.extend(rows_of(&file, scope, &config));
    }
    if !found {
        return Err(Exit(
            1,
            "no configuration file found (see FILES in umcp --help)".into(),
        ));
    }
    Output { json }.table(rows.into_iter());
    Ok(())
}

/// `servers list --config FILE` for a file of a host's own format (Codex's TOML, Goose's
/// YAML), which umcp reads but does not edit.
pub fn list_file(path: &Path, json: bool) -> Result<(), Exit> {
    let config = as_written(path).map_err(|e| usage(shown::block(&e)))?;
    let host = match hosts::format(path) {
        hosts::Format::Codex => "Codex",
        hosts::Format::Goose => "Goose",
        hosts::Format::ClaudeCode => "Claude Code",
        hosts::Format::Json => "",
    };
    let file = HostFile {
        host,
        path: path.to_path_buf(),
    };
    let rows = rows_of(&file, "user", &config)
        .into_iter()
        .map(|(row, cells)| {
            // The host and file are the one given: the rows begin with the server's name.
            (row, cells[1..].to_vec())
        });
    Output { json }.table(rows);
    Ok(())
}

/// The rows of one file: its servers, then its entries that cannot be used.
fn rows_of(file: &HostFile, scope: &str, config: &ConfigFile) -> Vec<(Value, Vec<String>)> {
    let path = file.path.display().to_string();
    let mut rows = Vec::new();
    for server in &config.servers {
        let (kind, target) = summary(server);
        let note = match server.disabled {
            true => "(disabled)",
            false => "",
        };
        let row = json!({"host": file.host, "scope": scope, "file": path, "name": server.name,
                         "transport": kind, "target": target, "disabled": server.disabled,
                         "error": null});
        rows.push((
            row,
            vec![
                file.host.to_owned(),
                server.name.clone(),
                kind,
                target,
                note.into(),
            ],
        ));
    }
    for error in &config.errors {
        let row = json!({"host": file.host, "scope": scope, "file": path, "name": error.server,
                         "transport": null, "target": null, "disabled": false,
                         "error": error.to_string()});
        let note = format!("(unusable: {error})");
        rows.push((
            row,
            vec![
                file.host.to_owned(),
                error.server.clone(),
                "?".into(),
                String::new(),
                note,
            ],
        ));
    }
    rows
}

/// A server's transport and what it runs or reaches, its secrets hidden.
fn summary(server: &ServerConfig) -> (String, String) {
    match &server.transport {
        ServerTransport::Stdio(stdio) => {
            let words = std::iter::once(stdio.get_command().to_owned())
                .chain(Redacted::args(stdio.get_args()).words());
            ("stdio".into(), words.collect::<Vec<_>>().join(" "))
        }
        ServerTransport::Http(http, _) => (
            http.get_transport().as_str().to_owned(),
            Redacted::url(http.get_url()).to_string(),
        ),
        _ => ("?".into(), String::new()),
    }
}

/// `servers import FROM`: the servers of the host named `from` (its user file, else its
/// project's) or of the file `from`, copied into `--config FILE` (created when missing); a
/// name the file has already is left as it is there.
pub fn import(args: &Args, from: &str) -> Result<(), Exit> {
    let Some(target) = args.config.as_deref().map(PathBuf::from) else {
        return Err(usage(
            "servers import needs --config FILE: the file to copy the servers into",
        ));
    };
    let source = source(from)?;
    if edit_path_is(&source, &target) {
        return Err(usage(
            "servers import: the file to copy from is the --config file",
        ));
    }
    if hosts::format(&target) != hosts::Format::Json {
        return Err(usage(format!(
            "{}: umcp writes JSON configuration files only",
            target.display()
        )));
    }
    let config = as_written(&source).map_err(|e| usage(shown::block(&e)))?;
    for error in &config.errors {
        warn(&format!(
            "umcp: not importing {}",
            shown::block(&error.to_string())
        ));
    }
    let wanted = |s: &&ServerConfig| args.server.as_deref().is_none_or(|only| only == s.name);
    let servers: Vec<&ServerConfig> = config.servers.iter().filter(wanted).collect();
    if servers.is_empty() {
        return Err(Exit(
            1,
            format!("no server to import from {}", source.display()),
        ));
    }
    let before = match std::fs::read_to_string(&target) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(usage(format!("cannot read {}: {e}", target.display()))),
    };
    let text = match before.as_deref() {
        Some(text) if !text.trim().is_empty() => text.to_owned(),
        _ => "{}\n".to_owned(),
    };
    let (text, imported) = added(text, &servers, &target)?;
    if imported.is_empty() {
        return Ok(());
    }
    // Read back as a command would read it, before the file is replaced.
    ConfigFile::parse_with(&text, &|name| Some(format!("${{{name}}}"))).map_err(|e| {
        Exit(
            1,
            format!(
                "could not import into {}: {e}; it is left as it is",
                target.display()
            ),
        )
    })?;
    edit::write(&target, before.as_deref(), &text)
        .map_err(|e| Exit(1, format!("cannot write {}: {e}", target.display())))?;
    let names: Vec<String> = imported
        .iter()
        .map(|n| format!("`{}`", shown::line(n)))
        .collect();
    warn(&format!(
        "umcp: imported {} from {} into {}",
        names.join(", "),
        source.display(),
        target.display()
    ));
    Ok(())
}

/// `text` (of the file at `target`) with `servers` added, each one it has not already, and
/// the names added.
fn added(
    mut text: String,
    servers: &[&ServerConfig],
    target: &Path,
) -> Result<(String, Vec<String>), Exit> {
    let mut imported = Vec::new();
    for server in servers {
        let doc = Document::parse(&text).map_err(|e| {
            usage(format!(
                "{}: not JSON: {e}; it is left as it is",
                target.display()
            ))
        })?;
        if doc.entry(&server.name).is_some() {
            warn(&format!(
                "umcp: `{}` is in {} already: left as it is",
                shown::line(&server.name),
                target.display()
            ));
            continue;
        }
        let section = doc
            .section()
            .unwrap_or_else(|| super::default_section(target));
        text = doc.with_added(&server.name, &entry_of(server), section);
        imported.push(server.name.clone());
    }
    Ok((text, imported))
}

/// The file `from` names: a host (its user file first, else the project's) or a path.
fn source(from: &str) -> Result<PathBuf, Exit> {
    let wanted = normalized(from);
    let files = config_files::hosts();
    let mut of_host: Vec<&HostFile> = files
        .iter()
        .filter(|f| normalized(f.host) == wanted)
        .collect();
    if !of_host.is_empty() {
        // The user's own before the project's: it needs no trust.
        of_host.reverse();
        return of_host
            .into_iter()
            .find(|f| f.path.is_file())
            .map(|f| f.path.clone())
            .ok_or_else(|| Exit(1, format!("no configuration file of {from} found")));
    }
    let path = PathBuf::from(from);
    if path.is_file() {
        return Ok(path);
    }
    let mut names: Vec<String> = files.iter().map(|f| normalized(f.host)).collect();
    names.dedup();
    Err(usage(format!(
        "servers import {from}: not a file, nor a host ({})",
        names.join(", ")
    )))
}

/// A host's name as typed: lower case, letters and digits only (`claude-code`, `ClaudeCode`
/// and `Claude Code` are one).
fn normalized(host: &str) -> String {
    host.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether `a` and `b` are the same file.
fn edit_path_is(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The `mcpServers` entry of `server`, its variables as written.
fn entry_of(server: &ServerConfig) -> Value {
    let mut entry = Map::new();
    let pairs = |pairs: &[(String, String)]| -> Value {
        Value::Object(pairs.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
    };
    match &server.transport {
        ServerTransport::Stdio(stdio) => {
            entry.insert("command".into(), json!(stdio.get_command()));
            if !stdio.get_args().is_empty() {
                entry.insert("args".into(), json!(stdio.get_args()));
            }
            if !stdio.get_envs().is_empty() {
                entry.insert("env".into(), pairs(stdio.get_envs()));
            }
            if let Some(cwd) = stdio.get_cwd() {
                entry.insert("cwd".into(), json!(cwd.display().to_string()));
            }
            if stdio.get_env_policy() == EnvPolicy::InheritAll {
                entry.insert("inheritEnv".into(), json!(true));
            }
        }
        ServerTransport::Http(http, oauth) => {
            let kind = match http.get_transport().as_str() {
                "auto" => "http",
                other => other,
            };
            entry.insert("type".into(), json!(kind));
            entry.insert("url".into(), json!(http.get_url()));
            if !http.get_headers().is_empty() {
                entry.insert("headers".into(), pairs(http.get_headers()));
            }
            if oauth.is_some() {
                entry.insert("auth".into(), json!("oauth"));
            }
        }
        _ => {}
    }
    if server.disabled {
        entry.insert("disabled".into(), json!(true));
    }
    let millis = |d: std::time::Duration| json!(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    if let Some(startup) = server.startup_timeout {
        entry.insert("startupTimeoutMs".into(), millis(startup));
    }
    if let Some(request) = server.request_timeout {
        entry.insert("requestTimeoutMs".into(), millis(request));
    }
    Value::Object(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_their_variables_as_written() {
        let text = r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "fs", "${HOME}/notes"],
                      "env": {"TOKEN": "${GITHUB_TOKEN}"}, "startupTimeoutMs": 2500},
            "docs": {"httpUrl": "https://docs.example.com/mcp",
                     "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
        }}"#;
        let config = ConfigFile::parse_with(text, &|n| Some(format!("${{{n}}}"))).unwrap();
        let files = config.servers.iter().find(|s| s.name == "files").unwrap();
        assert_eq!(
            entry_of(files),
            json!({"command": "npx", "args": ["-y", "fs", "${HOME}/notes"],
                   "env": {"TOKEN": "${GITHUB_TOKEN}"}, "startupTimeoutMs": 2500})
        );
        let docs = config.servers.iter().find(|s| s.name == "docs").unwrap();
        assert_eq!(
            entry_of(docs),
            json!({"type": "streamable-http", "url": "https://docs.example.com/mcp",
                   "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}})
        );
        assert_eq!(normalized("Claude Code"), normalized("claude-code"));
    }
}
