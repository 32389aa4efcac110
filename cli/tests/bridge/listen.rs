//! `bridge --listen`: Streamable HTTP for hosts, on loopback, each request needing the bearer
//! token the bridge generated into an owner-only file (or took from the environment), a web
//! page from another origin refused; hosts of either era over it, written by others; and a
//! stateless request whose stream the host closes, cancelled on the server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use umcp_test_support::installed::empty_home;
use umcp_test_support::peers;

use crate::support::{demo, folder, py_host, ts_host, umcp};

/// A bridge process, killed when dropped (a failing test too).
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `umcp bridge --listen 127.0.0.1:0` with `args`, its token written in a folder named
/// `name`; returns it, its endpoint's URL and the token.
pub fn listening(args: &[&str], name: &str) -> (Running, String, String) {
    let token_file = folder(name).join("bridge.token");
    let mut child = Command::new(umcp())
        .args(["bridge", "--listen", "127.0.0.1:0", "--token-file"])
        .arg(&token_file)
        .args(args)
        .current_dir(empty_home())
        .env("HOME", empty_home())
        .env_remove("UMCP_BRIDGE_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start umcp bridge --listen");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let said = lines
        .next()
        .expect("the bridge says where it listens")
        .unwrap();
    // The rest of its stderr is drained, so that it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    let url = said
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in: {said}"))
        .trim_end_matches(';')
        .to_owned();
    let token = std::fs::read_to_string(&token_file)
        .unwrap()
        .trim()
        .to_owned();
    (Running(child), url, token)
}

fn agent() -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build();
    config.into()
}

/// POSTs `body` with `headers`; the status, the session header and the body.
fn post(url: &str, headers: &[(&str, &str)], body: &Value) -> (u16, Option<String>, String) {
    let mut request = agent()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.send(body.to_string()).expect("the bridge answers");
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.body_mut().read_to_string().unwrap();
    (response.status().as_u16(), session, text)
}

/// The JSON-RPC message of a body: itself, or the last event of a stream.
fn message(body: &str) -> Value {
    let last = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .next_back()
        .unwrap_or(body);
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// A handshake-era session over HTTP, spoken raw.
pub struct Session {
    url: String,
    bearer: String,
    id: String,
}

impl Session {
    pub fn open(url: &str, token: &str, capabilities: Value) -> Session {
        let bearer = format!("Bearer {token}");
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
            "clientInfo": {"name": "raw-http", "version": "1"}});
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params});
        let (status, id, body) = post(url, &[("Authorization", &bearer)], &init);
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            message(&body)["result"]["protocolVersion"],
            "2025-06-18",
            "{body}"
        );
        Session {
            url: url.to_owned(),
            bearer,
            id: id.expect("a session id"),
        }
    }

    pub fn call(&self, tool: &str, arguments: Value) -> Value {
        let params = json!({"name": tool, "arguments": arguments});
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params});
        let headers = [
            ("Authorization", self.bearer.as_str()),
            ("Mcp-Session-Id", &self.id),
        ];
        let (status, _, body) = post(&self.url, &headers, &call);
        assert_eq!(status, 200, "{body}");
        message(&body)
    }
}

#[test]
fn only_a_request_with_the_token_is_served() {
    let (_bridge, url, token) = listening(&["--stdio", &demo(false)], "token");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let file = folder("token").join("bridge.token");
        let mode = std::fs::metadata(file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is the user's alone");
    }
    assert_eq!(token.len(), 64);
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let (status, _, body) = post(&url, &[], &ping);
    assert_eq!(status, 401, "{body}");
    let wrong = format!("Bearer {}", token.replace(&token[..4], "0000"));
    assert_eq!(post(&url, &[("Authorization", &wrong)], &ping).0, 401);
    let bearer = format!("Bearer {token}");
    let evil = [
        ("Authorization", bearer.as_str()),
        ("Origin", "http://evil.example"),
    ];
    assert_eq!(post(&url, &evil, &ping).0, 403);
    let local = [
        ("Authorization", bearer.as_str()),
        ("Origin", "http://localhost:6274"),
    ];
    let (status, _, body) = post(&url, &local, &ping);
    assert_eq!(
        (status, message(&body)["result"].clone()),
        (200, json!({})),
        "{body}"
    );
    let session = Session::open(&url, &token, json!({}));
    let echoed = session.call("echo", json!({"message": "with the token"}));
    assert_eq!(echoed["result"]["content"][0]["text"], "with the token");
}

#[test]
fn a_token_from_the_environment_and_loopback_unless_told() {
    let wide = Command::new(umcp())
        .args(["bridge", "--listen", "0.0.0.0:0", "--stdio", &demo(false)])
        .current_dir(empty_home())
        .output()
        .unwrap();
    assert_eq!(wide.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wide.stderr).contains("--allow-remote"));
    let mut bridge = Running(
        Command::new(umcp())
            .args(["bridge", "--listen", "127.0.0.1:0", "--stdio", &demo(false)])
            .env("UMCP_BRIDGE_TOKEN", "a-token-given-to-the-bridge")
            .current_dir(empty_home())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut said = String::new();
    BufReader::new(bridge.0.stderr.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    assert!(said.contains("token from $UMCP_BRIDGE_TOKEN"), "{said}");
    let url = said
        .split_whitespace()
        .find(|w| w.starts_with("http"))
        .unwrap()
        .trim_end_matches(';');
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let given = [("Authorization", "Bearer a-token-given-to-the-bridge")];
    assert_eq!(post(url, &given, &ping).0, 200);
}

#[test]
fn a_2026_python_host_over_http() {
    if peers::skip_interop() {
        return;
    }
    let (_bridge, url, token) = listening(&["--stdio", &demo(false)], "python-http");
    let plan = json!({
        "mode": "2026-07-28",
        "http": {"url": url, "token": token},
        "elicit": {"action": "accept", "content": {"answer": "over http"}},
        "steps": [
            {"do": "list"},
            {"do": "call", "tool": "slow", "args": {"steps": 3, "delay_ms": 50}, "progress": true},
            {"do": "call", "tool": "ask_user", "args": {"question": "Ready?"}},
        ],
    });
    let seen = py_host(plan);
    let run = seen["steps"].as_array().unwrap();
    assert_eq!(seen["protocol"], "2026-07-28", "{seen}");
    assert!(
        run[0]["tools"].as_array().unwrap().contains(&json!("slow")),
        "{seen}"
    );
    let progress = run[1]["progress"].as_array().unwrap();
    assert!(progress.starts_with(&[json!(1.0), json!(2.0)]), "{seen}");
    assert_eq!(
        run[2]["text"], r#"accepted: {"answer":"over http"}"#,
        "{seen}"
    );
}

#[test]
fn a_2025_typescript_host_over_http() {
    if peers::skip_interop() {
        return;
    }
    let (_bridge, url, token) = listening(&["--stdio", &demo(true)], "ts-http");
    let plan = json!({
        "sdk": "v1",
        "http": {"url": url, "token": token},
        "elicit": {"action": "accept", "content": {"answer": "yes"}},
        "steps": [
            {"do": "list"},
            {"do": "call", "tool": "slow", "args": {"steps": 3, "delay_ms": 50}, "progress": true},
            {"do": "call", "tool": "slow", "args": {"steps": 200, "delay_ms": 50}, "abort_after_progress": 2},
            {"do": "call", "tool": "ask_user", "args": {"question": "Ready?"}},
            {"do": "call", "tool": "cancellations"},
        ],
    });
    let seen = ts_host(plan);
    let run = seen["steps"].as_array().unwrap();
    let progress = run[1]["progress"].as_array().unwrap();
    assert!(
        progress.starts_with(&[json!(1), json!(2)]) && progress.len() <= 3,
        "{seen}"
    );
    assert_eq!(run[2]["aborted"], true, "{seen}");
    assert_eq!(run[3]["text"], r#"accepted: {"answer":"yes"}"#, "{seen}");
    let cancelled: Value = serde_json::from_str(run[4]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        cancelled["cancelled"].as_array().map(Vec::len),
        Some(1),
        "{seen}"
    );
}

#[test]
fn a_stateless_request_whose_stream_is_closed_is_cancelled_on_the_server() {
    let (_bridge, url, token) = listening(&["--stdio", &demo(false)], "closed");
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}, "progressToken": 1});
    let call = |id: u64, tool: &str, arguments: Value| {
        let params = json!({"name": tool, "arguments": arguments, "_meta": meta});
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\n\
             Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.to_string().len()
        )
    };
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .write_all(call(5, "slow", json!({"steps": 400, "delay_ms": 50})).as_bytes())
        .unwrap();
    // The first progress event: the call runs. Then the host goes away.
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&seen).contains("notifications/progress") {
        stream.read_exact(&mut byte).unwrap();
        seen.push(byte[0]);
    }
    drop(stream);
    let mut cancelled = Value::Null;
    for _ in 0..40 {
        let mut again = TcpStream::connect(address).unwrap();
        again
            .write_all(call(6, "cancellations", json!({})).as_bytes())
            .unwrap();
        let mut answer = String::new();
        let _ = again.read_to_string(&mut answer);
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        cancelled = message(body)["result"]["structuredContent"].clone();
        if cancelled["cancelled"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        cancelled["cancelled"].as_array().map(Vec::len),
        Some(1),
        "{cancelled}"
    );
}
