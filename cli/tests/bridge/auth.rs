//! Authorization stays in the bridge: it signs in to an OAuth server (the browser flow, played
//! by the test), keeps the tokens in its own store, and the host sees the server's answers and
//! never a token.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use umcp_test_support::auth_server::{AuthServer, Setup};
use umcp_test_support::installed::empty_home;

use crate::listen::Running;
use crate::support::{folder, umcp};

#[test]
fn the_bridge_signs_in_and_no_token_reaches_the_host() {
    let fixture = AuthServer::start(Setup::default());
    let store = folder("bridge-oauth").join("tokens.json");
    let url = fixture.mcp_url();
    let mut bridge = Running(
        Command::new(umcp())
            .args([
                "bridge",
                "--url",
                &url,
                "--oauth",
                "--flow",
                "browser",
                "--token-store",
            ])
            .arg(&store)
            .current_dir(empty_home())
            .env("HOME", empty_home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start umcp bridge"),
    );
    let mut to_bridge = bridge.0.stdin.take().unwrap();
    let (lines_tx, lines) = crossbeam_channel::unbounded::<String>();
    let out = bridge.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let mut said = BufReader::new(bridge.0.stderr.take().unwrap()).lines();
    let mut send = |message: Value| {
        to_bridge
            .write_all(format!("{message}\n").as_bytes())
            .unwrap();
        to_bridge.flush().unwrap();
    };
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw-host", "version": "1"}});
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}));
    // The user opens the page the bridge shows (on stderr, which hosts keep as its log).
    let page = loop {
        let line = said
            .next()
            .expect("the bridge asks for authorization")
            .unwrap();
        if let Some(page) = line.strip_prefix("Open this page to authorize: ") {
            break page.to_owned();
        }
    };
    std::thread::spawn(move || said.for_each(drop));
    let landed = ureq::get(&page)
        .call()
        .expect("the browser lands on the callback");
    assert_eq!(landed.status().as_u16(), 200);
    let mut seen = Vec::new();
    let mut answer = |id: i64| loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer");
        let message: Value = serde_json::from_str(&line).unwrap();
        seen.push(line);
        if message["id"] == id {
            return message;
        }
    };
    assert!(answer(1)["result"]["serverInfo"].is_object());
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {}}}));
    let echoed = answer(2);
    assert_eq!(echoed["result"]["content"][0]["text"], "ok", "{echoed}");
    // The token the server saw on every request is nowhere in what the host got.
    let bearer = fixture
        .requests_to("/mcp")
        .iter()
        .find_map(|seen| seen.header("authorization").map(str::to_owned))
        .expect("the bridge sent a token to the server");
    let token = bearer
        .trim_start_matches("Bearer ")
        .trim_start_matches("DPoP ");
    assert!(token.len() > 8);
    assert!(seen.iter().all(|line| !line.contains(token)), "{seen:?}");
    assert!(
        std::fs::read_to_string(&store).unwrap().contains(token),
        "kept in its store"
    );
}
