//! Reading one server entry of a configuration file into a [`ServerConfig`].

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::entry::{entry_error, kind, Entry, Trace};
use super::{ServerConfig, ServerConfigError, ServerTransport};
use crate::client::ProtocolMode;
use crate::redact::clip;
use crate::transport::http::{HttpConfig, HttpTransportKind};
use crate::transport::{EnvPolicy, StdioConfig};

/// Reads the entry `name`, noting in `trace` what of it was read.
pub(super) fn parse_server(
    name: &str,
    value: &Value,
    lookup: &dyn Fn(&str) -> Option<String>,
    trace: &Trace,
) -> Result<ServerConfig, ServerConfigError> {
    if name.trim().is_empty() {
        return Err(entry_error(name, None, "the server name is empty".into()));
    }
    let object = value.as_object().ok_or_else(|| {
        entry_error(
            name,
            None,
            format!("must be an object, not {}", kind(value)),
        )
    })?;
    let mut entry = Entry::new(name, object, lookup, trace);
    let disabled =
        entry.bool("disabled")?.unwrap_or(false) || entry.bool("enabled")? == Some(false);
    if disabled {
        entry.disable();
    }
    let transport = match entry.string("type")?.as_deref() {
        Some("stdio") => stdio(&entry)?,
        Some(other) => match HttpTransportKind::parse(other) {
            Some(kind) => http(&entry, kind)?,
            None => {
                let message = format!(
                    "unknown type `{}` (expected stdio, http, streamable-http or sse)",
                    clip(other)
                );
                return Err(entry.error("type", message));
            }
        },
        None => match (entry.has("command"), url_key(&entry)) {
            (true, None) => stdio(&entry)?,
            (false, Some((_, kind))) => http(&entry, kind)?,
            (true, Some((key, _))) => {
                let message = format!("has both `command` and `{key}`; add `type` to say which");
                return Err(entry_error(name, None, message));
            }
            (false, None) => {
                let message = "needs `command` (a stdio server) or `url` (an HTTP server)";
                return Err(entry_error(name, None, message.into()));
            }
        },
    };
    Ok(ServerConfig {
        name: name.to_owned(),
        transport,
        disabled,
        startup_timeout: entry.millis("startupTimeoutMs")?,
        request_timeout: entry.millis("requestTimeoutMs")?,
        protocol: protocol(&entry)?,
        tool_filter: super::tool_filter::parse(&entry)?,
    })
}

/// The `protocol` key: the era to speak with this server.
fn protocol(entry: &Entry<'_>) -> Result<Option<ProtocolMode>, ServerConfigError> {
    let Some(text) = entry.string("protocol")? else {
        return Ok(None);
    };
    match ProtocolMode::parse(&text) {
        Some(mode) => Ok(Some(mode)),
        None => Err(entry.error(
            "protocol",
            format!(
                "`{}` is not auto, legacy, modern or a stateless-era protocol version",
                clip(&text)
            ),
        )),
    }
}

/// The key holding an HTTP server's URL, and the transport it implies: `url`, Gemini CLI's
/// `httpUrl` (Streamable HTTP) or Windsurf's `serverUrl`; `None` when there is none.
fn url_key(entry: &Entry<'_>) -> Option<(&'static str, HttpTransportKind)> {
    [
        ("url", HttpTransportKind::Auto),
        ("httpUrl", HttpTransportKind::StreamableHttp),
        ("serverUrl", HttpTransportKind::Auto),
    ]
    .into_iter()
    .find(|(key, _)| entry.has(key))
}

fn stdio(entry: &Entry<'_>) -> Result<ServerTransport, ServerConfigError> {
    // Zed's older entries hold the program in an object: `"command": {"path", "args", "env"}`.
    let zed;
    let (entry, key) = match entry.object_at("command") {
        Some(Value::Object(command)) => {
            zed = entry.nested(command, &["command"]);
            (&zed, "path")
        }
        _ => (entry, "command"),
    };
    let command = match entry.string(key)? {
        Some(command) if !command.trim().is_empty() => command,
        Some(_) => return Err(entry.error(key, "is empty")),
        None => return Err(entry.error(key, "is missing (a stdio server needs one)")),
    };
    let env_policy = match entry.bool("inheritEnv")? {
        Some(true) => EnvPolicy::InheritAll,
        _ => EnvPolicy::AllowList,
    };
    // VS Code's `envFile` first, so that `env` wins over it. Not read for a file read as
    // written, whose strings name no path yet.
    let mut env = match entry.string("envFile")? {
        Some(path) if !entry.lenient && !super::vars::is_as_written() => {
            super::env_file::read(Path::new(&path)).map_err(|e| entry.error("envFile", e))?
        }
        _ => Vec::new(),
    };
    env.extend(entry.map("env")?);
    let env = super::env_file::last_wins(env);
    let mut config = StdioConfig::new(command)
        .args(entry.list("args")?)
        .envs(env)
        .env_policy(env_policy);
    if let Some(cwd) = entry.string("cwd")? {
        config = config.cwd(PathBuf::from(cwd));
    }
    Ok(ServerTransport::Stdio(config))
}

fn http(entry: &Entry<'_>, kind: HttpTransportKind) -> Result<ServerTransport, ServerConfigError> {
    let key = url_key(entry).map_or("url", |(key, _)| key);
    let url = match entry.string(key)? {
        Some(url) if !url.trim().is_empty() => url,
        Some(_) => return Err(entry.error(key, "is empty")),
        None => {
            return Err(entry.error(
                key,
                format!("is missing (a `{}` server needs one)", kind.as_str()),
            ))
        }
    };
    let mut config = HttpConfig::new(url).transport(kind);
    for (name, value) in entry.map("headers")? {
        config = config.header(name, value);
    }
    let config = super::network::apply(entry, config)?;
    Ok(ServerTransport::Http(config, super::oauth::parse(entry)?))
}
