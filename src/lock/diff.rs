//! What drifted between two locks: servers and tools added, removed or changed, field by field.

use std::collections::BTreeSet;

use super::canonical::{canonical, pretty, write_string};
use super::{LockedTool, Lockfile, ServerIdentity, ServerLock};
use crate::error::ToolField;

/// What drifted from a lock to a newer one, server by server; empty when nothing did.
///
/// See the example on [`Lockfile::diff`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockDiff {
    /// The servers that drifted, by name.
    pub servers: Vec<ServerDiff>,
}

/// One server that drifted.
///
/// See the example on [`Lockfile::diff`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerDiff {
    /// The server's name in the configuration.
    pub server: String,
    /// How it drifted.
    pub change: ServerChange,
}

/// How a server drifted.
///
/// See the example on [`Lockfile::diff`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerChange {
    /// It is new: the old lock does not have it.
    Added,
    /// The new lock does not have it.
    Removed,
    /// It says it is someone else, or its tools changed.
    Changed {
        /// Its identity, old and new, when that changed.
        identity: Option<(ServerIdentity, ServerIdentity)>,
        /// The tools that drifted, by name.
        tools: Vec<ToolDiff>,
    },
}

/// One tool that drifted.
///
/// See the example on [`Lockfile::diff`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolDiff {
    /// The tool's name.
    pub tool: String,
    /// How it drifted.
    pub change: ToolChange,
}

/// How a tool drifted.
///
/// See the example on [`Lockfile::diff`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChange {
    /// It is new; its definition, in canonical JSON.
    Added {
        /// The new definition.
        definition: String,
    },
    /// It is gone; its old definition, in canonical JSON.
    Removed {
        /// The old definition.
        definition: String,
    },
    /// Its definition changed, in these fields.
    Changed {
        /// The fields that changed, in the order of [`ToolField`].
        fields: Vec<FieldChange>,
    },
}

/// One field of a tool's definition, before and after.
///
/// See the example on [`Lockfile::diff`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldChange {
    /// The field.
    pub field: ToolField,
    /// Its old value in canonical JSON, `None` when the tool had none.
    pub old: Option<String>,
    /// Its new value in canonical JSON, `None` when the tool has none now.
    pub new: Option<String>,
}

impl LockDiff {
    /// Whether nothing drifted.
    ///
    /// See the example on [`Lockfile::diff`].
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The diff as JSON, for programs (CI): canonical and indented, as `mcp.lock` is. Each
    /// server is `{"server", "change": "added" | "removed" | "changed"}`, a changed one with
    /// `identity` (`{"old", "new"}`, when it changed) and `tools`; each tool is `{"tool",
    /// "change"}` with its `definition` when added or removed, or its `fields` (`{"field",
    /// "old", "new"}`, values as JSON, `null` when absent) when changed.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::lock::{Lockfile, ServerIdentity, ServerLock};
    /// use umcp::types::Tool;
    ///
    /// let mut new = Lockfile::new();
    /// let tools = [Tool::new("echo", json!({"type": "object"}))];
    /// new.insert(ServerLock::new("demo", ServerIdentity::new("demo", "1"), &tools));
    /// let report: serde_json::Value =
    ///     serde_json::from_str(&Lockfile::new().diff(&new).to_json_string()).unwrap();
    /// assert_eq!(report, json!({
    ///     "drifted": true,
    ///     "servers": [{"change": "added", "server": "demo"}],
    /// }));
    /// ```
    pub fn to_json_string(&self) -> String {
        let mut out = String::from("{\"drifted\":");
        out.push_str(if self.is_empty() { "false" } else { "true" });
        out.push_str(",\"servers\":[");
        for (i, server) in self.servers.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_server(&mut out, server);
        }
        out.push_str("]}");
        // Assembled in key order from canonical parts, so this only checks and indents.
        let text = canonical(&out).unwrap_or(out);
        let mut text = pretty(&text);
        text.push('\n');
        text
    }
}

/// What drifted from `old` to `new`.
pub(super) fn diff(old: &Lockfile, new: &Lockfile) -> LockDiff {
    let names: BTreeSet<&String> = old.servers.keys().chain(new.servers.keys()).collect();
    let servers = names
        .into_iter()
        .filter_map(|name| {
            let change = match (old.servers.get(name), new.servers.get(name)) {
                (None, Some(_)) => ServerChange::Added,
                (Some(_), None) => ServerChange::Removed,
                (Some(old), Some(new)) => server_change(old, new)?,
                (None, None) => return None,
            };
            Some(ServerDiff {
                server: name.clone(),
                change,
            })
        })
        .collect();
    LockDiff { servers }
}

/// How one server drifted, `None` when it did not.
fn server_change(old: &ServerLock, new: &ServerLock) -> Option<ServerChange> {
    let identity =
        (old.identity != new.identity).then(|| (old.identity.clone(), new.identity.clone()));
    let names: BTreeSet<&String> = old.tools.keys().chain(new.tools.keys()).collect();
    let tools: Vec<ToolDiff> = names
        .into_iter()
        .filter_map(|name| {
            let change = match (old.tools.get(name), new.tools.get(name)) {
                (None, Some(tool)) => ToolChange::Added {
                    definition: tool.definition.clone(),
                },
                (Some(tool), None) => ToolChange::Removed {
                    definition: tool.definition.clone(),
                },
                (Some(old), Some(new)) if old.digest != new.digest => ToolChange::Changed {
                    fields: field_changes(old, new),
                },
                _ => return None,
            };
            Some(ToolDiff {
                tool: name.clone(),
                change,
            })
        })
        .collect();
    (identity.is_some() || !tools.is_empty()).then_some(ServerChange::Changed { identity, tools })
}

fn field_changes(old: &LockedTool, new: &LockedTool) -> Vec<FieldChange> {
    ToolField::ALL
        .into_iter()
        .filter_map(|field| {
            let (before, after) = (old.field(field), new.field(field));
            (before != after).then_some(FieldChange {
                field,
                old: before,
                new: after,
            })
        })
        .collect()
}

fn write_server(out: &mut String, server: &ServerDiff) {
    out.push_str("{\"change\":");
    match &server.change {
        ServerChange::Added => out.push_str("\"added\""),
        ServerChange::Removed => out.push_str("\"removed\""),
        ServerChange::Changed { identity, tools } => {
            out.push_str("\"changed\"");
            if let Some((old, new)) = identity {
                out.push_str(",\"identity\":{\"new\":");
                write_identity(out, new);
                out.push_str(",\"old\":");
                write_identity(out, old);
                out.push('}');
            }
            out.push_str(",\"tools\":[");
            for (i, tool) in tools.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_tool(out, tool);
            }
            out.push(']');
        }
    }
    out.push_str(",\"server\":");
    write_string(out, &server.server);
    out.push('}');
}

fn write_identity(out: &mut String, identity: &ServerIdentity) {
    out.push_str("{\"name\":");
    write_string(out, &identity.name);
    out.push_str(",\"version\":");
    write_string(out, &identity.version);
    out.push('}');
}

fn write_tool(out: &mut String, tool: &ToolDiff) {
    out.push_str("{\"change\":");
    match &tool.change {
        ToolChange::Added { definition } | ToolChange::Removed { definition } => {
            let word = match tool.change {
                ToolChange::Added { .. } => "\"added\"",
                _ => "\"removed\"",
            };
            out.push_str(word);
            out.push_str(",\"definition\":");
            out.push_str(definition);
        }
        ToolChange::Changed { fields } => {
            out.push_str("\"changed\",\"fields\":[");
            for (i, change) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str("{\"field\":");
                write_string(out, change.field.as_str());
                out.push_str(",\"new\":");
                out.push_str(change.new.as_deref().unwrap_or("null"));
                out.push_str(",\"old\":");
                out.push_str(change.old.as_deref().unwrap_or("null"));
                out.push('}');
            }
            out.push(']');
        }
    }
    out.push_str(",\"tool\":");
    write_string(out, &tool.tool);
    out.push('}');
}
