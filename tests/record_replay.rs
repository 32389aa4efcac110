//! Tests for recorded sessions played back: a session with the bundled demo server, over
//! stdio and over Streamable HTTP, recorded by `RecordingTransport`, then replayed through a
//! real client by `ReplayTransport` with the same results and no server at all.

use umcp_test_support::demo;
#[cfg(feature = "http")]
use umcp_test_support::http_demo;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use umcp::testing::{RecordingTransport, ReplayTransport, NOT_RECORDED};
use umcp::transport::Connect;
use umcp::types::{ElicitRequestParams, ElicitResult, ServerNotification};
use umcp::{Client, Error, Options, RequestOptions};

/// Generous bound for anything that should take milliseconds.
const WAIT: Duration = Duration::from_secs(20);

#[cfg(feature = "http")]
/// A secret the HTTP session carries in its headers and in one tool argument.
const TOKEN: &str = "tok-recorded-7c1e2a9f";

/// What a session saw, compared between the live run and its replay.
#[derive(Debug, PartialEq)]
struct Outcome {
    era: &'static str,
    server: String,
    tools: Vec<String>,
    sum: Value,
    slow: Value,
    progress: Vec<(f64, Option<String>)>,
    asked: Vec<String>,
    answered: Value,
    logged: Option<Value>,
    readme: Value,
    prompts: Vec<String>,
}

/// One session of calls: listings, a tool, progress, an elicitation, a log notification and a
/// resource, as an application would make them.
fn session(connect: impl Connect + 'static) -> Outcome {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let questions = Arc::clone(&asked);
    let options = Options::default()
        .with_request_timeout(WAIT)
        .with_elicitation_handler(move |params: ElicitRequestParams| {
            questions.lock().unwrap().push(params.message().to_owned());
            match params {
                ElicitRequestParams::Form(form) => Ok(ElicitResult::accept_defaults(&form)),
                _ => Ok(ElicitResult::decline()),
            }
        });
    let client = Client::connect_with_options(connect, options).expect("connect");
    let notes = client.notifications();
    let tools = client.list_all_tools().expect("tools");
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .expect("add");
    let progress = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&progress);
    let with_progress = RequestOptions::default().with_progress(move |p| {
        into.lock().unwrap().push((p.progress, p.message.clone()));
    });
    let slow = client
        .with(&with_progress)
        .call_tool("slow", json!({"steps": 3, "delay_ms": 10}))
        .expect("slow");
    let answered = client
        .call_tool("ask_user", json!({"question": "Proceed?"}))
        .expect("ask_user");
    client
        .call_tool("log", json!({"level": "warning", "message": "careful"}))
        .expect("log");
    let logged = std::iter::from_fn(|| notes.recv_timeout(WAIT)).find_map(|n| match n {
        ServerNotification::LoggingMessage(message) => Some(message.data),
        _ => None,
    });
    let readme = client.read_resource("demo://text/readme").expect("read");
    let prompts = client.list_all_prompts().expect("prompts");
    let outcome = Outcome {
        era: client.era().as_str(),
        server: client.server_info().name,
        tools: tools.into_iter().map(|t| t.name).collect(),
        sum: serde_json::to_value(sum).unwrap(),
        slow: serde_json::to_value(slow).unwrap(),
        progress: progress.lock().unwrap().clone(),
        asked: asked.lock().unwrap().clone(),
        answered: serde_json::to_value(answered).unwrap(),
        logged,
        readme: serde_json::to_value(readme).unwrap(),
        prompts: prompts.into_iter().map(|p| p.name).collect(),
    };
    client.close();
    outcome
}

fn recording(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("umcp-recordings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A client connected to the replay of `path`.
fn replayed(path: &Path) -> Client {
    let replay = ReplayTransport::open(path).expect("a valid recording");
    Client::connect_with_options(replay, Options::default().with_request_timeout(WAIT))
        .expect("connect")
}

fn assert_session(outcome: &Outcome) {
    assert_eq!(outcome.sum["content"][0]["text"], "5");
    assert_eq!(outcome.progress.len(), 3);
    assert_eq!(outcome.progress[2].1.as_deref(), Some("step 3 of 3"));
    assert_eq!(outcome.asked, ["Proceed?"]);
    assert_eq!(outcome.answered["structuredContent"]["action"], "accept");
    assert_eq!(outcome.logged, Some(json!("careful")));
    assert!(outcome.tools.len() > 5, "{:?}", outcome.tools);
}

/// A call the recording does not hold fails, naming the recorded one it is closest to.
fn assert_changed_argument_is_refused(client: &Client, path: &Path) {
    let refused = client
        .call_tool("add", json!({"a": 2, "b": 4}))
        .unwrap_err();
    let error = match &refused {
        Error::Rpc(error) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    };
    assert_eq!(error.code, NOT_RECORDED);
    let text = std::fs::read_to_string(path).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains(r#""method":"tools/call""#) && l.contains(r#""b":3"#))
        .expect("the recorded call")
        + 1;
    assert!(
        error.message.contains(&format!("line {line}")),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("/arguments/b: recorded 3, sent 4"),
        "{}",
        error.message
    );
    assert_eq!(error.data.as_ref().unwrap()["closest"]["line"], line);
}

#[test]
fn smoke_a_stdio_session_plays_back_with_the_same_results_and_no_server() {
    let path = recording("stdio.jsonl");
    let live = session(RecordingTransport::new(demo::demo("normal"), &path).expect("record"));
    assert_session(&live);
    assert_eq!(live.server, "umcp-demo");

    // The demo server has exited; the replay starts nothing.
    let replay = ReplayTransport::open(&path).expect("a valid recording");
    assert_eq!(replay.sessions(), 1);
    let played = session(replay);
    assert_eq!(played, live);

    let client = replayed(&path);
    assert_eq!(client.transport_kind(), "replay");
    assert_changed_argument_is_refused(&client, &path);
    // What was recorded still answers, as often as asked.
    for _ in 0..2 {
        let sum = client
            .call_tool("add", json!({"a": 2, "b": 3}))
            .expect("add");
        assert_eq!(sum.text(), "5");
    }
    let unknown = client.call_tool("multiply", json!({})).unwrap_err();
    assert!(unknown.to_string().contains("closest"), "{unknown}");
}

#[test]
fn the_recording_is_json_lines_with_timing_and_the_client_s_end() {
    let path = recording("lines.jsonl");
    let recorded = RecordingTransport::new(demo::demo("normal"), &path).expect("record");
    let client = Client::connect(recorded).expect("connect");
    client
        .call_tool("echo", json!({"message": "hi"}))
        .expect("echo");
    client.close();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines[0]["recording"], "umcp");
    assert_eq!(lines[0]["session"], 1);
    assert!(lines[0]["server"].as_str().unwrap().contains("--server"));
    let times: Vec<f64> = lines[1..]
        .iter()
        .map(|l| l["ms"].as_f64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let echo = lines
        .iter()
        .position(|l| l["message"]["params"]["name"] == "echo")
        .expect("the call");
    assert_eq!(lines[echo]["from"], "client");
    let id = &lines[echo]["message"]["id"];
    assert!(lines[echo..]
        .iter()
        .any(|l| l["from"] == "server" && l["message"]["id"] == *id));
    assert!(lines
        .iter()
        .any(|l| l["from"] == "client" && l["closed"] == "closed by client"));
}

#[cfg(feature = "http")]
#[test]
fn an_http_session_plays_back_and_its_secrets_stay_out_of_the_recording() {
    use umcp::{HttpConfig, ServerConfig};

    let path = recording("http.jsonl");
    let live = {
        let server = http_demo::HttpDemo::start(&[]);
        let config = ServerConfig::new(
            "demo",
            HttpConfig::new(&server.url)
                .header("Authorization", format!("Bearer {TOKEN}"))
                .header("X-Api-Key", TOKEN),
        );
        let recorded = RecordingTransport::for_server(&config, &path).expect("record");
        let live = session(recorded);
        // The token inside a message is redacted too.
        let recorded =
            RecordingTransport::for_server(&config, &recording("http-echo.jsonl")).expect("record");
        let client = Client::connect(recorded).expect("connect");
        let echoed = client
            .call_tool("echo", json!({"message": format!("my key is {TOKEN}")}))
            .expect("echo");
        assert_eq!(echoed.text(), format!("my key is {TOKEN}"));
        client.close();
        live
        // The server is stopped here.
    };
    assert_session(&live);
    for file in ["http.jsonl", "http-echo.jsonl"] {
        let text = std::fs::read_to_string(recording(file)).unwrap();
        assert!(!text.contains(TOKEN), "{file} holds the token:\n{text}");
        assert!(!text.contains("7c1e2a9f"), "{file} holds part of the token");
    }
    let echo = std::fs::read_to_string(recording("http-echo.jsonl")).unwrap();
    assert!(echo.contains("my key is <redacted>"), "{echo}");

    assert_eq!(session(ReplayTransport::open(&path).unwrap()), live);
    let client = replayed(&path);
    assert_changed_argument_is_refused(&client, &path);

    // A redacted argument matches whatever the test sends there; the answer stays redacted.
    let client = replayed(&recording("http-echo.jsonl"));
    let echoed = client
        .call_tool("echo", json!({"message": "my key is anything"}))
        .expect("echo");
    assert_eq!(echoed.text(), "my key is <redacted>");
}

#[test]
fn an_answer_that_differs_from_the_recorded_one_fails_what_depended_on_it() {
    let path = recording("declined.jsonl");
    session(RecordingTransport::new(demo::demo("normal"), &path).expect("record"));
    let declining = Options::default()
        .with_request_timeout(WAIT)
        .with_elicitation_handler(|_| Ok(ElicitResult::decline()));
    let client = Client::connect_with_options(ReplayTransport::open(&path).unwrap(), declining)
        .expect("connect");
    let outcome = client.call_tool("ask_user", json!({"question": "Proceed?"}));
    match outcome {
        Err(Error::Rpc(error)) => {
            assert_eq!(error.code, NOT_RECORDED);
            assert!(
                error.message.contains("/result/action"),
                "{}",
                error.message
            );
            assert!(error.message.contains("decline"), "{}", error.message);
        }
        other => panic!("expected the recorded answer refused, got {other:?}"),
    }
}

/// A cookie, a key under a header name of the server's choosing, and a credential in an
/// environment variable named for a session are secrets like an `Authorization` header:
/// echoed by the server, none of them is recorded.
#[test]
fn cookies_and_session_variables_stay_out_of_the_recording() {
    use umcp::ServerConfig;

    const SESSION: &str = "sess-5d1f0c7a2b";
    let stdio = ServerConfig::new("demo", demo::demo("normal").env("MY_SESSION", SESSION));
    let path = recording("session-env.jsonl");
    let client = Client::connect(RecordingTransport::for_server(&stdio, &path).expect("record"))
        .expect("connect");
    let echoed = client
        .call_tool("echo", json!({"message": format!("session {SESSION}")}))
        .expect("echo");
    assert_eq!(echoed.text(), format!("session {SESSION}"));
    client.close();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(SESSION), "{text}");
    assert!(text.contains("session <redacted>"), "{text}");

    #[cfg(feature = "http")]
    {
        const COOKIE: &str = "sid=c00k1e-93b1e5";
        const TENANT_KEY: &str = "tenant-key-0f4e";
        let server = http_demo::HttpDemo::start(&[]);
        let config = ServerConfig::new(
            "demo",
            umcp::HttpConfig::new(&server.url)
                .header("Cookie", COOKIE)
                .header("X-Acme-Tenant", TENANT_KEY),
        );
        let path = recording("cookie.jsonl");
        let recorded = RecordingTransport::for_server(&config, &path).expect("record");
        let client = Client::connect(recorded).expect("connect");
        let message = format!("{COOKIE} and {TENANT_KEY}");
        let echoed = client
            .call_tool("echo", json!({ "message": message }))
            .expect("echo");
        assert_eq!(echoed.text(), message);
        client.close();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("c00k1e") && !text.contains(TENANT_KEY),
            "{text}"
        );
    }
}

/// A recording holds whole sessions: it is created owner-only, and a symbolic or hard link
/// planted where it is to go is refused, its target left as it was.
#[cfg(unix)]
#[test]
fn a_recording_is_owner_only_and_never_written_through_a_link() {
    use std::os::unix::fs::PermissionsExt;

    let path = recording("private.jsonl");
    let _ = std::fs::remove_file(&path);
    drop(RecordingTransport::new(demo::demo("normal"), &path).expect("record"));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let victim = recording("notes.txt");
    std::fs::write(&victim, "precious").unwrap();
    let link = recording("planted.jsonl");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let refused = RecordingTransport::new(demo::demo("normal"), &link).err();
    assert!(matches!(refused, Some(Error::Io(_))), "{refused:?}");
    let hard = recording("hard.jsonl");
    let _ = std::fs::remove_file(&hard);
    std::fs::hard_link(&victim, &hard).unwrap();
    assert!(RecordingTransport::new(demo::demo("normal"), &hard).is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}
