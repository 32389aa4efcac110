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

/// Concurrent edits take turns: of 20 `servers add` run at once into one file, none loses
/// another's entry, and each says it added its own.
#[test]
fn twenty_concurrent_adds_leave_twenty_entries() {
    let path = file("concurrent", "c.json", "{\"mcpServers\": {}}\n");
    let config = path.to_str().unwrap().to_owned();
    let runs: Vec<_> = (0..20)
        .map(|n| {
            let (name, stdio) = (format!("s{n}"), format!("echo {n}"));
            umcp_test_support::installed::umcp_in(&empty_home())
                .args([
                    "--config", &config, "servers", "add", &name, "--stdio", &stdio,
                ])
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("run umcp")
        })
        .collect();
    for run in runs {
        let out = run.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).expect(&text);
    let entries = file["mcpServers"].as_object().unwrap();
    assert_eq!(entries.len(), 20, "{text}");
    for n in 0..20 {
        assert_eq!(
            entries[&format!("s{n}")]["args"][0],
            n.to_string(),
            "{text}"
        );
    }
}

/// Adding a literal secret to a file of a git checkout says the repository will hold it, and
/// suggests a `${VAR}`; at a terminal, the reference is offered and written instead.
#[test]
fn a_literal_secret_for_a_shared_file_is_warned_of_and_a_reference_offered() {
    let path = file("shared", ".mcp.json", "{\"mcpServers\": {}}\n");
    let dir = path.parent().unwrap().to_owned();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    let secret = "sk-live-0123456789abcdef";
    let header = format!("Authorization: Bearer {secret}");
    let add = [
        "servers",
        "add",
        "prod",
        "--url",
        "https://api.example.com/mcp",
        "--header",
    ];
    let out = umcp_test_support::installed::umcp_in(&dir)
        .args(add)
        .arg(&header)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("a file of a git checkout") || err.contains("this project's"),
        "{err}"
    );
    assert!(
        err.contains("headers.Authorization as Bearer ${PROD_TOKEN}"),
        "{err}"
    );

    // At a terminal, the default answer writes the reference.
    std::fs::write(&path, "{\"mcpServers\": {}}\n").unwrap();
    let mut args: Vec<&str> = add.to_vec();
    args.push(&header);
    let screen = stdout(&umcp_test_support::installed::terminal_session_in(
        &dir,
        &[],
        &args,
        "",
        "\n",
        std::time::Duration::ZERO,
    ));
    assert!(
        screen.contains("Write ${PROD_TOKEN} in its place"),
        "{screen}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(secret), "{text}");
    assert!(text.contains("Bearer ${PROD_TOKEN}"), "{text}");
}

/// A configuration file is read up to 16 MiB, and a value nested deep in it is held once, not
/// once per level: listing a 15 MiB file nested 120 levels deep fits in a few hundred MiB of
/// address space (it once took 4 GB). A longer file is refused unread.
#[cfg(unix)]
#[test]
fn a_huge_deep_file_is_listed_in_bounded_memory_and_a_longer_one_refused() {
    let nested = |size: usize| {
        let mut text = String::from("{\"mcpServers\": {\"a\": {\"command\": \"x\", \"deep\": ");
        text.push_str(&"[".repeat(120));
        text.push('"');
        text.push_str(&"x".repeat(size));
        text.push('"');
        text.push_str(&"]".repeat(120));
        text.push_str("}}}\n");
        text
    };
    let path = file("huge", "huge.json", &nested(15 << 20));
    let config = path.to_str().unwrap().to_owned();
    // An address-space limit far above what one copy takes, far below a copy per level.
    let line = format!("ulimit -v 1048576; exec umcp --config '{config}' servers list");
    let out = std::process::Command::new("sh")
        .args(["-c", &line])
        .envs(
            umcp_test_support::installed::umcp_in(&empty_home())
                .get_envs()
                .filter_map(|(k, v)| Some((k, v?))),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("a  stdio  x"), "{}", stdout(&out));

    let path = file("huger", "huger.json", &nested(17 << 20));
    let out = servers(&path, &["servers", "list"], 2);
    assert!(
        stderr(&out).contains("larger than 16 MiB"),
        "{}",
        stderr(&out)
    );
}
