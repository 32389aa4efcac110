//! Reading `mcp.lock`: each server's identity and its tools' definitions and digests.

use serde_json::{Map, Value};

use crate::Error;

/// The lockfile format this crate reads.
const VERSION: u64 = 1;

/// One server of the lock.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    /// Its name in the configuration (and the lock).
    pub(crate) name: String,
    /// Its `serverInfo` name and version when it was locked.
    pub(crate) identity: (String, String),
    /// Its tools, by name.
    pub(crate) tools: Vec<Tool>,
}

/// One locked tool.
#[derive(Debug, Clone)]
pub(crate) struct Tool {
    pub(crate) name: String,
    pub(crate) digest: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
}

/// The servers of the lockfile text `text`, by name.
pub(crate) fn parse(text: &str) -> Result<Vec<Server>, Error> {
    let root: Value =
        serde_json::from_str(text).map_err(|e| Error::Lock(format!("not JSON: {e}")))?;
    match root.get("lockfileVersion").and_then(Value::as_u64) {
        Some(VERSION) => {}
        Some(other) => {
            return Err(Error::Lock(format!(
                "lockfileVersion {other} is not one this umcp-codegen reads ({VERSION})"
            )))
        }
        None => return Err(Error::Lock("no lockfileVersion: not a lockfile".into())),
    }
    let empty = Map::new();
    let servers = match root.get("servers") {
        None => &empty,
        Some(Value::Object(servers)) => servers,
        Some(_) => return Err(Error::Lock("`servers` is not an object".into())),
    };
    let mut out = Vec::with_capacity(servers.len());
    for (name, server) in servers {
        out.push(read_server(name, server)?);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn read_server(name: &str, server: &Value) -> Result<Server, Error> {
    let wrong = |what: &str| Error::Lock(format!("server `{name}`: {what}"));
    let text = |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or("").to_owned();
    let identity = (
        text(server.pointer("/server/name")),
        text(server.pointer("/server/version")),
    );
    let empty = Map::new();
    let tools = match server.get("tools") {
        None => &empty,
        Some(Value::Object(tools)) => tools,
        Some(_) => return Err(wrong("`tools` is not an object")),
    };
    let mut out = Vec::with_capacity(tools.len());
    for (tool, entry) in tools {
        let wrong = |what: &str| wrong(&format!("tool `{tool}`: {what}"));
        let digest = entry
            .get("digest")
            .and_then(Value::as_str)
            .filter(|d| d.starts_with("sha256:"))
            .ok_or_else(|| wrong("no sha256 digest"))?;
        let definition = entry
            .get("definition")
            .and_then(Value::as_object)
            .ok_or_else(|| wrong("no definition"))?;
        if definition.get("name").and_then(Value::as_str) != Some(tool) {
            return Err(wrong("the definition names another tool"));
        }
        let string = |key: &str| {
            definition
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        out.push(Tool {
            name: tool.clone(),
            digest: digest.to_owned(),
            title: string("title"),
            description: string("description"),
            input_schema: definition
                .get("inputSchema")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object"})),
            output_schema: definition.get("outputSchema").cloned(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Server {
        name: name.to_owned(),
        identity,
        tools: out,
    })
}
