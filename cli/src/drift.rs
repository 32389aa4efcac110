//! What drifted from a lockfile, as a person reads it: each server and tool that was added,
//! removed or changed, and for a changed tool each field's old and new value, a text as its
//! lines and a schema as indented JSON, with only the lines that differ and a little context.
//! Every server's text is escaped for the terminal.

use serde_json::Value;
use umcp::lock::{FieldChange, LockDiff, ServerChange, ServerDiff, ToolChange, ToolDiff};

use crate::output::pretty;
use crate::shown;

/// Lines of unchanged context shown around what changed in a value.
const CONTEXT: usize = 2;

/// The most changed lines shown of one side of a value, past which the rest is counted.
const MAX_CHANGED: usize = 200;

/// The diff from the lockfile `lockfile` (as the user named it), one line of output each.
pub fn text(diff: &LockDiff, lockfile: &str) -> Vec<String> {
    let mut out = Vec::new();
    for server in &diff.servers {
        server_lines(&mut out, server, lockfile);
    }
    out
}

fn server_lines(out: &mut Vec<String>, diff: &ServerDiff, lockfile: &str) {
    let name = shown::line(&diff.server);
    match &diff.change {
        ServerChange::Added => out.push(format!("server `{name}`: not in {lockfile}")),
        ServerChange::Removed => out.push(format!(
            "server `{name}`: in {lockfile}, and no longer configured"
        )),
        ServerChange::Changed { identity, tools } => {
            out.push(format!("server `{name}`: drifted from {lockfile}"));
            if let Some((old, new)) = identity {
                let who = |name: &str, version: &str| shown::line(&format!("{name} {version}"));
                out.push(format!(
                    "  serverInfo: {} -> {}",
                    who(&old.name, &old.version),
                    who(&new.name, &new.version)
                ));
            }
            for tool in tools {
                tool_lines(out, tool);
            }
        }
        _ => out.push(format!("server `{name}`: drifted from {lockfile}")),
    }
}

fn tool_lines(out: &mut Vec<String>, diff: &ToolDiff) {
    let name = shown::line(&diff.tool);
    match &diff.change {
        ToolChange::Added { definition } => {
            out.push(format!("  tool `{name}`: added"));
            value_lines(out, "    + ", definition);
        }
        ToolChange::Removed { definition } => {
            out.push(format!("  tool `{name}`: removed"));
            value_lines(out, "    - ", definition);
        }
        ToolChange::Changed { fields } => {
            out.push(format!("  tool `{name}`: changed"));
            for field in fields {
                field_lines(out, field);
            }
        }
        _ => out.push(format!("  tool `{name}`: changed")),
    }
}

/// One changed field: its name, then the lines that differ, old `-` and new `+`.
fn field_lines(out: &mut Vec<String>, change: &FieldChange) {
    let old = change.old.as_deref().map(lines_of).unwrap_or_default();
    let new = change.new.as_deref().map(lines_of).unwrap_or_default();
    let label = match (&change.old, &change.new) {
        (None, _) => format!("    {}: added", change.field),
        (_, None) => format!("    {}: removed", change.field),
        _ => format!("    {}:", change.field),
    };
    out.push(label);
    let same_start = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let same_end = old[same_start..]
        .iter()
        .rev()
        .zip(new[same_start..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let context = |lines: &[String]| {
        lines
            .iter()
            .map(|l| format!("        {l}"))
            .collect::<Vec<_>>()
    };
    out.extend(context(
        &old[same_start.saturating_sub(CONTEXT)..same_start],
    ));
    changed(out, "      - ", &old[same_start..old.len() - same_end]);
    changed(out, "      + ", &new[same_start..new.len() - same_end]);
    let end = old.len() - same_end;
    out.extend(context(&old[end..(end + CONTEXT).min(old.len())]));
}

/// The changed lines of one side, each after `mark`, at most [`MAX_CHANGED`] of them.
fn changed(out: &mut Vec<String>, mark: &str, lines: &[String]) {
    for line in lines.iter().take(MAX_CHANGED) {
        out.push(format!("{mark}{line}"));
    }
    if lines.len() > MAX_CHANGED {
        out.push(format!("{mark}… {} more lines", lines.len() - MAX_CHANGED));
    }
}

/// A whole value, each line after `mark`.
fn value_lines(out: &mut Vec<String>, mark: &str, canonical: &str) {
    changed(out, mark, &lines_of(canonical));
}

/// The lines of a field's value given as canonical JSON: a string as its own lines, anything
/// else as indented JSON; escaped either way.
fn lines_of(canonical: &str) -> Vec<String> {
    match serde_json::from_str::<Value>(canonical) {
        Ok(Value::String(text)) => text.lines().map(shown::line).collect(),
        Ok(value) => pretty(&value).lines().map(str::to_owned).collect(),
        Err(_) => vec![shown::line(canonical)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use umcp::lock::{Lockfile, ServerIdentity, ServerLock};
    use umcp::types::Tool;

    fn lock_of(tools: &[Tool], version: &str) -> Lockfile {
        let mut lock = Lockfile::new();
        let who = ServerIdentity::new("demo", version);
        lock.insert(ServerLock::new("demo", who, tools));
        lock
    }

    #[test]
    fn a_changed_description_shows_its_old_and_new_text() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}}});
        let old = Tool::new("echo", schema.clone()).with_description("Echoes.\nSafely.");
        let mut changed_schema = schema;
        changed_schema["properties"]["b"] = json!({"type": "integer"});
        let new = Tool::new("echo", changed_schema)
            .with_description("Echoes.\nAlso \u{1b}[2Jclears your screen.");
        let added = Tool::new("fresh", json!({"type": "object"}));
        let diff = lock_of(&[old], "1").diff(&lock_of(&[new, added], "2"));
        let lines = text(&diff, "mcp.lock");
        let shown = lines.join("\n");
        assert_eq!(lines[0], "server `demo`: drifted from mcp.lock");
        assert_eq!(lines[1], "  serverInfo: demo 1 -> demo 2");
        assert!(shown.contains("    description:\n        Echoes.\n      - Safely.\n      + Also \\u{1b}[2Jclears your screen."), "{shown}");
        assert!(
            shown.contains(
                "      -       \"type\": \"string\"\n      +       \"type\": \"integer\""
            ),
            "{shown}"
        );
        assert!(shown.contains("  tool `fresh`: added\n    + {"), "{shown}");
        assert!(!shown.contains('\u{1b}'));
    }
}
