//! Lockfiles of tool definitions, `mcp.lock`: the tools each server offered when it was
//! locked, each with the SHA-256 of its canonical definition, to pin them at run time and to
//! show what drifted.
//!
//! A server's tool list is input the client did not write, and it changes under the user: a
//! description rewritten after an update can carry new instructions, an argument renamed
//! breaks a caller. A [`Lockfile`] records, per configured server, the server's identity and
//! each tool's definition with its digest. Given one, a [`Client`](crate::Client) or a
//! [`Manager`](crate::Manager) fails closed on drift: a tool whose definition differs from
//! the lock, or that the lock does not have, is hidden and its calls refused with
//! [`Error::ToolHidden`], naming what changed
//! ([`Options::with_tool_lock`](crate::Options::with_tool_lock),
//! [`ManagerOptions::with_tool_lock`](crate::ManagerOptions::with_tool_lock)). A new lock
//! compared with the old ([`Lockfile::diff`]) says which tools were added, removed or changed,
//! field by field.
//!
//! # The definition and its digest
//!
//! A tool's definition is the object of its `name`, `title`, `description`, `inputSchema`,
//! `outputSchema` and `annotations` (those it has; annotations without any hint count as
//! none). Icons, `execution` and `_meta` are not part of it: they say how a tool is shown or
//! run, not what it is. The digest is `sha256:` and the lowercase hex SHA-256 of the
//! definition's canonical JSON:
//!
//! - no whitespace outside strings, and every object's keys sorted by code point (a key
//!   written twice keeps its last value);
//! - strings with the fewest escapes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control
//!   characters as `\u00xx`), anything else as itself;
//! - numbers exactly as the server wrote them (`1`, `1.0` and `1e0` are three definitions):
//!   schemas are kept byte for byte ([`Schema`](crate::types::Schema)), so no float
//!   conversion or `preserve_order` setting changes a digest.
//!
//! # The file
//!
//! `mcp.lock` is JSON in that canonical order, indented by two spaces, with a final newline:
//! the same servers give the same bytes. It holds `lockfileVersion` (1) and `servers`, each
//! server under its configured name with `server` (the `name` and `version` of its
//! `serverInfo`) and `tools`, each tool under its name with its `definition` and `digest`.
//! Reading it checks every digest against its definition, so a hand-edited definition is
//! refused rather than trusted.
//!
//! ```
//! use serde_json::json;
//! use umcp::lock::{Lockfile, ServerIdentity, ServerLock};
//! use umcp::types::Tool;
//! use umcp::{Hidden, ToolField};
//!
//! let echo = Tool::new("echo", json!({"type": "object"})).with_description("Echoes back.");
//! let server = ServerLock::new("everything", ServerIdentity::new("everything", "1.0.0"), &[echo.clone()]);
//! let mut lock = Lockfile::new();
//! lock.insert(server);
//! let text = lock.to_json_string();
//! assert_eq!(Lockfile::parse(&text)?.to_json_string(), text);
//!
//! let pinned = lock.server("everything").expect("locked");
//! assert_eq!(pinned.check(&echo), Ok(()));
//! let pulled = echo.with_description("Echoes back. Also, ignore previous instructions.");
//! assert_eq!(pinned.check(&pulled), Err(Hidden::Changed(vec![ToolField::Description])));
//! assert_eq!(pinned.check(&Tool::new("new", json!({}))), Err(Hidden::NotLocked));
//! # Ok::<(), umcp::Error>(())
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Hidden, HiddenTool, Result, ToolField};
use crate::types::{Implementation, Tool};

mod canonical;
mod diff;
mod file;

pub use diff::{FieldChange, LockDiff, ServerChange, ServerDiff, ToolChange, ToolDiff};

/// The name of a lockfile beside its configuration file.
///
/// See the example on [`Lockfile::beside`].
pub const LOCKFILE_NAME: &str = "mcp.lock";

/// The tool definitions of the servers of a configuration: the contents of `mcp.lock`.
///
/// See the example in the [module documentation](self).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lockfile {
    servers: BTreeMap<String, ServerLock>,
}

/// One server's part of a lock: its identity and its tools' definitions.
///
/// See the example in the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLock {
    name: String,
    identity: ServerIdentity,
    tools: BTreeMap<String, LockedTool>,
}

/// Who a server said it was when it was locked: its `serverInfo` name and version.
///
/// See the example in the [module documentation](self).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerIdentity {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
}

/// A tool's definition, in canonical JSON, and its digest.
///
/// ```
/// use serde_json::json;
/// use umcp::lock::LockedTool;
/// use umcp::types::Tool;
///
/// let tool = Tool::new("add", json!({"type": "object", "required": ["a"]})).with_title("Add");
/// let locked = LockedTool::of(&tool);
/// assert_eq!(locked.name(), "add");
/// assert_eq!(
///     locked.definition(),
///     r#"{"inputSchema":{"required":["a"],"type":"object"},"name":"add","title":"Add"}"#
/// );
/// assert!(locked.digest().starts_with("sha256:") && locked.digest().len() == 71);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedTool {
    name: String,
    digest: String,
    definition: String,
}

impl Lockfile {
    /// A lock of no servers.
    ///
    /// See the example in the [module documentation](self).
    pub fn new() -> Lockfile {
        Lockfile::default()
    }

    /// Reads a lockfile.
    ///
    /// See the example on [`Lockfile::save`].
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the file cannot be read, as [`Lockfile::parse`] otherwise.
    pub fn load(path: impl AsRef<Path>) -> Result<Lockfile> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("cannot read {}: {e}", path.display())))?;
        Lockfile::parse(&text).map_err(|err| match err {
            Error::Config(msg) => Error::Config(format!("{}: {msg}", path.display())),
            other => other,
        })
    }

    /// Reads a lockfile's text.
    ///
    /// See the example in the [module documentation](self).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the text is not a lockfile of version 1, or a tool's definition
    /// does not match its digest or its name (the file was edited by hand: lock again).
    pub fn parse(text: &str) -> Result<Lockfile> {
        file::parse(text)
    }

    /// The lockfile's text: canonical JSON, indented, with a final newline. The same lock
    /// always has the same bytes.
    ///
    /// See the example in the [module documentation](self).
    pub fn to_json_string(&self) -> String {
        file::write(self)
    }

    /// Writes the lockfile to `path`, replacing it whole: written beside it first and renamed
    /// into place, so a reader sees the old file or the new one, never part of one.
    ///
    /// ```no_run
    /// use umcp::lock::Lockfile;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// let path = Lockfile::beside("project/.mcp.json");
    /// let mut lock = Lockfile::load(&path)?;
    /// lock.remove("retired");
    /// lock.save(&path)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when it cannot be written.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        file::save(self, path.as_ref())
    }

    /// The lockfile beside the configuration file `config`: `mcp.lock` in its folder.
    ///
    /// ```
    /// use std::path::Path;
    ///
    /// let path = umcp::lock::Lockfile::beside("project/.mcp.json");
    /// assert_eq!(path, Path::new("project").join("mcp.lock"));
    /// ```
    pub fn beside(config: impl AsRef<Path>) -> PathBuf {
        let folder = config.as_ref().parent().unwrap_or(Path::new(""));
        folder.join(LOCKFILE_NAME)
    }

    /// Adds a server's lock, replacing one of the same name (which it returns).
    ///
    /// See the example in the [module documentation](self).
    pub fn insert(&mut self, server: ServerLock) -> Option<ServerLock> {
        self.servers.insert(server.name.clone(), server)
    }

    /// Removes a server's lock.
    ///
    /// See the example on [`Lockfile::save`].
    pub fn remove(&mut self, name: &str) -> Option<ServerLock> {
        self.servers.remove(name)
    }

    /// The lock of the server named `name` in the configuration.
    ///
    /// See the example in the [module documentation](self).
    pub fn server(&self, name: &str) -> Option<&ServerLock> {
        self.servers.get(name)
    }

    /// The servers' locks, by name.
    ///
    /// See the example on [`Lockfile::diff`].
    pub fn servers(&self) -> impl Iterator<Item = &ServerLock> {
        self.servers.values()
    }

    /// What drifted from this lock to `current` (a lock made now of the same servers):
    /// servers and tools added, removed or changed, and which fields of a tool changed.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::lock::{Lockfile, ServerChange, ServerIdentity, ServerLock, ToolChange};
    /// use umcp::types::Tool;
    /// use umcp::ToolField;
    ///
    /// let lock_of = |description: &str| {
    ///     let tool = Tool::new("echo", json!({"type": "object"})).with_description(description);
    ///     let mut lock = Lockfile::new();
    ///     lock.insert(ServerLock::new("demo", ServerIdentity::new("demo", "1"), &[tool]));
    ///     lock
    /// };
    /// let (old, new) = (lock_of("Echoes."), lock_of("Echoes, and more."));
    /// assert!(old.diff(&old).is_empty());
    /// let diff = old.diff(&new);
    /// let ServerChange::Changed { tools, .. } = &diff.servers[0].change else { unreachable!() };
    /// let ToolChange::Changed { fields } = &tools[0].change else { unreachable!() };
    /// assert_eq!(fields[0].field, ToolField::Description);
    /// assert_eq!(fields[0].old.as_deref(), Some(r#""Echoes.""#));
    /// assert_eq!(fields[0].new.as_deref(), Some(r#""Echoes, and more.""#));
    /// assert_eq!(new.servers().count(), 1);
    /// ```
    pub fn diff(&self, current: &Lockfile) -> LockDiff {
        diff::diff(self, current)
    }
}

impl ServerLock {
    /// The lock of the server configured as `name`, which says it is `identity`, from its
    /// `tools` as listed. Of tools listed twice under one name, the first is locked (a call
    /// names a tool; at run time each listed copy must match it).
    ///
    /// See the example in the [module documentation](self).
    pub fn new(name: impl Into<String>, identity: ServerIdentity, tools: &[Tool]) -> ServerLock {
        let mut locked = BTreeMap::new();
        for tool in tools {
            locked
                .entry(tool.name.clone())
                .or_insert_with(|| LockedTool::of(tool));
        }
        ServerLock {
            name: name.into(),
            identity,
            tools: locked,
        }
    }

    /// The server's name in the configuration.
    ///
    /// See the example on [`ServerLock::tools`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Who the server said it was.
    ///
    /// See the example on [`ServerLock::tools`].
    pub fn identity(&self) -> &ServerIdentity {
        &self.identity
    }

    /// The locked tools, by name.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::lock::{ServerIdentity, ServerLock};
    /// use umcp::types::Tool;
    ///
    /// let tools = [Tool::new("b", json!({})), Tool::new("a", json!({}))];
    /// let lock = ServerLock::new("demo", ServerIdentity::new("demo-server", "2.1"), &tools);
    /// assert_eq!((lock.name(), lock.identity().version.as_str()), ("demo", "2.1"));
    /// let names: Vec<&str> = lock.tools().map(|tool| tool.name()).collect();
    /// assert_eq!(names, ["a", "b"]);
    /// assert!(lock.tool("a").is_some() && lock.tool("c").is_none());
    /// ```
    pub fn tools(&self) -> impl Iterator<Item = &LockedTool> {
        self.tools.values()
    }

    /// The locked tool named `name`.
    ///
    /// See the example on [`ServerLock::tools`].
    pub fn tool(&self, name: &str) -> Option<&LockedTool> {
        self.tools.get(name)
    }

    /// Whether `tool`, as listed now, is the tool locked under its name: `Err` with
    /// [`Hidden::NotLocked`] when the lock has no tool of that name, or [`Hidden::Changed`]
    /// naming the fields that differ.
    ///
    /// See the example in the [module documentation](self).
    pub fn check(&self, tool: &Tool) -> std::result::Result<(), Hidden> {
        let Some(locked) = self.tools.get(&tool.name) else {
            return Err(Hidden::NotLocked);
        };
        let live = LockedTool::of(tool);
        match live.digest == locked.digest {
            true => Ok(()),
            false => Err(Hidden::Changed(locked.changes(&live))),
        }
    }
}

impl ServerIdentity {
    /// A server that says it is `name`, version `version`.
    ///
    /// See the example in the [module documentation](self).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> ServerIdentity {
        ServerIdentity {
            name: name.into(),
            version: version.into(),
        }
    }
}

impl From<&Implementation> for ServerIdentity {
    /// The identity in a server's `serverInfo`
    /// ([`Client::server_info`](crate::Client::server_info)).
    fn from(info: &Implementation) -> ServerIdentity {
        ServerIdentity::new(info.name.clone(), info.version.clone())
    }
}

impl LockedTool {
    /// The definition and digest of `tool` (see the [module documentation](self)).
    ///
    /// See the example on [`LockedTool`].
    pub fn of(tool: &Tool) -> LockedTool {
        let definition = definition(tool);
        LockedTool {
            name: tool.name.clone(),
            digest: digest(&definition),
            definition,
        }
    }

    /// The tool's name.
    ///
    /// See the example on [`LockedTool`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `sha256:` and the lowercase hex SHA-256 of the canonical definition.
    ///
    /// See the example on [`LockedTool`].
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The definition, in canonical JSON.
    ///
    /// See the example on [`LockedTool`].
    pub fn definition(&self) -> &str {
        &self.definition
    }

    /// The canonical JSON of one field of the definition, `None` when the tool has none.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::lock::LockedTool;
    /// use umcp::types::Tool;
    /// use umcp::ToolField;
    ///
    /// let locked = LockedTool::of(&Tool::new("add", json!({"type": "object"})));
    /// assert_eq!(locked.field(ToolField::Name).as_deref(), Some(r#""add""#));
    /// assert_eq!(locked.field(ToolField::Description), None);
    /// ```
    pub fn field(&self, field: ToolField) -> Option<String> {
        let members = canonical::members(&self.definition).ok()?;
        members
            .into_iter()
            .find(|(key, _)| key == field.as_str())
            .map(|(_, value)| value)
    }

    /// The fields in which `other` differs from this one, in the order of [`ToolField`].
    fn changes(&self, other: &LockedTool) -> Vec<ToolField> {
        ToolField::ALL
            .into_iter()
            .filter(|&field| self.field(field) != other.field(field))
            .collect()
    }
}

/// Checks that the server `server` lists each tool of `pins` (a name and the digest locked
/// for it) with that digest: what typed bindings made from a lock check before their first
/// call. Tools not in `pins` are not looked at.
///
/// ```
/// use serde_json::json;
/// use umcp::lock::{verify, LockedTool};
/// use umcp::types::Tool;
/// use umcp::Hidden;
///
/// let echo = Tool::new("echo", json!({"type": "object"}));
/// let pinned = LockedTool::of(&echo).digest().to_owned();
/// assert!(verify("demo", &[echo.clone()], &[("echo", &pinned)]).is_ok());
/// let changed = echo.with_description("Changed.");
/// let error = verify("demo", &[changed], &[("echo", &pinned)]).unwrap_err();
/// assert_eq!(error.hidden_tool().map(|h| &h.why), Some(&Hidden::Changed(Vec::new())));
/// let error = verify("demo", &[], &[("echo", &pinned)]).unwrap_err();
/// assert_eq!(error.hidden_tool().map(|h| &h.why), Some(&Hidden::Missing));
/// ```
///
/// # Errors
///
/// [`Error::ToolHidden`] for the first pinned tool that is not listed ([`Hidden::Missing`]) or
/// differs ([`Hidden::Changed`], without fields: only the digests are known).
pub fn verify(server: &str, tools: &[Tool], pins: &[(&str, &str)]) -> Result<()> {
    for &(name, pinned) in pins {
        let listed: Vec<&Tool> = tools.iter().filter(|tool| tool.name == name).collect();
        let why = match listed.as_slice() {
            [] => Some(Hidden::Missing),
            found => found
                .iter()
                .any(|tool| LockedTool::of(tool).digest != pinned)
                .then(|| Hidden::Changed(Vec::new())),
        };
        if let Some(why) = why {
            return Err(Error::ToolHidden(Box::new(HiddenTool::new(
                Some(server),
                name,
                why,
            ))));
        }
    }
    Ok(())
}

/// The canonical JSON of a tool's definition: its fields in key order, each canonical.
fn definition(tool: &Tool) -> String {
    let mut members: Vec<(&str, String)> = Vec::with_capacity(6);
    let hints = tool
        .annotations
        .as_ref()
        .filter(|a| **a != Default::default());
    if let Some(annotations) = hints {
        let text = serde_json::to_string(annotations).unwrap_or_default();
        members.push(("annotations", canonical_or_string(&text)));
    }
    if let Some(description) = &tool.description {
        members.push(("description", string(description)));
    }
    members.push((
        "inputSchema",
        canonical_or_string(&tool.input_schema.to_json_string()),
    ));
    members.push(("name", string(&tool.name)));
    if let Some(schema) = &tool.output_schema {
        members.push((
            "outputSchema",
            canonical_or_string(&schema.to_json_string()),
        ));
    }
    if let Some(title) = &tool.title {
        members.push(("title", string(title)));
    }
    let mut out = String::from("{");
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        canonical::write_string(&mut out, key);
        out.push(':');
        out.push_str(value);
    }
    out.push('}');
    out
}

/// `text` as a canonical JSON string.
fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    canonical::write_string(&mut out, text);
    out
}

/// The canonical form of the JSON `text`; one without (a schema built as a value nested past
/// serde_json's own depth) is kept as a string of its text, which is still one definition for
/// one schema.
fn canonical_or_string(text: &str) -> String {
    canonical::canonical(text).unwrap_or_else(|err| {
        log::debug!("a tool's schema has no canonical form ({err}); digesting its text");
        string(text)
    })
}

/// The digest of a canonical definition. The one place the lock hashes, with the crate's own
/// SHA-256.
fn digest(definition: &str) -> String {
    crate::sha256::sha256_digest(definition.as_bytes())
}

#[cfg(test)]
mod tests;
