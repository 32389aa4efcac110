//! `umcp servers list|show|add|remove`: a configuration file edited in place, nothing started.

use std::path::{Path, PathBuf};
use std::process::Output;

use umcp_test_support::installed::{cli, empty_home, fixtures_stdio, stderr, stdout};

/// A file in the test's own directory, holding `text`.
fn file(test: &str, name: &str, text: &str) -> PathBuf {
    let dir = empty_home().join(format!("catalog-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `umcp --config PATH ARGS`, which must end with `code`.
fn servers(path: &Path, args: &[&str], code: i32) -> Output {
    let config = path.to_str().unwrap();
    crate::fake::ended(cli(&[&["--config", config][..], args].concat()), args, code)
}

const JSONC: &str = r#"{
    // The servers of this project.
    "mcpServers": {
        "files": {
            "command": "npx", // pinned below
            "args": ["-y", "@modelcontextprotocol/server-filesystem@1.0", "."],
        },
        /* A remote one. */
        "search": {"type": "http", "url": "https://mcp.example.com/mcp?key=k3y",
                   "headers": {"Authorization": "Bearer s3cret"}}
    },
    "editor": {"tabs": 4}
}
"#;

#[test]
fn add_list_and_remove_leave_the_rest_of_the_file_as_it_was() {
    let path = file("roundtrip", "mcp.json", JSONC);
    servers(&path, &["servers", "add", "x", "--stdio", "echo hi"], 0);
    let added = std::fs::read_to_string(&path).unwrap();
    // Indented as the entries before it, after a comma given to the last of them.
    let entry = "\"Bearer s3cret\"}},\n        \"x\": {\n            \"command\": \"echo\",";
    assert!(added.contains(entry), "{added}");
    // Everything before the new entry is as it was, comments included.
    let before_end = JSONC.find("}}\n    },").unwrap() + 2;
    assert_eq!(&added[..before_end], &JSONC[..before_end]);
    let list = stdout(&servers(&path, &["servers", "list"], 0));
    let names: Vec<&str> = list
        .lines()
        .map(|l| l.split("  ").next().unwrap())
        .collect();
    assert_eq!(names, ["files", "search", "x"], "{list}");
    assert!(list.contains("x  stdio  echo hi"), "{list}");
    servers(&path, &["servers", "remove", "x"], 0);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), JSONC);
    servers(&path, &["servers", "remove", "files"], 0);
    let left = std::fs::read_to_string(&path).unwrap();
    assert!(
        left.contains("// The servers of this project.") && left.contains("/* A remote one. */")
    );
    assert!(!left.contains("files") && left.contains("\"search\": {\"type\": \"http\""));
}

#[test]
fn a_file_umcp_cannot_read_is_refused_and_left_untouched() {
    for (name, text) in [
        (
            "broken.json",
            "{\"mcpServers\": {\"a\": {\"command\": \"x\"},",
        ),
        ("list.json", "[\"not\", \"an object\"]"),
        ("twice.json", "{\"mcpServers\": {}, \"mcpServers\": {}}"),
    ] {
        let path = file("malformed", name, text);
        let out = servers(&path, &["servers", "add", "x", "--stdio", "echo hi"], 2);
        assert!(
            stderr(&out).contains(path.to_str().unwrap()),
            "{}",
            stderr(&out)
        );
        servers(&path, &["servers", "remove", "a"], 2);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{name}");
        let dir = path.parent().unwrap();
        assert_eq!(
            std::fs::read_dir(dir).unwrap().count(),
            1,
            "no file left beside it"
        );
    }
}

#[test]
fn show_hides_secrets_and_add_refuses_a_name_taken() {
    let path = file("show", ".mcp.json", JSONC);
    let shown = stdout(&servers(&path, &["servers", "show", "search"], 0));
    assert!(shown.starts_with("search  (mcpServers in "), "{shown}");
    assert!(
        shown.contains("\"url\": \"https://mcp.example.com/mcp?key=<redacted>\""),
        "{shown}"
    );
    assert!(
        shown.contains("\"Authorization\": \"<redacted>\""),
        "{shown}"
    );
    assert!(
        !shown.contains("s3cret") && !shown.contains("k3y"),
        "{shown}"
    );
    let json = servers(&path, &["--json", "servers", "show", "files"], 0);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["entry"]["command"], "npx");
    assert_eq!(value["section"], "mcpServers");
    let taken = servers(
        &path,
        &["servers", "add", "files", "--url", "https://x/mcp"],
        1,
    );
    assert!(stderr(&taken).contains("already in"), "{}", stderr(&taken));
    let unknown = servers(&path, &["servers", "show", "nope"], 2);
    assert!(
        stderr(&unknown).contains("its servers: `files`, `search`"),
        "{}",
        stderr(&unknown)
    );
    servers(&path, &["servers", "list", "--stdio", "x"], 2);
    servers(&path, &["servers", "add", "y"], 2);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), JSONC);
}

#[test]
fn a_new_file_is_made_and_the_protocol_is_honoured() {
    let dir = empty_home().join("catalog-new");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("servers.json");
    let demo = fixtures_stdio();
    servers(
        &path,
        &[
            "servers",
            "add",
            "demo",
            "--stdio",
            &demo,
            "--protocol",
            "legacy",
        ],
        0,
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("{\n  \"mcpServers\": {\n    \"demo\": {\n"),
        "{text}"
    );
    assert!(text.contains("\"protocol\": \"legacy\""), "{text}");
    // Pinned to the handshake era, the server is not probed for the stateless one.
    let seen = servers(&path, &["call", "requests_seen"], 0);
    let seen: serde_json::Value = serde_json::from_slice(&seen.stdout).unwrap();
    assert_eq!(seen["initialize"], 1, "{seen}");
    assert!(seen.get("server/discover").is_none(), "{seen}");
    // Without the pin it is.
    servers(&path, &["servers", "remove", "demo"], 0);
    servers(&path, &["servers", "add", "demo", "--stdio", &demo], 0);
    let seen = servers(&path, &["call", "requests_seen"], 0);
    let seen: serde_json::Value = serde_json::from_slice(&seen.stdout).unwrap();
    assert_eq!(seen["server/discover"], 1, "{seen}");
}
