//! The commands and flags of the `umcp` binary against the demo server: tools, prompts, resources,
//! config files, logs and eras.

use serde_json::Value;

use umcp_test_support::installed::{cli, demo, fixtures_stdio, stderr, stdout};
use umcp_test_support::peers;

#[test]
fn smoke_tools() {
    let out = stdout(&demo(&["tools"], 0));
    assert!(
        out.lines()
            .any(|l| l == "echo(message: string)  Echoes `message` back."),
        "{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("crash(")), "{out}");
}

#[test]
fn call_with_json_arguments() {
    let out = demo(&["call", "add", r#"{"a": 2, "b": 3}"#], 0);
    assert_eq!(stdout(&out), "5\n");
    let out = demo(&["call", "echo", r#"{"message": "two words"}"#], 0);
    assert_eq!(stdout(&out), "two words\n");
}

#[test]
fn call_and_prompt_with_key_value_pairs() {
    // `add` wants numbers: `a=2` is the number 2. `echo` wants text: `message=42` stays text.
    let out = demo(&["call", "add", "a=2", "b:=3"], 0);
    assert_eq!(stdout(&out), "5\n");
    let out = demo(&["call", "echo", "message=42"], 0);
    assert_eq!(stdout(&out), "42\n");
    let out = demo(&["call", "echo", "message=a = b"], 0);
    assert_eq!(stdout(&out), "a = b\n");
    let out = demo(&["call", "add", "a=two", "b=3"], 2);
    assert!(
        stderr(&out).contains("`a=two`: the tool wants number there"),
        "{}",
        stderr(&out)
    );
    for bad in [&["a"][..], &["a=1", "a=2"][..], &["a:=[1"][..]] {
        let out = demo(&[&["call", "add"][..], bad].concat(), 2);
        assert!(stderr(&out).contains("usage: umcp"), "{bad:?}");
    }
    let out = demo(&["prompt", "greet", "name=Ada", "style=pirate"], 0);
    assert_eq!(
        stdout(&out),
        "# A greeting for Ada\nSay hello to Ada in a pirate way.\n"
    );
}

/// An optional parameter, as the Python SDK writes it (`anyOf` an integer or null), takes
/// `KEY=VALUE` as its type, as `oneOf` and a `type` array do; text wherever a string is allowed.
#[test]
fn key_value_pairs_follow_alternative_types() {
    let args = [
        "call",
        "hello",
        "on=5",
        "pick=true",
        "maybe=2",
        "either=3",
        "n=1",
    ];
    let out = crate::fake::run(&[], &args, 0);
    assert_eq!(
        stdout(&out),
        "{\"either\": \"3\", \"maybe\": 2, \"n\": 1, \"on\": 5, \"pick\": true}\n"
    );
    let out = crate::fake::run(&[], &["call", "hello", "on=five"], 2);
    assert!(
        stderr(&out).contains("`on=five`: the tool wants integer there"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn json_output_for_scripts() {
    let out = demo(&["--json", "tools"], 0);
    let tools: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"add"),
        "{names:?}"
    );
    assert_eq!(tools[0]["tool"]["inputSchema"]["type"], "object");

    let out = demo(&["call", "add", r#"{"a": 2, "b": 3}"#, "--json"], 0);
    let result: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(result["structuredContent"]["sum"], 5);
}

#[test]
fn read_resources_and_prompts() {
    let out = demo(&["read", "demo://text/readme"], 0);
    assert_eq!(stdout(&out), "Hello from the umcp demo server.\n");
    let out = stdout(&demo(&["resources"], 0));
    assert!(
        out.contains("demo://blob/bytes  Eight bytes, 0 to 7."),
        "{out}"
    );
    let out = stdout(&demo(&["prompts"], 0));
    assert!(
        out.lines().any(|l| l.starts_with("greet(name, style?)  ")),
        "{out}"
    );
    let out = demo(
        &["prompt", "greet", r#"{"name": "Ada", "style": "pirate"}"#],
        0,
    );
    assert_eq!(
        stdout(&out),
        "# A greeting for Ada\nSay hello to Ada in a pirate way.\n"
    );
}

#[test]
fn config_file_with_several_servers() {
    let demo = umcp_test_support::demo::demo_binary();
    let config = serde_json::json!({
        "mcpServers": {
            "one": { "command": demo, "args": ["--server", "--fixtures"], "env": { "WHO": "first" } },
            "two": { "command": demo, "args": ["--server", "--fixtures"], "env": { "WHO": "second" } },
            "off": { "command": "/nonexistent/umcp-server", "disabled": true },
        }
    });
    let path = std::env::temp_dir().join(format!("umcp-cli-test-{}.json", std::process::id()));
    std::fs::write(&path, config.to_string()).unwrap();
    let file = path.to_string_lossy().into_owned();

    let out = cli(&["--config", &file, "tools"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = stdout(&out);
    assert!(
        listed.contains("one__echo(") && listed.contains("two__echo("),
        "{listed}"
    );
    let out = cli(&["--config", &file, "call", "two__env", r#"{"name": "WHO"}"#]);
    assert_eq!(stdout(&out), "second\n");
    let out = cli(&[
        "--config",
        &file,
        "--server",
        "one",
        "call",
        "env",
        r#"{"name": "WHO"}"#,
    ]);
    assert_eq!(stdout(&out), "first\n");
    let out = cli(&["--config", &file, "read", "demo://text/readme"]);
    assert_eq!(out.status.code(), Some(2), "read needs one server");
    // Resources are read from one server: with several, each line says whose it is.
    let out = stdout(&cli(&["--config", &file, "resources"]));
    for server in ["one", "two"] {
        let line = format!("{server}: demo://text/readme  ");
        assert!(out.lines().any(|l| l.starts_with(&line)), "{out}");
    }
    let out = stdout(&cli(&["--config", &file, "templates"]));
    assert!(
        out.lines()
            .any(|l| l == "two: demo://note/{name}  A note about someone."),
        "{out}"
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn resource_templates() {
    let out = demo(&["templates"], 0);
    assert_eq!(stdout(&out), "demo://note/{name}  A note about someone.\n");
    let out = demo(&["--json", "templates"], 0);
    let listed: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(listed[0]["template"]["uriTemplate"], "demo://note/{name}");
    assert_eq!(listed[0]["server"], "demo");
}

/// `--log LEVEL` asks the servers for their log messages from LEVEL up and prints them on
/// stderr, each with its server; without it none are shown.
#[test]
fn log_messages_from_a_level_up() {
    let disk = r#"{"level": "error", "message": "disk on fire"}"#;
    let out = demo(&["--log", "warning", "call", "log", disk], 0);
    assert_eq!(stdout(&out), "logged\n");
    assert!(
        stderr(&out)
            .lines()
            .any(|l| l == "demo: error: demo: disk on fire"),
        "{}",
        stderr(&out)
    );
    let quiet = r#"{"level": "info", "message": "quiet"}"#;
    let out = demo(&["--log", "warning", "call", "log", quiet], 0);
    assert_eq!(stdout(&out), "suppressed: below warning\n");
    assert!(!stderr(&out).contains("quiet"), "{}", stderr(&out));
    let out = demo(&["call", "log", disk], 0);
    assert!(!stderr(&out).contains("disk on fire"), "{}", stderr(&out));
    demo(&["--log", "loud", "tools"], 2);
}

/// A -32042 from a real server (server-everything) shows each page's message and full URL.
#[test]
fn pages_a_server_requires_are_shown_in_full() {
    if peers::skip_interop() {
        return;
    }
    let server = format!(
        "'{}' '{}' stdio",
        peers::node().display(),
        peers::server_everything().display()
    );
    let page = r#"{"url": "https://example.com/x", "errorPath": true}"#;
    let out = cli(&["--stdio", &server, "call", "trigger-url-elicitation", page]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&"umcp: the server needs you to open a page first:"),
        "{err}"
    );
    assert!(
        lines.iter().any(|l| l.trim().starts_with("https://")),
        "{err}"
    );
    assert_eq!(lines.last(), Some(&"then run the command again"), "{err}");
}

#[test]
fn protocol_modes_choose_the_era() {
    let modern = format!(
        "'{}' --server --modern",
        umcp_test_support::demo::demo_binary().display()
    );
    // `auto` (the default) finds either era.
    let out = cli(&["--stdio", &modern, "call", "add", r#"{"a": 2, "b": 3}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "5");
    // A pin does not fall back: the handshake-era demo refuses it, and the other way round.
    let out = demo(&["--protocol", "modern", "tools"], 3);
    assert!(!stderr(&out).is_empty());
    let out = cli(&["--stdio", &modern, "--protocol", "legacy", "tools"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = cli(&["--stdio", &modern, "--protocol", "sometimes", "tools"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_config_files_protocol_key_and_the_protocol_flag() {
    let demo = umcp_test_support::demo::demo_binary();
    let config = serde_json::json!({
        "mcpServers": {
            "modern": { "command": demo, "args": ["--server", "--modern"], "protocol": "modern" },
        }
    });
    let path = std::env::temp_dir().join(format!("umcp-cli-protocol-{}.json", std::process::id()));
    std::fs::write(&path, config.to_string()).unwrap();
    let file = path.to_string_lossy().into_owned();

    let out = cli(&["--config", &file, "--json", "info"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let info: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(info[0]["era"], "modern");
    // `ping` checks a stateless server too (with `server/discover`, that era having no ping).
    let out = cli(&["--config", &file, "ping"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("modern  ok  "), "{}", stdout(&out));
    // The flag wins over the file: a stateless-only server cannot be spoken to in the
    // handshake era.
    let out = cli(&["--config", &file, "--protocol", "legacy", "info"]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(stderr(&out).contains("-32022"), "{}", stderr(&out));
    std::fs::remove_file(&path).ok();
}

/// `--protocol auto` wins over the file too: a server the file pins to the handshake era,
/// which speaks only the stateless one, is probed and found.
#[test]
fn protocol_auto_on_the_command_line_wins_over_the_file() {
    let demo = umcp_test_support::demo::demo_binary();
    let config = serde_json::json!({
        "mcpServers": {
            "pinned": { "command": demo, "args": ["--server", "--modern"], "protocol": "legacy" },
        }
    });
    let path = std::env::temp_dir().join(format!("umcp-cli-auto-{}.json", std::process::id()));
    std::fs::write(&path, config.to_string()).unwrap();
    let file = path.to_string_lossy().into_owned();
    let pinned = cli(&["--config", &file, "info"]);
    assert_eq!(pinned.status.code(), Some(3), "{}", stderr(&pinned));
    let out = cli(&["--config", &file, "--protocol", "auto", "--json", "info"]);
    std::fs::remove_file(&path).ok();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let info: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(info[0]["era"], "modern");
}

#[test]
fn a_stdio_line_keeps_its_variable_assignments_and_adds_env() {
    let line = format!("WHO=assigned {}", fixtures_stdio());
    let out = cli(&["--stdio", &line, "call", "env", r#"{"name": "WHO"}"#]);
    assert_eq!(stdout(&out), "assigned\n", "{}", stderr(&out));
    let out = cli(&[
        "--stdio",
        &line,
        "--env",
        "ALSO=given",
        "call",
        "env",
        r#"{"name": "ALSO"}"#,
    ]);
    assert_eq!(stdout(&out), "given\n", "{}", stderr(&out));
}

#[test]
fn a_call_sends_a_stateless_server_only_what_it_needs() {
    // The demo behind `tee`, which keeps every line the client sends it.
    let log = std::env::temp_dir().join(format!("umcp-cli-sent-{}.jsonl", std::process::id()));
    let quote = |word: &str| format!("'{}'", word.replace('\'', r"'\''"));
    let demo = umcp_test_support::demo::demo_binary();
    let script = format!(
        "tee {} | {} --server --modern",
        quote(&log.to_string_lossy()),
        quote(&demo.to_string_lossy())
    );
    let server = format!("sh -c {}", quote(&script));
    let out = cli(&["--stdio", &server, "call", "add", "a=2", "b=3"]);
    let sent = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "5");
    let methods: Vec<String> = sent
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|message| message["method"].as_str().map(str::to_owned))
        .collect();
    // The era's discovery, the listing that types `a=2 b=3`, and the call.
    for needed in ["server/discover", "tools/list", "tools/call"] {
        assert!(methods.iter().any(|m| m == needed), "{methods:?}");
    }
    for unneeded in ["subscriptions/listen", "prompts/list"] {
        assert!(!methods.iter().any(|m| m == unneeded), "{methods:?}");
    }
}
