//! The configuration files of the hosts whose own format is not the `mcpServers` JSON the
//! library reads: Codex's TOML (`[mcp_servers.NAME]`), Goose's YAML (`extensions:`) and
//! Claude Code's `~/.claude.json`, whose servers are the user's and, for the working
//! directory, the project's. Each is translated into that JSON, which the library then reads
//! as it reads any other file: every entry checked, one bad entry failing alone. The other
//! hosts' files (Claude Desktop, Cursor, VS Code, Windsurf, Gemini CLI, Zed) the library
//! reads as they are.
//!
//! Strings are taken as written: a `${` in them is escaped (`$${`) so that the library's
//! variable expansion leaves it be, since neither Codex nor Goose expands variables. What
//! these hosts name by variable (Codex's `env_vars`, `bearer_token_env_var`,
//! `env_http_headers`; Goose's `env_keys`) becomes a `${NAME}` reference, expanded from
//! umcp's environment as the library expands any other.

use std::path::Path;

use umcp::ConfigFile;

use serde_json::{json, Map, Value};

/// The largest file read: far more than any list of servers (Claude Code's state file
/// keeps a history besides).
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// How a host writes its file, told by the file's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `mcpServers`, `servers` or `context_servers` JSON, which the library reads.
    Json,
    /// Claude Code's `.claude.json`.
    ClaudeCode,
    /// Codex's TOML.
    Codex,
    /// Goose's YAML.
    Goose,
}

/// The format of the file at `path`, by its name.
pub fn format(path: &Path) -> Format {
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase());
    let extension = path.extension().map(|e| e.to_string_lossy().to_lowercase());
    match (name.as_deref(), extension.as_deref()) {
        (Some(".claude.json"), _) => Format::ClaudeCode,
        (_, Some("toml")) => Format::Codex,
        (_, Some("yaml" | "yml")) => Format::Goose,
        _ => Format::Json,
    }
}

/// The servers of the file at `path`, read as its host writes it, variables from the
/// environment.
pub fn load(path: &Path) -> Result<ConfigFile, String> {
    match format(path) {
        Format::Json => ConfigFile::load(path).map_err(|e| e.to_string()),
        _ => load_with(path, &|name| std::env::var(name).ok()),
    }
}

/// [`load`], variables looked up with `lookup`.
pub fn load_with(
    path: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<ConfigFile, String> {
    let shown = path.display();
    if format(path) == Format::Json {
        let text = read(path)?;
        return ConfigFile::parse_with(&text, lookup).map_err(|e| format!("{shown}: {e}"));
    }
    let value = translated(path)?;
    ConfigFile::from_value(&value, lookup).map_err(|e| format!("{shown}: {e}"))
}

/// Whether the file at `path` may hold servers: a JSON file that names no server section
/// (an editor's settings without any) holds none, and is passed over when looking for one.
pub fn may_hold_servers(path: &Path) -> bool {
    if format(path) != Format::Json {
        return true;
    }
    let Ok(text) = read(path) else {
        // Unreadable: loading it says why.
        return true;
    };
    ["\"mcpServers\"", "\"servers\"", "\"context_servers\""]
        .iter()
        .any(|key| text.contains(key))
}

/// A file of another format as `mcpServers` JSON.
pub fn translated(path: &Path) -> Result<Value, String> {
    let text = read(path)?;
    let shown = path.display();
    match format(path) {
        Format::Codex => codex(&text).map_err(|e| format!("{shown}: {e}")),
        Format::Goose => goose(&text).map_err(|e| format!("{shown}: {e}")),
        Format::ClaudeCode => {
            let root: Value =
                serde_json::from_str(&text).map_err(|e| format!("{shown}: not JSON: {e}"))?;
            let project = std::env::current_dir().ok();
            let project = project.as_deref().map(|p| p.to_string_lossy());
            Ok(claude_code(&root, project.as_deref()))
        }
        Format::Json => serde_json::from_str(&text).map_err(|e| format!("{shown}: not JSON: {e}")),
    }
}

/// The text of the file at `path`, at most [`MAX_BYTES`].
fn read(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut text = String::new();
    file.take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if text.len() as u64 > MAX_BYTES {
        return Err(format!("{shown} is larger than {MAX_BYTES} bytes"));
    }
    Ok(text)
}

/// The deepest a YAML file nests: far deeper than Goose's configuration does.
const MAX_YAML_DEPTH: usize = 64;

/// Codex's `config.toml`: the servers of its `mcp_servers` table.
pub fn codex(text: &str) -> Result<Value, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    let root = serde_json::to_value(&table).map_err(|e| e.to_string())?;
    let servers = match root.get("mcp_servers") {
        None => Map::new(),
        Some(Value::Object(servers)) => servers.clone(),
        Some(_) => return Err("`mcp_servers` must be a table of servers".into()),
    };
    let entries = servers
        .into_iter()
        .map(|(name, entry)| (name, codex_entry(entry)))
        .collect();
    Ok(json!({ "mcpServers": Value::Object(entries) }))
}

/// One `[mcp_servers.NAME]` table as an `mcpServers` entry; anything but a table is kept,
/// for the library to refuse with its own message.
fn codex_entry(entry: Value) -> Value {
    let Value::Object(entry) = entry else {
        return entry;
    };
    let mut out = Map::new();
    for key in ["command", "url", "cwd"] {
        if let Some(value) = entry.get(key) {
            out.insert(key.into(), literal(value));
        }
    }
    // The tools it may offer, in Codex's spelling, which the library reads.
    for key in ["args", "enabled_tools", "disabled_tools"] {
        if let Some(value) = entry.get(key) {
            out.insert(key.into(), literal(value));
        }
    }
    let mut env = object_of(entry.get("env"));
    for name in strings(entry.get("env_vars")) {
        // Codex forwards these from its own environment, when they are set.
        env.entry(name.clone())
            .or_insert_with(|| json!(format!("${{{name}:-}}")));
    }
    if !env.is_empty() {
        out.insert("env".into(), Value::Object(env));
    }
    let mut headers = object_of(entry.get("http_headers"));
    if let Some(Value::Object(by_variable)) = entry.get("env_http_headers") {
        for (header, variable) in by_variable {
            if let Some(variable) = variable.as_str() {
                headers.insert(header.clone(), json!(format!("${{{variable}}}")));
            }
        }
    }
    if let Some(variable) = entry.get("bearer_token_env_var").and_then(Value::as_str) {
        headers.insert(
            "Authorization".into(),
            json!(format!("Bearer ${{{variable}}}")),
        );
    }
    if !headers.is_empty() {
        out.insert("headers".into(), Value::Object(headers));
    }
    if entry.get("enabled") == Some(&Value::Bool(false)) {
        out.insert("disabled".into(), json!(true));
    }
    let millis = |seconds: &str, millis: &str| {
        (entry.get(millis).cloned()).or_else(|| seconds_to_millis(entry.get(seconds)?))
    };
    if let Some(ms) = millis("startup_timeout_sec", "startup_timeout_ms") {
        out.insert("startupTimeoutMs".into(), ms);
    }
    if let Some(ms) = millis("tool_timeout_sec", "tool_timeout_ms") {
        out.insert("requestTimeoutMs".into(), ms);
    }
    Value::Object(out)
}

/// Goose's `config.yaml`: the extensions that are MCP servers (`stdio`, `sse`,
/// `streamable_http`); its built-in ones run inside Goose and are left out.
pub fn goose(text: &str) -> Result<Value, String> {
    let root = yaml::parse(text, MAX_YAML_DEPTH)?;
    let extensions = match root.get("extensions") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(extensions)) => extensions.clone(),
        Some(_) => return Err("`extensions` must be a mapping of extensions".into()),
    };
    let mut servers = Map::new();
    for (key, extension) in extensions {
        let kind = (extension.get("type").and_then(Value::as_str))
            .unwrap_or("stdio")
            .to_owned();
        if matches!(
            kind.as_str(),
            "builtin" | "platform" | "frontend" | "inline_python"
        ) {
            continue;
        }
        servers.insert(key, goose_entry(extension, &kind));
    }
    Ok(json!({ "mcpServers": Value::Object(servers) }))
}

/// One Goose extension as an `mcpServers` entry.
fn goose_entry(extension: Value, kind: &str) -> Value {
    let Value::Object(extension) = extension else {
        return extension;
    };
    let mut out = Map::new();
    match kind {
        "stdio" => {
            if let Some(cmd) = extension.get("cmd") {
                out.insert("command".into(), literal(cmd));
            }
            if let Some(args) = extension.get("args") {
                out.insert("args".into(), literal(args));
            }
            let mut env = object_of(extension.get("envs"));
            for name in strings(extension.get("env_keys")) {
                // Goose keeps these in its secret store; umcp takes them from its environment.
                env.entry(name.clone())
                    .or_insert_with(|| json!(format!("${{{name}}}")));
            }
            if !env.is_empty() {
                out.insert("env".into(), Value::Object(env));
            }
        }
        other => {
            let transport = if other == "sse" {
                "sse"
            } else {
                "streamable-http"
            };
            out.insert("type".into(), json!(transport));
            if let Some(uri) = extension.get("uri") {
                out.insert("url".into(), literal(uri));
            }
            let headers = object_of(extension.get("headers"));
            if !headers.is_empty() {
                out.insert("headers".into(), Value::Object(headers));
            }
        }
    }
    if extension.get("enabled") == Some(&Value::Bool(false)) {
        out.insert("disabled".into(), json!(true));
    }
    if let Some(ms) = extension.get("timeout").and_then(seconds_to_millis) {
        out.insert("requestTimeoutMs".into(), ms);
    }
    Value::Object(out)
}

/// Claude Code's `~/.claude.json`: the user's servers, and those it keeps for the project
/// at `project` (the working directory, absolute), which win over a user's of the same name
/// as they do in Claude Code.
pub fn claude_code(root: &Value, project: Option<&str>) -> Value {
    let mut servers = object_of_raw(root.get("mcpServers"));
    let local = project
        .and_then(|p| root.get("projects")?.get(p)?.get("mcpServers"))
        .and_then(Value::as_object);
    for (name, entry) in local.into_iter().flatten() {
        servers.insert(name.clone(), entry.clone());
    }
    json!({ "mcpServers": Value::Object(servers) })
}

/// `value` with every `${` in its strings escaped, so that it is kept as written.
fn literal(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("${", "$${")),
        Value::Array(items) => Value::Array(items.iter().map(literal).collect()),
        other => other.clone(),
    }
}

/// An object of strings, each kept as written; anything else is empty.
fn object_of(value: Option<&Value>) -> Map<String, Value> {
    let Some(Value::Object(map)) = value else {
        return Map::new();
    };
    map.iter().map(|(k, v)| (k.clone(), literal(v))).collect()
}

/// An object as it is (JSON, where variables are the file's own); anything else is empty.
fn object_of_raw(value: Option<&Value>) -> Map<String, Value> {
    value
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The strings of an array.
fn strings(value: Option<&Value>) -> Vec<String> {
    (value.and_then(Value::as_array).into_iter().flatten())
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// A non-negative number of seconds as whole milliseconds.
fn seconds_to_millis(value: &Value) -> Option<Value> {
    let seconds = value.as_f64().filter(|s| s.is_finite() && *s >= 0.0)?;
    Some(json!((seconds * 1000.0).round() as u64))
}

/// YAML read into JSON from the parser's events: mappings, sequences and scalars, typed as
/// YAML 1.2's core schema types them. Aliases are refused (a few of them can stand for
/// billions of nodes), and so is nesting deeper than its bound.
mod yaml {
    use serde_json::{Map, Number, Value};
    use yaml_rust2::parser::{Event, EventReceiver, Parser};
    use yaml_rust2::scanner::TScalarStyle;

    /// What is being built: the containers open, innermost last.
    struct Builder {
        stack: Vec<Open>,
        done: Option<Value>,
        error: Option<String>,
        max_depth: usize,
    }

    enum Open {
        Sequence(Vec<Value>),
        Mapping(Map<String, Value>, Option<String>),
    }

    pub fn parse(text: &str, max_depth: usize) -> Result<Value, String> {
        let mut builder = Builder {
            stack: Vec::new(),
            done: None,
            error: None,
            max_depth,
        };
        let mut parser = Parser::new_from_str(text);
        parser
            .load(&mut builder, false)
            .map_err(|e| e.to_string())?;
        if let Some(error) = builder.error {
            return Err(error);
        }
        Ok(builder.done.unwrap_or(Value::Null))
    }

    impl EventReceiver for Builder {
        fn on_event(&mut self, event: Event) {
            if self.error.is_some() {
                return;
            }
            match event {
                Event::SequenceStart(..) | Event::MappingStart(..)
                    if self.stack.len() >= self.max_depth =>
                {
                    self.error = Some(format!("nested more than {} levels", self.max_depth));
                }
                Event::SequenceStart(..) => self.stack.push(Open::Sequence(Vec::new())),
                Event::MappingStart(..) => self.stack.push(Open::Mapping(Map::new(), None)),
                Event::SequenceEnd | Event::MappingEnd => {
                    let value = match self.stack.pop() {
                        Some(Open::Sequence(items)) => Value::Array(items),
                        Some(Open::Mapping(map, _)) => Value::Object(map),
                        None => return,
                    };
                    self.add(value);
                }
                Event::Scalar(text, style, _, _) => self.add(scalar(text, style)),
                Event::Alias(_) => {
                    self.error = Some("aliases (`*name`) are not read".into());
                }
                _ => {}
            }
        }
    }

    impl Builder {
        /// Adds a finished value to the container it is in: an item, a mapping's key, or
        /// the value of the key before it.
        fn add(&mut self, value: Value) {
            match self.stack.last_mut() {
                None => self.done = Some(value),
                Some(Open::Sequence(items)) => items.push(value),
                Some(Open::Mapping(map, pending)) => match pending.take() {
                    None => {
                        *pending = Some(match value {
                            Value::String(key) => key,
                            other => other.to_string(),
                        })
                    }
                    Some(key) => {
                        map.insert(key, value);
                    }
                },
            }
        }
    }

    /// A scalar as YAML 1.2's core schema types it: quoted ones are strings; plain ones are
    /// null, booleans and numbers when they read as such.
    fn scalar(text: String, style: TScalarStyle) -> Value {
        if style != TScalarStyle::Plain {
            return Value::String(text);
        }
        match text.as_str() {
            "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
            "true" | "True" | "TRUE" => return Value::Bool(true),
            "false" | "False" | "FALSE" => return Value::Bool(false),
            _ => {}
        }
        if let Ok(int) = text.parse::<i64>() {
            return Value::Number(int.into());
        }
        let float = text.parse::<f64>().ok().filter(|f| f.is_finite());
        match float.and_then(Number::from_f64) {
            Some(number) if text.chars().any(|c| c.is_ascii_digit()) => Value::Number(number),
            _ => Value::String(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn codex_servers_become_entries() {
        let text = r#"
model = "o3"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-server", "${not-a-variable}"]
env = { "API_KEY" = "value" }
env_vars = ["LOCAL_TOKEN"]
startup_timeout_sec = 20
tool_timeout_sec = 1.5
disabled_tools = ["delete"]

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }
env_http_headers = { "X-Org-Id" = "FIGMA_ORG_ID" }
enabled = false
"#;
        let value = codex(text).unwrap();
        assert_eq!(
            value,
            json!({"mcpServers": {
                "docs": {
                    "command": "npx",
                    "args": ["-y", "mcp-server", "$${not-a-variable}"],
                    "env": {"API_KEY": "value", "LOCAL_TOKEN": "${LOCAL_TOKEN:-}"},
                    "startupTimeoutMs": 20000,
                    "requestTimeoutMs": 1500,
                    "disabled_tools": ["delete"],
                },
                "figma": {
                    "url": "https://mcp.figma.com/mcp",
                    "headers": {
                        "X-Figma-Region": "us-east-1",
                        "X-Org-Id": "${FIGMA_ORG_ID}",
                        "Authorization": "Bearer ${FIGMA_OAUTH_TOKEN}",
                    },
                    "disabled": true,
                },
            }})
        );
        assert!(codex("model = ").is_err());
        assert_eq!(codex("model = \"o3\"").unwrap(), json!({"mcpServers": {}}));
        assert!(codex("mcp_servers = 3").is_err());
    }

    #[test]
    fn goose_extensions_that_are_servers_become_entries() {
        let text = r#"
GOOSE_PROVIDER: openai
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  github:
    args:
    - -y
    - "@modelcontextprotocol/server-github"
    cmd: npx
    enabled: true
    env_keys:
    - GITHUB_TOKEN
    envs:
      LOG: "debug"
    name: github
    timeout: 300
    type: stdio
  remote:
    enabled: false
    type: streamable_http
    uri: https://mcp.example.com/mcp
    headers:
      X-Key: "k"
  events:
    type: sse
    uri: http://localhost:8000/sse
"#;
        let value = goose(text).unwrap();
        assert_eq!(
            value,
            json!({"mcpServers": {
                "github": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-github"],
                    "env": {"LOG": "debug", "GITHUB_TOKEN": "${GITHUB_TOKEN}"},
                    "requestTimeoutMs": 300000,
                },
                "remote": {
                    "type": "streamable-http",
                    "url": "https://mcp.example.com/mcp",
                    "headers": {"X-Key": "k"},
                    "disabled": true,
                },
                "events": {"type": "sse", "url": "http://localhost:8000/sse"},
            }})
        );
    }

    #[test]
    fn yaml_aliases_and_deep_nesting_are_refused() {
        let laughs = "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n";
        assert!(goose(laughs).unwrap_err().contains("aliases"));
        let deep = format!("extensions: {}{}", "[".repeat(100), "]".repeat(100));
        assert!(goose(&deep).unwrap_err().contains("nested"));
        assert!(goose("extensions: [").is_err());
        assert_eq!(goose("").unwrap(), json!({"mcpServers": {}}));
    }

    #[test]
    fn claude_code_user_servers_and_the_projects_own() {
        let root = json!({
            "mcpServers": {"a": {"command": "a"}, "b": {"command": "user-b"}},
            "projects": {"/src/app": {"mcpServers": {"b": {"command": "local-b"}}}},
        });
        let value = claude_code(&root, Some("/src/app"));
        assert_eq!(
            value["mcpServers"],
            json!({"a": {"command": "a"}, "b": {"command": "local-b"}})
        );
        let elsewhere = claude_code(&root, Some("/other"));
        assert_eq!(elsewhere["mcpServers"]["b"]["command"], "user-b");
    }
}
