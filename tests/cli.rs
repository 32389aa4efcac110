//! Tests for the `umcp` binary: the commands, exit codes and OAuth, installed with `cargo install --path . --features cli`
//! and run from the `PATH` as a user would, end to end against the bundled demo server.

use serde_json::Value;

#[allow(dead_code)] // Only the binary's path is used here.
#[path = "common/demo.rs"]
mod demo;

#[path = "common/umcp.rs"]
mod umcp;

use umcp::{cli, demo, stderr, stdout};

#[test]
fn smoke_tools() {
    let out = stdout(&demo(&["tools"], 0));
    assert!(
        out.lines().any(|l| l == "echo  Echoes `message` back."),
        "{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("crash  ")), "{out}");
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
    assert!(out.lines().any(|l| l.starts_with("greet  ")), "{out}");
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
    let demo = demo::demo_binary();
    let config = serde_json::json!({
        "mcpServers": {
            "one": { "command": demo, "args": ["--server"], "env": { "WHO": "first" } },
            "two": { "command": demo, "args": ["--server"], "env": { "WHO": "second" } },
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
        listed.contains("one__echo  ") && listed.contains("two__echo  "),
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
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["tools"][..],
        &["--stdio", "x", "--url", "http://h/mcp", "tools"][..],
        &["--stdio", "'unterminated", "tools"][..],
        &[
            "--url",
            "http://h/mcp",
            "--transport",
            "carrier-pigeon",
            "tools",
        ][..],
        &["--stdio", "x", "frobnicate"][..],
        &["--stdio", "x", "call", "echo", "{not json"][..],
        &["--stdio", "x", "call", "echo", "[1, 2]"][..],
        &["--stdio", "x", "--bogus", "tools"][..],
    ] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("usage: umcp"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn connection_failures_exit_3() {
    let out = cli(&["--stdio", "/nonexistent/umcp-server --flag", "tools"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("failed to start `/nonexistent/umcp-server`"),
        "{}",
        stderr(&out)
    );
    let out = cli(&["--stdio", "sleep 1000", "--timeout", "0.5", "tools"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("timeout"), "{}", stderr(&out));
}

/// `--timeout` bounds start-up: a server that never answers fails about then, and what it
/// wrote on stderr says why.
#[test]
fn a_server_that_hangs_at_start_up_fails_within_the_timeout_with_its_stderr() {
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    // It writes `demo server: starting in … ms` to stderr, then sleeps past the test.
    let server = format!("{} --start-delay 600000", umcp::demo_stdio());
    let mut command = umcp::umcp_in(&umcp::empty_home());
    command
        .args(["--stdio", &server, "--timeout", "2", "tools"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let child = command.spawn().expect("run umcp");
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait_with_output());
    });
    let out = done
        .recv_timeout(Duration::from_secs(60))
        .expect("umcp ends")
        .expect("umcp's output");
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    // The timeout, then the server's close: stdin closed, 2 s of grace, SIGTERM.
    assert!(elapsed < Duration::from_secs(9), "{elapsed:?}");
    let shown = stderr(&out);
    assert!(shown.contains("timeout"), "{shown}");
    assert!(
        shown.contains("stderr: demo server: starting in 600000 ms"),
        "{shown}"
    );
}

#[test]
fn tool_errors_exit_4_and_other_errors_1() {
    let out = demo(&["call", "fail", r#"{"message": "boom"}"#], 4);
    assert_eq!(stdout(&out), "boom\n");
    let out = demo(&["call", "no_such_tool"], 1);
    assert!(
        stderr(&out).contains("unknown tool `no_such_tool`"),
        "{}",
        stderr(&out)
    );
    demo(&["read", "demo://nothing/here"], 1);
}

#[test]
fn resource_templates() {
    let out = demo(&["templates"], 0);
    assert_eq!(stdout(&out), "demo://note/{name}  A note about someone.\n");
    let out = demo(&["--json", "templates"], 0);
    let listed: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(listed[0]["template"]["uriTemplate"], "demo://note/{name}");
    assert_eq!(listed[0]["server"], "server");
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
            .any(|l| l == "server: error: demo: disk on fire"),
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

#[allow(dead_code)] // Only server-everything is used here.
#[path = "common/peers.rs"]
mod peers;

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

#[cfg(feature = "http")]
#[path = "common/http_server.rs"]
mod http_server;

#[cfg(feature = "oauth")]
#[path = "common/auth_server.rs"]
mod auth_server;

/// The browser flow end to end: the cli prints the authorization URL, the test plays the
/// browser (the fixture redirects at once to the cli's loopback listener), and the tokens
/// saved in `--token-store` serve the next runs, including a `--config` entry of that name.
#[cfg(feature = "oauth")]
#[test]
fn oauth_browser_flow_then_the_token_store() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::Duration;

    const BOUND: Duration = Duration::from_secs(60);
    let fixture = auth_server::AuthServer::start(auth_server::Setup::default());
    let dir = std::env::temp_dir().join(format!("umcp-cli-oauth-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = dir.join("tokens.json").to_string_lossy().into_owned();
    let url = fixture.mcp_url();
    let args = ["--url", &url, "--oauth", "--token-store", &store];

    let mut child = umcp::umcp_in(&umcp::empty_home())
        .args(args)
        .args(["call", "echo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run umcp");
    let (lines_tx, lines) = mpsc::channel();
    let child_stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(child_stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let page = loop {
        let line = lines
            .recv_timeout(BOUND)
            .expect("the cli asks for authorization");
        if let Some(page) = line.strip_prefix("Open this page to authorize: ") {
            break page.to_owned();
        }
    };
    // The "browser" opens the page and follows the redirect to the cli's listener.
    let landed = ureq::get(&page)
        .call()
        .expect("the browser lands on the callback")
        .into_body()
        .read_to_string()
        .unwrap();
    assert!(landed.contains("Authorization complete"), "{landed}");
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait_with_output());
    });
    let out = done.recv_timeout(BOUND).expect("the cli finishes").unwrap();
    let rest: Vec<String> = lines.try_iter().collect();
    assert_eq!(out.status.code(), Some(0), "stderr: {rest:#?}");
    assert_eq!(stdout(&out), "ok\n");
    assert_eq!(fixture.count("GET", "/authorize"), 1);

    // The saved tokens: no browser this time.
    let again = cli(&[&args[..], &["call", "echo"]].concat());
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(stdout(&again), "ok\n");
    assert!(
        !stderr(&again).contains("Open this page"),
        "{}",
        stderr(&again)
    );
    let config = serde_json::json!({ "mcpServers": { "server": { "url": url, "auth": "oauth" } } });
    let file = dir.join("mcp.json");
    std::fs::write(&file, config.to_string()).unwrap();
    let file = file.to_string_lossy().into_owned();
    let listed = cli(&["--config", &file, "--token-store", &store, "tools"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    assert!(stdout(&listed).starts_with("echo  "), "{}", stdout(&listed));
    assert_eq!(fixture.count("GET", "/authorize"), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without `--oauth` the protected server cannot be used: exit 3 with the server's hints.
/// The OAuth options belong to `--url` servers.
#[cfg(feature = "oauth")]
#[test]
fn oauth_refusals_exit_3_and_misplaced_options_exit_2() {
    let fixture = auth_server::AuthServer::start(auth_server::Setup::default());
    let out = cli(&["--url", &fixture.mcp_url(), "tools"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("needs authorization: HTTP 401"),
        "{}",
        stderr(&out)
    );
    for args in [
        &["--stdio", "x", "--oauth", "tools"][..],
        &["--config", "x.json", "--oauth-client-id", "a", "tools"][..],
    ] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("--url servers"), "{}", stderr(&out));
    }
}

#[test]
fn protocol_modes_choose_the_era() {
    let modern = format!("'{}' --server --modern", demo::demo_binary().display());
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

/// `--header` reaches every request to a `--url` server, `${VAR}` expanded from umcp's
/// environment.
#[cfg(feature = "http")]
#[test]
fn headers_for_http_servers() {
    let server = http_server::serve(|seen, reply| {
        let id = seen.rpc_id();
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("initialize")) => reply.json(
                200,
                &[],
                &serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "headers", "version": "1"}}})
                .to_string(),
            ),
            ("POST", Some("tools/list")) => reply.json(
                200,
                &[],
                &serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                    {"name": "hello", "inputSchema": {"type": "object"}}]}})
                .to_string(),
            ),
            ("POST", _) => reply.status(202, &[]),
            ("DELETE", _) => reply.status(200, &[]),
            _ => reply.status(405, &[]),
        }
    });
    // The key comes from umcp's environment, not from its command line.
    let out = umcp::umcp_in(&umcp::empty_home())
        .env("UMCP_CLI_API_KEY", "s3cret")
        .args([
            "--url",
            &server.url("/mcp"),
            "--transport",
            "streamable-http",
        ])
        .args(["--header", "X-Api-Key: ${UMCP_CLI_API_KEY}", "tools"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hello  \n");
    let mut posts = 0;
    while let Some(seen) = server.next_within(std::time::Duration::from_millis(500)) {
        if seen.method == "POST" {
            posts += 1;
            assert_eq!(seen.header("x-api-key"), Some("s3cret"), "{seen:?}");
        }
    }
    assert!(posts >= 2, "{posts}");
    // An unset variable is a usage error naming it; nothing is sent.
    let out = cli(&[
        "--url",
        &server.url("/mcp"),
        "--header",
        "X-Api-Key: ${UMCP_CLI_UNSET_KEY}",
        "tools",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("UMCP_CLI_UNSET_KEY"),
        "{}",
        stderr(&out)
    );
    assert!(server
        .next_within(std::time::Duration::from_millis(300))
        .is_none());
}

#[test]
fn a_config_files_protocol_key_and_the_protocol_flag() {
    let demo = demo::demo_binary();
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
