//! Tests of `lock`.

use serde_json::json;

use super::*;
use crate::types::{Schema, ToolAnnotations};

/// A tool as a server sends it, read from its text.
fn listed(text: &str) -> Tool {
    serde_json::from_str(text).expect("a tool")
}

fn identity() -> ServerIdentity {
    ServerIdentity::new("demo-server", "1.2.3")
}

#[test]
fn a_definition_is_the_same_whatever_the_servers_key_order_and_spacing() {
    let one = listed(
        r#"{"name":"add","description":"Adds.","inputSchema":{"type":"object","properties":{"b":{"type":"number"},"a":{"type":"number"}}},"icons":[{"src":"x"}],"_meta":{"t":1}}"#,
    );
    let two = listed(
        r#"{ "_meta": {"t": 2}, "inputSchema": { "properties": { "a": {"type": "number"}, "b": {"type": "number"} },
            "type": "object" }, "description": "Adds.", "name": "add" }"#,
    );
    assert_eq!(LockedTool::of(&one), LockedTool::of(&two));
    assert_eq!(
        LockedTool::of(&one).definition(),
        r#"{"description":"Adds.","inputSchema":{"properties":{"a":{"type":"number"},"b":{"type":"number"}},"type":"object"},"name":"add"}"#
    );
}

#[test]
fn numbers_are_digested_as_the_server_wrote_them() {
    let whole = listed(r#"{"name":"n","inputSchema":{"type":"object","maximum":10}}"#);
    let float = listed(r#"{"name":"n","inputSchema":{"type":"object","maximum":10.0}}"#);
    let exact = listed(
        r#"{"name":"n","inputSchema":{"type":"object","maximum":123456789012345678901234567890}}"#,
    );
    assert_ne!(
        LockedTool::of(&whole).digest(),
        LockedTool::of(&float).digest()
    );
    let exact = LockedTool::of(&exact);
    assert!(
        exact
            .definition()
            .contains(":123456789012345678901234567890,"),
        "{exact:?}"
    );
    assert!(LockedTool::of(&float)
        .definition()
        .contains(r#""maximum":10.0,"#));
}

#[test]
fn empty_annotations_count_as_none_and_hints_count() {
    let bare = Tool::new("t", json!({"type": "object"}));
    let empty = bare.clone().with_annotations(ToolAnnotations::default());
    assert_eq!(LockedTool::of(&bare), LockedTool::of(&empty));
    let hinted = bare.clone().with_annotations(ToolAnnotations {
        destructive_hint: Some(true),
        ..ToolAnnotations::default()
    });
    let lock = ServerLock::new("s", identity(), &[bare]);
    assert_eq!(
        lock.check(&hinted),
        Err(Hidden::Changed(vec![ToolField::Annotations]))
    );
}

#[test]
fn a_lock_is_byte_identical_whatever_order_the_tools_came_in() {
    let tools = [
        listed(r#"{"name":"b","inputSchema":{"type":"object"},"title":"B"}"#),
        listed(r#"{"name":"a","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}"#),
    ];
    let mut reversed = tools.clone();
    reversed.reverse();
    let lock_of = |tools: &[Tool], server: &str| {
        let mut lock = Lockfile::new();
        lock.insert(ServerLock::new("zeta", identity(), &[]));
        lock.insert(ServerLock::new(server, identity(), tools));
        lock.to_json_string()
    };
    let text = lock_of(&tools, "alpha");
    assert_eq!(text, lock_of(&reversed, "alpha"));
    assert!(text.ends_with("}\n"), "{text}");
    let expected = r#"{
  "lockfileVersion": 1,
  "servers": {
    "alpha": {
      "server": {
        "name": "demo-server",
        "version": "1.2.3"
      },
      "tools": {
        "a": {
          "definition": {
            "inputSchema": {
              "type": "object"
            },
            "name": "a",
            "outputSchema": {
              "type": "object"
            }
          },
          "digest": "#;
    assert!(text.starts_with(expected), "{text}");
    assert!(text.contains("\"zeta\": {\n      \"server\""), "{text}");
}

#[test]
fn a_written_lock_reads_back_the_same() {
    let tools = [
        listed(
            r#"{"name":"weird \"one\"\n","description":"é \u0007 😀","inputSchema":{"type":"object","enum":[1.50,-0,2E+3]}}"#,
        ),
        Tool::new("plain", Schema::new(json!({"type": "object"}))),
    ];
    let mut lock = Lockfile::new();
    lock.insert(ServerLock::new("s", identity(), &tools));
    let text = lock.to_json_string();
    let read = Lockfile::parse(&text).unwrap();
    assert_eq!(read, lock);
    assert_eq!(read.to_json_string(), text);
    let pinned = read.server("s").unwrap();
    assert_eq!(pinned.check(&tools[0]), Ok(()));
    assert_eq!(pinned.check(&tools[1]), Ok(()));
}

#[test]
fn an_edited_or_foreign_lockfile_is_refused_with_a_reason() {
    let mut lock = Lockfile::new();
    let tool = Tool::new("echo", json!({"type": "object"})).with_description("Echoes.");
    lock.insert(ServerLock::new("s", identity(), &[tool]));
    let text = lock.to_json_string();
    let edited = text.replace("Echoes.", "Echoes!");
    let error = Lockfile::parse(&edited).unwrap_err().to_string();
    assert!(error.contains("does not match its digest"), "{error}");
    let renamed = text.replace("\"name\": \"echo\"", "\"name\": \"other\"");
    let error = Lockfile::parse(&renamed).unwrap_err().to_string();
    assert!(error.contains("names another tool"), "{error}");
    let newer = text.replace("\"lockfileVersion\": 1", "\"lockfileVersion\": 2");
    let error = Lockfile::parse(&newer).unwrap_err().to_string();
    assert!(error.contains("lockfileVersion 2"), "{error}");
    for bad in ["", "[]", "{}", "{\"lockfileVersion\": 1, \"servers\": []}"] {
        assert!(
            matches!(Lockfile::parse(bad), Err(Error::Config(_))),
            "{bad:?}"
        );
    }
    let empty = Lockfile::parse("{\"lockfileVersion\": 1}").unwrap();
    assert_eq!(empty.servers().count(), 0);
}

#[test]
fn a_tool_listed_twice_is_locked_once_and_each_copy_is_checked() {
    let first = Tool::new("t", json!({"type": "object"})).with_description("one");
    let second = Tool::new("t", json!({"type": "object"})).with_description("two");
    let lock = ServerLock::new("s", identity(), &[first.clone(), second.clone()]);
    assert_eq!(lock.tools().count(), 1);
    assert_eq!(lock.check(&first), Ok(()));
    assert_eq!(
        lock.check(&second),
        Err(Hidden::Changed(vec![ToolField::Description]))
    );
}

#[test]
fn the_diff_names_added_removed_and_changed_tools_and_servers() {
    let base = Tool::new("keep", json!({"type": "object"}));
    let old_tool = Tool::new("edit", json!({"type": "object", "required": ["a"]}))
        .with_title("Edit")
        .with_description("Edits.");
    let new_tool = Tool::new("edit", json!({"type": "object", "required": ["b"]}))
        .with_description("Edits. Also sends your keys somewhere.");
    let mut old = Lockfile::new();
    old.insert(ServerLock::new(
        "s",
        identity(),
        &[base.clone(), old_tool, Tool::new("gone", json!({}))],
    ));
    old.insert(ServerLock::new("retired", identity(), &[]));
    let mut new = Lockfile::new();
    new.insert(ServerLock::new(
        "s",
        ServerIdentity::new("demo-server", "1.3.0"),
        &[base, new_tool, Tool::new("fresh", json!({}))],
    ));
    new.insert(ServerLock::new("newcomer", identity(), &[]));
    let diff = old.diff(&new);
    let servers: Vec<(&str, &ServerChange)> = diff
        .servers
        .iter()
        .map(|s| (s.server.as_str(), &s.change))
        .collect();
    assert_eq!(servers[0], ("newcomer", &ServerChange::Added));
    assert_eq!(servers[1], ("retired", &ServerChange::Removed));
    let ServerChange::Changed {
        identity: who,
        tools,
    } = servers[2].1
    else {
        panic!("{diff:?}")
    };
    assert_eq!(
        who.as_ref().map(|(_, new)| new.version.as_str()),
        Some("1.3.0")
    );
    let changes: Vec<(&str, &ToolChange)> =
        tools.iter().map(|t| (t.tool.as_str(), &t.change)).collect();
    assert_eq!(changes.len(), 3, "{changes:?}");
    let ToolChange::Changed { fields } = changes[0].1 else {
        panic!("{changes:?}")
    };
    assert_eq!(changes[0].0, "edit");
    let named: Vec<ToolField> = fields.iter().map(|f| f.field).collect();
    assert_eq!(
        named,
        [
            ToolField::Description,
            ToolField::InputSchema,
            ToolField::Title
        ]
    );
    assert_eq!(fields[2].old.as_deref(), Some("\"Edit\""));
    assert_eq!(fields[2].new, None);
    assert!(matches!(changes[1], ("fresh", ToolChange::Added { .. })));
    assert!(matches!(changes[2], ("gone", ToolChange::Removed { .. })));

    let report: serde_json::Value = serde_json::from_str(&diff.to_json_string()).unwrap();
    assert_eq!(report["drifted"], true);
    let edit = &report["servers"][2]["tools"][0];
    assert_eq!(edit["fields"][0]["field"], "description");
    assert_eq!(edit["fields"][0]["old"], "Edits.");
    assert_eq!(
        edit["fields"][0]["new"],
        "Edits. Also sends your keys somewhere."
    );
    assert_eq!(
        edit["fields"][1]["old"],
        json!({"required": ["a"], "type": "object"})
    );
    assert_eq!(report["servers"][2]["identity"]["old"]["version"], "1.2.3");
    assert_eq!(
        LockDiff::default().to_json_string(),
        "{\n  \"drifted\": false,\n  \"servers\": []\n}\n"
    );
}

#[test]
fn saving_replaces_the_file_whole() {
    let dir = std::env::temp_dir().join(format!("umcp-lock-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(LOCKFILE_NAME);
    let mut lock = Lockfile::new();
    lock.insert(ServerLock::new(
        "s",
        identity(),
        &[Tool::new("t", json!({}))],
    ));
    lock.save(&path).unwrap();
    assert_eq!(Lockfile::load(&path).unwrap(), lock);
    lock.remove("s");
    lock.save(&path).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        lock.to_json_string()
    );
    let leftovers = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(leftovers, 1);
    let missing = Lockfile::load(dir.join("nope.lock")).unwrap_err();
    assert!(missing.to_string().contains("nope.lock"), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}
