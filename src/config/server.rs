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
        None => match (entry.has("command"), entry.has("url")) {
            (true, false) => stdio(&entry)?,
            (false, true) => http(&entry, HttpTransportKind::Auto)?,
            (true, true) => {
                let message = "has both `command` and `url`; add `type` to say which";
                return Err(entry_error(name, None, message.into()));
            }
            (false, false) => {
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

fn stdio(entry: &Entry<'_>) -> Result<ServerTransport, ServerConfigError> {
    let command = match entry.string("command")? {
        Some(command) if !command.trim().is_empty() => command,
        Some(_) => return Err(entry.error("command", "is empty")),
        None => return Err(entry.error("command", "is missing (a stdio server needs one)")),
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
    let url = match entry.string("url")? {
        Some(url) if !url.trim().is_empty() => url,
        Some(_) => return Err(entry.error("url", "is empty")),
        None => {
            return Err(entry.error(
                "url",
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
