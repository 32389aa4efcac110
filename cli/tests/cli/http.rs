//! HTTP servers from the `umcp` binary: the OAuth browser flow and token store, its refusals, and
//! custom headers.

use umcp_test_support::auth_server;
use umcp_test_support::installed::{cli, stderr, stdout};
use umcp_test_support::{http_server, installed};

/// The browser flow end to end: the cli prints the authorization URL, the test plays the
/// browser (the fixture redirects at once to the cli's loopback listener), and the tokens
/// saved in `--token-store` serve the next runs, including a `--config` entry of that name.
#[test]
fn oauth_browser_flow_then_the_token_store() {
    let fixture = auth_server::AuthServer::start(auth_server::Setup::default());
    let dir = std::env::temp_dir().join(format!("umcp-cli-oauth-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = dir.join("tokens.json").to_string_lossy().into_owned();
    let url = fixture.mcp_url();
    let args = ["--url", &url, "--oauth", "--token-store", &store];
    let out = authorized(installed::umcp_in(&installed::empty_home()).args(args));
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
    // Tokens are kept by server name and URL: a `--url` server is named after its host.
    let host = url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split([':', '/']).next())
        .expect("the fixture's host");
    let mut servers = serde_json::Map::new();
    servers.insert(
        host.into(),
        serde_json::json!({ "url": url, "auth": "oauth" }),
    );
    let config = serde_json::json!({ "mcpServers": servers });
    let file = dir.join("mcp.json");
    std::fs::write(&file, config.to_string()).unwrap();
    let file = file.to_string_lossy().into_owned();
    let listed = cli(&["--config", &file, "--token-store", &store, "tools"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    assert!(stdout(&listed).starts_with("echo("), "{}", stdout(&listed));
    assert_eq!(fixture.count("GET", "/authorize"), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `command` (umcp with the arguments of an OAuth `--url` server) with `call echo`,
/// plays the browser on the page it prints (the fixture redirects at once to umcp's loopback
/// listener), and returns how umcp ended, which must be exit code 0.
fn authorized(command: &mut std::process::Command) -> std::process::Output {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::Duration;

    const BOUND: Duration = Duration::from_secs(60);
    let mut child = command
        // The browser on this machine, whether or not the test runs with a display.
        .args(["--flow", "browser", "call", "echo"])
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
    out
}

/// The secret of a pre-registered client need not be on the command line: `${VAR}` in
/// `--oauth-client-secret`, `--oauth-client-secret-file`, or `UMCP_OAUTH_CLIENT_SECRET`. The
/// fixture's token endpoint refuses a wrong one, so a call that succeeds proves it arrived.
#[test]
fn the_client_secret_comes_from_the_environment_or_a_file() {
    let fixture = auth_server::AuthServer::start(auth_server::Setup::default());
    fixture.preregister("cli-app", Some("cli-SECRET"), "client_secret_basic");
    let dir = std::env::temp_dir().join(format!("umcp-cli-secret-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("secret");
    std::fs::write(&file, "cli-SECRET\n").unwrap();
    let file = file.to_string_lossy().into_owned();
    let url = fixture.mcp_url();
    let ways: [(&str, &[&str], Option<&str>); 3] = [
        (
            "variable",
            &["--oauth-client-secret", "${UMCP_TEST_SECRET}"],
            None,
        ),
        ("file", &["--oauth-client-secret-file", &file], None),
        ("environment", &[], Some("cli-SECRET")),
    ];
    for (way, flags, env) in ways {
        let store = dir
            .join(format!("{way}.json"))
            .to_string_lossy()
            .into_owned();
        let mut command = installed::umcp_in(&installed::empty_home());
        command
            .args([
                "--url",
                &url,
                "--oauth-client-id",
                "cli-app",
                "--token-store",
                &store,
            ])
            .args(flags)
            .env("UMCP_TEST_SECRET", "cli-SECRET");
        match env {
            Some(secret) => command.env("UMCP_OAUTH_CLIENT_SECRET", secret),
            None => command.env_remove("UMCP_OAUTH_CLIENT_SECRET"),
        };
        let out = authorized(&mut command);
        assert_eq!(stdout(&out), "ok\n", "{way}");
        let sent = fixture.token_requests();
        let last = sent.last().expect("a token request");
        assert_eq!(
            (last.client_id.as_str(), last.auth_method.as_str()),
            ("cli-app", "client_secret_basic"),
            "{way}"
        );
    }
    // An unset variable or a missing file is a usage error naming it, before anything runs.
    for flags in [
        &["--oauth-client-secret", "${UMCP_TEST_UNSET_SECRET}"][..],
        &["--oauth-client-secret-file", "/nonexistent/umcp-secret"][..],
    ] {
        let out = cli(&[
            &["--url", &url, "--oauth-client-id", "cli-app"][..],
            flags,
            &["tools"],
        ]
        .concat());
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", stderr(&out));
        let named = flags[1].trim_start_matches("${").trim_end_matches('}');
        assert!(stderr(&out).contains(named), "{}", stderr(&out));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The authorization page comes from the server's metadata: its URL is shown escaped, so a
/// right-to-left override or an escape sequence in it cannot disguise where it leads.
#[test]
fn the_authorization_url_is_shown_escaped() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::Duration;

    let fixture = auth_server::AuthServer::start(auth_server::Setup {
        authorization_endpoint: Some("https://auth.example/\u{1b}[2J\u{202e}moc.knab".into()),
        ..auth_server::Setup::default()
    });
    let dir = std::env::temp_dir().join(format!("umcp-cli-oauth-url-{}", std::process::id()));
    let store = dir.join("tokens.json").to_string_lossy().into_owned();
    let mut child = installed::umcp_in(&installed::empty_home())
        .args([
            "--url",
            &fixture.mcp_url(),
            "--oauth",
            "--token-store",
            &store,
            "--flow",
            "browser",
        ])
        .arg("tools")
        .stdout(Stdio::null())
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
            .recv_timeout(Duration::from_secs(60))
            .expect("the cli asks for authorization");
        if line.starts_with("Open this page") {
            break line;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        page.starts_with(
            "Open this page to authorize: https://auth.example/\\u{1b}[2J\\u{202e}moc.knab?"
        ),
        "{page:?}"
    );
}

/// Without `--oauth` the protected server cannot be used: exit 3 with the server's hints.
/// The OAuth options belong to `--url` servers.
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

/// `--header` reaches every request to a `--url` server, `${VAR}` expanded from umcp's
/// environment.
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
    let out = installed::umcp_in(&installed::empty_home())
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
    assert_eq!(stdout(&out), "hello()\n");
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

/// Without a display the cli asks for the address a browser elsewhere ends on: the test opens the
/// page (the fixture redirects at once), pastes the redirect back on stdin, and the call goes on.
#[test]
fn without_a_display_the_sign_in_takes_a_pasted_address() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let fixture = auth_server::AuthServer::start(auth_server::Setup::default());
    let dir = std::env::temp_dir().join(format!("umcp-cli-paste-{}", std::process::id()));
    let store = dir.join("tokens.json").to_string_lossy().into_owned();
    let url = fixture.mcp_url();
    let mut child = installed::umcp_in(&installed::empty_home())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .args([
            "--url",
            &url,
            "--oauth",
            "--token-store",
            &store,
            "call",
            "echo",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run umcp");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let page = loop {
        let line = lines.next().expect("the cli shows a page").unwrap();
        if let Some(page) = line
            .trim()
            .strip_prefix("https://")
            .or(line.trim().strip_prefix("http://"))
        {
            break format!("http://{page}");
        }
    };
    let agent = ureq::Agent::config_builder()
        .max_redirects(0)
        .http_status_as_error(false)
        .build()
        .new_agent();
    let answer = agent.get(&page).call().expect("the authorization page");
    let location = answer.headers()["location"].to_str().unwrap().to_owned();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{location}").unwrap();
    let status = child.wait().unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(status.success(), "{rest:?}");
    let out = std::io::read_to_string(child.stdout.take().unwrap()).unwrap();
    assert!(out.contains("ok"), "{out}");
    let saved = std::fs::read_to_string(&store).unwrap();
    assert!(saved.contains("access_token"), "the tokens are kept");
    let _ = std::fs::remove_dir_all(&dir);
}
