//! `umcp servers`: the servers of a configuration file listed, shown, added and removed,
//! without connecting to any.
//!
//! The file is the one `--config` names, or the one a command would use (see `FILES` in the
//! help). Edits change it in place ([`edit`]): a file umcp cannot read is refused, never
//! rewritten, and the text written is read back by the library's own reader before it
//! replaces the file.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use umcp::{ConfigFile, Redacted, StdioConfig};

use crate::args::Args;
use crate::exit::{usage, Exit};
use crate::output::{pretty, say, warn};
use crate::shown;

mod edit;
mod lock;
mod secrets;

pub use edit::Document;

mod everywhere;

/// `servers list`, `servers show NAME`, `servers add NAME`, `servers remove NAME` or `servers
/// import HOST|FILE` (the words were checked against the command table).
pub fn run(args: &Args, rest: &[&str]) -> Result<(), Exit> {
    let (what, name) = match rest {
        [what] => (*what, ""),
        [what, name, ..] => (*what, *name),
        [] => return Err(usage("servers: expected list, show, add, remove or import")),
    };
    check_options(args, what)?;
    match (what, &args.config) {
        ("import", _) => return everywhere::import(args, name),
        ("list", None) => return everywhere::list(args.json),
        ("list", Some(path))
            if crate::hosts::format(Path::new(path)) != crate::hosts::Format::Json =>
        {
            return everywhere::list_file(Path::new(path), args.json);
        }
        _ => {}
    }
    let path = file(args, what == "add")?;
    if crate::hosts::format(&path) != crate::hosts::Format::Json {
        return Err(usage(format!(
            "{}: umcp edits JSON configuration files only (servers list reads this one; \
             servers import copies its servers into one)",
            path.display()
        )));
    }
    match what {
        "list" => list(&path, args.json),
        "show" => show(&path, name, args.json),
        "add" => add(&path, name, args),
        "remove" => remove(&path, name),
        other => Err(usage(format!(
            "servers {other}: expected list, show, add, remove or import"
        ))),
    }
}

/// The options given that describe a server, which only `servers add` takes.
fn server_options(args: &Args) -> Vec<&'static str> {
    let given = [
        ("stdio", args.stdio.is_some()),
        ("url", args.url.is_some()),
        ("env", !args.env_given.is_empty()),
        ("header", !args.headers.is_empty()),
        ("transport", args.transport.is_some()),
        ("protocol", args.protocol.is_some()),
        ("oauth", args.oauth.for_server()),
        (
            args.network
                .first_given()
                .map_or("proxy", |o| o.trim_start_matches('-')),
            args.network.first_given().is_some(),
        ),
    ];
    given
        .iter()
        .filter(|(_, g)| *g)
        .map(|(name, _)| *name)
        .collect()
}

/// Refuses the options `what` has no use for.
fn check_options(args: &Args, what: &str) -> Result<(), Exit> {
    if args.session.is_some() {
        return Err(usage(
            "servers works on the configuration file: --session is not for it",
        ));
    }
    // `servers import HOST --server NAME` copies that one server.
    if args.server.is_some() && what != "import" {
        return Err(usage(
            "servers takes the server's name after the subcommand, not --server",
        ));
    }
    if let (Some(option), false) = (server_options(args).first(), what == "add") {
        return Err(usage(format!("--{option} is for servers add")));
    }
    Ok(())
}

/// The configuration file to work on: `--config`, or the first of the usual places that
/// exists. Only `add` may name one that does not exist yet.
fn file(args: &Args, creating: bool) -> Result<PathBuf, Exit> {
    if let Some(path) = &args.config {
        let path = PathBuf::from(path);
        if !creating && !path.exists() {
            return Err(usage(format!("{}: no such file", path.display())));
        }
        return Ok(path);
    }
    let candidates = crate::config_files::candidates();
    match candidates.into_iter().find(|p| p.is_file()) {
        Some(found) => {
            warn(&format!("umcp: using {}", found.display()));
            Ok(found)
        }
        None => Err(usage(format!(
            "no configuration file found (see FILES in umcp --help): give --config FILE{}",
            if creating {
                " (created if missing)"
            } else {
                ""
            }
        ))),
    }
}

/// The file's text and its entries; a usage error (exit code 2) for a file that is not JSON
/// with comments or that the library does not read, as a command would give.
fn read(path: &Path) -> Result<(String, Document), Exit> {
    let text =
        edit::read_text(path).map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    let doc =
        Document::parse(&text).map_err(|e| usage(format!("{}: not JSON: {e}", path.display())))?;
    Ok((text, doc))
}

/// The library's reading of `text`, whose whole-file errors (not JSON, no server section, a
/// section given twice) refuse the file.
fn checked(path: &Path, text: &str) -> Result<ConfigFile, Exit> {
    ConfigFile::parse(text).map_err(|e| usage(format!("{}: {e}", path.display())))
}

/// Why the library cannot use entry `name`, if it cannot.
fn entry_error(config: &ConfigFile, name: &str) -> Option<String> {
    let error = config.errors.iter().find(|e| e.server == name)?;
    let field = error
        .field
        .as_deref()
        .map(|f| format!("{f}: "))
        .unwrap_or_default();
    Some(format!("{field}{}", error.message))
}

/// One line of `servers list`: name, transport and what it runs or reaches (secrets
/// hidden), and whether it is disabled or unusable.
fn list(path: &Path, json: bool) -> Result<(), Exit> {
    let (text, doc) = read(path)?;
    let config = checked(path, &text)?;
    let rows: Vec<(Value, String)> = doc
        .entries()
        .map(|entry| {
            let (kind, target) = summary(entry.value);
            let disabled = disabled(entry.value);
            let error = entry_error(&config, entry.name);
            let mut line = format!(
                "{}  {kind}  {}",
                shown::line(entry.name),
                shown::line(&target)
            );
            if disabled {
                line += "  (disabled)";
            }
            if let Some(error) = &error {
                line += &format!("  (unusable: {})", shown::line(error));
            }
            let row = json!({
                "name": entry.name, "section": entry.section, "transport": kind,
                "target": target, "disabled": disabled, "error": error,
            });
            (row, line)
        })
        .collect();
    crate::output::Output { json }.list(rows.into_iter());
    Ok(())
}

/// `servers show NAME`: the entry as written, its secrets hidden.
fn show(path: &Path, name: &str, json: bool) -> Result<(), Exit> {
    let (text, doc) = read(path)?;
    let config = checked(path, &text)?;
    let entry = doc.entry(name).ok_or_else(|| unknown(path, &doc, name))?;
    let error = entry_error(&config, name);
    let hidden = redacted(entry.value);
    if json {
        say(&pretty(&json!({
            "name": name, "file": path.display().to_string(), "section": entry.section,
            "entry": hidden, "error": error,
        })));
        return Ok(());
    }
    say(&format!(
        "{}  ({} in {})",
        shown::line(name),
        entry.section,
        shown::line(&path.display().to_string())
    ));
    say(&pretty(&hidden));
    if let Some(error) = error {
        say(&format!("unusable: {}", shown::line(&error)));
    }
    Ok(())
}

/// The usage error for a server the file does not have, naming those it has.
fn unknown(path: &Path, doc: &Document, name: &str) -> Exit {
    let names: Vec<String> = doc
        .entries()
        .map(|e| format!("`{}`", shown::line(e.name)))
        .collect();
    let listed = match names.as_slice() {
        [] => "it has none".to_owned(),
        _ => format!("its servers: {}", names.join(", ")),
    };
    usage(format!(
        "no server named `{}` in {} ({listed})",
        shown::line(name),
        path.display()
    ))
}

/// `servers add NAME`: a new entry at the end of the file's server section.
fn add(path: &Path, name: &str, args: &Args) -> Result<(), Exit> {
    if name.trim().is_empty() || name.chars().any(char::is_control) {
        return Err(usage(
            "servers add: the name must be text without control characters",
        ));
    }
    // Held until the file is replaced: a concurrent edit reads the file after this one.
    let _lock = lock::EditLock::take(path)
        .map_err(|e| Exit(1, format!("cannot edit {}: {e}", path.display())))?;
    let before = match edit::read_text(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(usage(format!("cannot read {}: {e}", path.display()))),
    };
    // A new or empty file starts as an empty object.
    let text = match before.as_deref() {
        Some(text) if !text.trim().is_empty() => text,
        _ => "{}\n",
    };
    let doc = Document::parse(text).map_err(|e| {
        usage(format!(
            "{}: not JSON: {e}; it is left as it is",
            path.display()
        ))
    })?;
    let section = doc.section();
    if section.is_some() {
        checked(path, text)?;
    }
    if doc.entry(name).is_some() {
        return Err(Exit(
            1,
            format!(
                "server `{}` is already in {} (umcp servers remove {} first)",
                shown::line(name),
                path.display(),
                shown::line(name)
            ),
        ));
    }
    let section = section.unwrap_or_else(|| default_section(path));
    let mut entry = entry(args, section != "mcpServers")?;
    let project = args.config.is_none() && crate::config_files::project().iter().any(|p| p == path);
    secrets::offer_references(path, project, name, &mut entry);
    let new = doc.with_added(name, &entry, section);
    // Read back as a command would read it: added, and nothing else broken.
    let config = ConfigFile::parse(&new)
        .ok()
        .filter(|c| c.servers.iter().any(|s| s.name == name) || entry_error(c, name).is_some());
    let Some(config) = config else {
        return Err(Exit(
            1,
            format!(
                "could not add `{name}` to {}; it is left as it is",
                path.display()
            ),
        ));
    };
    edit::write(path, before.as_deref(), &new)
        .map_err(|e| Exit(1, format!("cannot write {}: {e}", path.display())))?;
    warn(&format!(
        "umcp: added `{}` to {}",
        shown::line(name),
        path.display()
    ));
    if let Some(error) = entry_error(&config, name) {
        warn(&format!(
            "umcp: note: it cannot be used yet: {}",
            shown::line(&error)
        ));
    }
    Ok(())
}

/// `servers remove NAME`: the entry taken out, with its comma and its lines.
fn remove(path: &Path, name: &str) -> Result<(), Exit> {
    let _lock = lock::EditLock::take(path)
        .map_err(|e| Exit(1, format!("cannot edit {}: {e}", path.display())))?;
    let (text, doc) = read(path)?;
    checked(path, &text)?;
    let new = doc.without(name).ok_or_else(|| unknown(path, &doc, name))?;
    if ConfigFile::parse(&new).is_err() || Document::parse(&new).is_err() {
        return Err(Exit(
            1,
            format!(
                "could not remove `{name}` from {}; it is left as it is",
                path.display()
            ),
        ));
    }
    edit::write(path, Some(&text), &new)
        .map_err(|e| Exit(1, format!("cannot write {}: {e}", path.display())))?;
    warn(&format!(
        "umcp: removed `{}` from {}",
        shown::line(name),
        path.display()
    ));
    Ok(())
}

/// The section a file without one gets: VS Code's `servers` for its `mcp.json` files (in a
/// `.vscode` folder, or its user folder), `mcpServers` elsewhere.
fn default_section(path: &Path) -> &'static str {
    let folder = path.parent().and_then(Path::file_name);
    let vs_code = path.file_name().is_some_and(|f| f == "mcp.json")
        && folder.is_some_and(|f| f == ".vscode" || f == "User");
    match vs_code {
        true => "servers",
        false => "mcpServers",
    }
}

/// The entry `servers add` writes, from the server options; `typed`: with a `type` for stdio
/// servers too (VS Code's files want one).
fn entry(args: &Args, typed: bool) -> Result<Value, Exit> {
    let mut entry = Map::new();
    match (&args.stdio, &args.url) {
        (Some(line), None) => {
            if let Some(option) = ["header", "transport", "oauth"]
                .iter()
                .chain(crate::network::OPTIONS.iter())
                .find(|o| server_options(args).contains(o))
            {
                return Err(usage(format!("--{option} is for --url servers")));
            }
            let stdio = StdioConfig::from_command_line(line).map_err(|e| usage(e.to_string()))?;
            if typed {
                entry.insert("type".into(), json!("stdio"));
            }
            entry.insert("command".into(), json!(stdio.get_command()));
            if !stdio.get_args().is_empty() {
                entry.insert("args".into(), json!(stdio.get_args()));
            }
            // `--env NAME` (umcp's own variable) is written as a reference, so that its
            // value stays in the environment.
            let env: Map<String, Value> = args
                .env_given
                .iter()
                .map(|given| match given.split_once('=') {
                    Some((key, value)) => (key.to_owned(), json!(value)),
                    None => (given.clone(), json!(format!("${{{given}}}"))),
                })
                .collect();
            if !env.is_empty() {
                entry.insert("env".into(), Value::Object(env));
            }
        }
        (None, Some(url)) => {
            if !args.env_given.is_empty() {
                return Err(usage("--env is for --stdio servers"));
            }
            let kind = match args.transport.as_deref() {
                None | Some("auto") => "http",
                Some(other) => other,
            };
            entry.insert("type".into(), json!(kind));
            entry.insert("url".into(), json!(url));
            if !args.headers.is_empty() {
                let headers: Map<String, Value> = args
                    .headers
                    .iter()
                    .map(|(n, v)| (n.clone(), json!(v)))
                    .collect();
                entry.insert("headers".into(), Value::Object(headers));
            }
            entry.extend(args.network.entry_keys());
            let oauth = &args.oauth;
            if oauth.enabled {
                entry.insert("auth".into(), json!("oauth"));
            }
            let settings = [
                ("clientId", &oauth.client_id),
                ("clientSecret", &oauth.client_secret),
                ("scopes", &oauth.scopes),
            ];
            let settings: Map<String, Value> = settings
                .iter()
                .filter_map(|(key, value)| Some((key.to_string(), json!(value.as_ref()?))))
                .collect();
            if !settings.is_empty() {
                entry.insert("oauth".into(), Value::Object(settings));
            }
        }
        _ => {
            return Err(usage(
                "servers add needs one of --stdio 'CMD ARGS' and --url URL",
            ))
        }
    }
    if let Some(protocol) = &args.protocol {
        entry.insert("protocol".into(), json!(protocol.as_str()));
    }
    Ok(Value::Object(entry))
}

/// Whether the entry is turned off (`disabled: true` or `enabled: false`).
fn disabled(entry: &Value) -> bool {
    entry.get("disabled") == Some(&json!(true)) || entry.get("enabled") == Some(&json!(false))
}

/// The entry's transport and what it runs (the command line) or reaches (the URL), secrets
/// hidden.
fn summary(entry: &Value) -> (String, String) {
    let text = |key: &str| entry.get(key).and_then(Value::as_str);
    let kind = text("type");
    match (kind, text("command"), text("url")) {
        (Some("stdio") | None, Some(command), _) => {
            let args: Vec<String> = entry
                .get("args")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
                .collect();
            let line = std::iter::once(command.to_owned()).chain(Redacted::args(&args).words());
            ("stdio".into(), line.collect::<Vec<_>>().join(" "))
        }
        (kind, _, Some(url)) => (
            kind.unwrap_or("http").to_owned(),
            Redacted::url(url).to_string(),
        ),
        (kind, _, _) => (kind.unwrap_or("?").to_owned(), String::new()),
    }
}

/// `entry` with its secrets hidden: the values of `env` and `headers`, of keys named like a
/// secret (`clientSecret`, `apiKey`) and the secrets of URLs and arguments. A value that
/// refers to a variable (`${TOKEN}`) is shown: the secret is in the environment.
fn redacted(entry: &Value) -> Value {
    let hide = |value: &Value| match value {
        Value::String(text) if text.contains("${") => value.clone(),
        _ => json!(Redacted::MARK),
    };
    let Value::Object(members) = entry else {
        return entry.clone();
    };
    let shown = members.iter().map(|(key, value)| {
        let value = match (key.as_str(), value) {
            ("env" | "headers", Value::Object(pairs)) => {
                Value::Object(pairs.iter().map(|(k, v)| (k.clone(), hide(v))).collect())
            }
            ("url", Value::String(url)) => json!(Redacted::url(url).to_string()),
            ("args", Value::Array(items)) => {
                let args: Vec<String> = items
                    .iter()
                    .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
                    .collect();
                json!(Redacted::args(&args).words())
            }
            (key, _) if secret_key(key) => hide(value),
            (_, Value::Object(_)) => redacted(value),
            _ => value.clone(),
        };
        (key.clone(), value)
    });
    Value::Object(shown.collect())
}

/// Whether a key's value is a secret by its name.
fn secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase().replace(['_', '-'], "");
    ["secret", "token", "password", "apikey"]
        .iter()
        .any(|part| key.contains(part))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_hides_values_but_not_references() {
        let entry = json!({
            "command": "npx",
            "args": ["server", "--api-key", "abc123", "--port", "8"],
            "env": {"API_KEY": "abc123", "HOME_DIR": "${HOME}"},
            "url": "https://user:pw@example.com/mcp?key=abc",
            "headers": {"Authorization": "Bearer abc", "X-Token": "Bearer ${TOKEN}"},
            "oauth": {"clientId": "app", "clientSecret": "s3cret"},
            "protocol": "legacy",
        });
        assert_eq!(
            redacted(&entry),
            json!({
                "command": "npx",
                "args": ["server", "--api-key", "<redacted>", "--port", "8"],
                "env": {"API_KEY": "<redacted>", "HOME_DIR": "${HOME}"},
                "url": "https://user:<redacted>@example.com/mcp?key=<redacted>",
                "headers": {"Authorization": "<redacted>", "X-Token": "Bearer ${TOKEN}"},
                "oauth": {"clientId": "app", "clientSecret": "<redacted>"},
                "protocol": "legacy",
            })
        );
    }

    #[test]
    fn list_summarises_each_transport() {
        let stdio = json!({"command": "uvx", "args": ["server", "--token", "x"]});
        assert_eq!(
            summary(&stdio),
            ("stdio".into(), "uvx server --token <redacted>".into())
        );
        let http = json!({"type": "sse", "url": "https://h/sse?k=v"});
        assert_eq!(
            summary(&http),
            ("sse".into(), "https://h/sse?k=<redacted>".into())
        );
        assert!(disabled(&json!({"enabled": false})));
        assert!(!disabled(&json!({"disabled": false})));
    }

    #[test]
    fn vs_code_files_get_a_servers_section() {
        assert_eq!(default_section(Path::new("/p/.vscode/mcp.json")), "servers");
        assert_eq!(
            default_section(Path::new("/h/.config/Code/User/mcp.json")),
            "servers"
        );
        assert_eq!(default_section(Path::new("/p/.mcp.json")), "mcpServers");
        assert_eq!(default_section(Path::new("mcp.json")), "mcpServers");
    }
}
