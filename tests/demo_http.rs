//! Tests for the demo server's Streamable HTTP mode (`demo --server --http 127.0.0.1:0`):
//! through umcp's client, and with raw HTTP for what a client never does on purpose.

#![cfg(feature = "http")]

use umcp_test_support::http_demo;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_demo::HttpDemo;
use serde_json::{json, Value};
use umcp::jsonrpc::ErrorObject;
use umcp::types::{
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, LoggingLevel, ServerNotification,
};
use umcp::{CancelHandle, Error, Options, RequestOptions};

/// Generous bound for anything that should take milliseconds.
const WAIT: Duration = Duration::from_secs(10);

/// A sampling handler that answers "answer to <prompt>" and reports every prompt on `seen`.
fn sampling(seen: mpsc::Sender<String>) -> Options {
    let seen = Mutex::new(seen);
    Options::default().with_sampling_handler(
        move |params: CreateMessageRequestParams| -> Result<CreateMessageResult, ErrorObject> {
            let prompt = params.messages.last().map(|m| m.content.text());
            let prompt = prompt.unwrap_or_default().to_string();
            let _ = seen.lock().unwrap().send(prompt.clone());
            let answer = ContentBlock::text(format!("answer to {prompt}"));
            Ok(CreateMessageResult::new("test-model", answer))
        },
    )
}

#[test]
fn handshake_tools_and_close_over_streamable_http() {
    let mut server = HttpDemo::start(&[]);
    let client = server.connect(Options::default());
    // The Streamable HTTP attempt succeeded: no fallback to the legacy SSE transport.
    assert_eq!(client.transport_kind(), "streamable-http");
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.server_info().name, "umcp-demo");
    let tools = client.list_all_tools().unwrap();
    assert!(tools.iter().any(|t| t.name == "add"), "{tools:?}");
    let sum = client.call_tool("add", json!({"a": 2, "b": 3})).unwrap();
    assert_eq!(sum.text(), "5");
    assert_eq!(sum.structured_content, Some(json!({"sum": 5})));
    client.close();

    // Closing deleted that session; the server goes on serving new ones.
    assert!(server.still_running());
    let again = server.connect(Options::default());
    again.ping().unwrap();
    let echo = again.call_tool("echo", json!({"message": "hi"})).unwrap();
    assert_eq!(echo.text(), "hi");
    again.close();
    assert!(server.still_running());
}

#[test]
fn progress_of_a_call_reaches_its_callback() {
    let server = HttpDemo::start(&[]);
    let client = server.connect(Options::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let options = RequestOptions::default().with_progress(move |p| {
        sink.lock().unwrap().push((p.progress, p.total));
    });
    let args = json!({"steps": 3, "delay_ms": 20});
    let result = client.with(&options).call_tool("slow", args).unwrap();
    assert_eq!(result.text(), "finished 3 steps");
    let seen = seen.lock().unwrap().clone();
    let expected = vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))];
    assert_eq!(seen, expected);
}

#[test]
fn a_cancelled_call_ends_and_the_session_goes_on() {
    let server = HttpDemo::start(&[]);
    let client = server.connect(Options::default());
    let cancel = CancelHandle::new();
    let on_progress = cancel.clone();
    let options = RequestOptions::default()
        .with_cancel(cancel)
        .with_progress(move |_| on_progress.cancel());
    let args = json!({"steps": 1000, "delay_ms": 20});
    let outcome = client.with(&options).call_tool("slow", args);
    assert!(
        matches!(outcome, Err(Error::Cancelled { .. })),
        "{outcome:?}"
    );
    // The notice goes out on a POST of its own, after the call has returned.
    let deadline = Instant::now() + WAIT;
    loop {
        let seen = client.call_tool("cancellations", Value::Null).unwrap();
        let cancelled = seen.structured_content.unwrap_or_default()["cancelled"].clone();
        if cancelled.as_array().is_some_and(|ids| ids.len() == 1) {
            break;
        }
        assert!(Instant::now() < deadline, "the server recorded {cancelled}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let echo = client.call_tool("echo", json!({"message": "still here"}));
    assert_eq!(echo.unwrap().text(), "still here");
}

#[test]
fn sampling_requests_reach_the_handler_even_from_concurrent_calls() {
    let server = HttpDemo::start(&[]);
    let (seen_tx, seen) = mpsc::channel();
    let client = Arc::new(server.connect(sampling(seen_tx)));
    let callers: Vec<_> = ["one", "two", "three"]
        .into_iter()
        .map(|prompt| {
            let client = Arc::clone(&client);
            std::thread::spawn(move || {
                let reply = client
                    .call_tool("ask_llm", json!({ "prompt": prompt }))
                    .unwrap();
                assert_eq!(reply.text(), format!("answer to {prompt}"));
            })
        })
        .collect();
    for caller in callers {
        caller.join().expect("caller thread");
    }
    let mut prompts: Vec<String> = (0..3).map(|_| seen.recv_timeout(WAIT).unwrap()).collect();
    prompts.sort();
    assert_eq!(prompts, ["one", "three", "two"]);
}

#[test]
fn a_log_message_arrives_on_the_notifications_handle() {
    let server = HttpDemo::start(&[]);
    let client = server.connect(Options::default());
    let notes = client.notifications();
    client.set_logging_level(LoggingLevel::Info).unwrap();
    let logged = client
        .call_tool("log", json!({"level": "warning", "message": "over http"}))
        .unwrap();
    assert_eq!(logged.text(), "logged");
    let message = loop {
        match notes.recv_timeout(WAIT) {
            Some(ServerNotification::LoggingMessage(m)) => break m,
            Some(_) => {}
            None => panic!("no log message within {WAIT:?}"),
        }
    };
    assert_eq!(message.level, LoggingLevel::Warning);
    assert_eq!(message.data, json!("over http"));
}

#[test]
fn the_session_id_is_required_and_ends_with_delete() {
    let server = HttpDemo::start(&[]);
    let at = server.address.as_str();
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let json_only = ("Accept", "application/json");

    let missing = Raw::send(at, "POST", &[json_only], list);
    assert_eq!(missing.status, 400);
    assert_eq!(Raw::send(at, "GET", &[SSE], "").status, 400);
    let unknown = Raw::send(at, "POST", &[json_only, ("Mcp-Session-Id", "nope")], list);
    assert_eq!(unknown.status, 404);

    // Without text/event-stream in Accept the reply is plain JSON.
    let init = Raw::send(at, "POST", &[json_only], &initialize());
    assert_eq!(init.status, 200);
    assert_eq!(init.header("content-type"), Some("application/json"));
    let session = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    assert!(!session.is_empty());
    assert!(
        session.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "{session}"
    );
    let result = init.json();
    assert_eq!(
        result["result"]["protocolVersion"], "2025-11-25",
        "{result}"
    );

    let headers = [json_only, ("Mcp-Session-Id", &session)];
    let tools = Raw::send(at, "POST", &headers, list);
    assert_eq!(tools.status, 200);
    assert!(tools.json()["result"]["tools"].is_array());

    assert_eq!(Raw::send(at, "DELETE", &headers, "").status, 200);
    assert_eq!(Raw::send(at, "POST", &headers, list).status, 404);
}

#[test]
fn what_a_call_sends_comes_on_its_own_event_stream() {
    let server = HttpDemo::start(&[]);
    let at = server.address.as_str();
    let mut init = Raw::send(at, "POST", &[SSE], &initialize());
    assert_eq!(init.status, 200);
    assert_eq!(init.header("content-type"), Some("text/event-stream"));
    let session = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    assert_eq!(init.next_event()["id"], 1);
    let headers = [SSE, ("Mcp-Session-Id", session.as_str())];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(Raw::send(at, "POST", &headers, initialized).status, 202);
    // With the GET stream open, only attribution keeps the call's messages off it.
    let get = Raw::send(at, "GET", &headers, "");
    assert_eq!(get.status, 200);
    assert_eq!(get.header("content-type"), Some("text/event-stream"));

    let ask = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "ask_llm", "arguments": {"prompt": "2 + 2?"}}});
    let mut call = Raw::send(at, "POST", &headers, &ask.to_string());
    assert_eq!(call.status, 200);
    // The tool's sampling request comes first, on this very stream.
    let sampling = call.next_event();
    assert_eq!(sampling["method"], "sampling/createMessage", "{sampling}");
    let answer = json!({"jsonrpc": "2.0", "id": sampling["id"],
        "result": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "4"}}});
    assert_eq!(
        Raw::send(at, "POST", &headers, &answer.to_string()).status,
        202
    );
    let response = call.next_event();
    assert_eq!(response["id"], 2, "{response}");
    assert_eq!(response["result"]["structuredContent"]["text"], "4");
}

const SSE: (&str, &str) = ("Accept", "application/json, text/event-stream");

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"sampling": {}},
        "clientInfo": {"name": "raw", "version": "1"},
    }})
    .to_string()
}

/// One HTTP exchange over a fresh connection, read as far as the head.
struct Raw {
    status: u16,
    /// Names lowercased.
    headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
}

impl Raw {
    fn send(address: &str, method: &str, headers: &[(&str, &str)], body: &str) -> Raw {
        let mut stream = TcpStream::connect(address).expect("connect to the server");
        stream.set_read_timeout(Some(WAIT)).unwrap();
        let mut head = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        stream
            .write_all(format!("{head}\r\n{body}").as_bytes())
            .unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let status = line.split(' ').nth(1).and_then(|s| s.parse().ok());
        let status = status.unwrap_or_else(|| panic!("bad status line {line:?}"));
        let mut headers = Vec::new();
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            let Some((name, value)) = line.trim_end().split_once(':') else {
                break;
            };
            headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
        }
        Raw {
            status,
            headers,
            reader,
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body of a plain (Content-Length) reply, as JSON.
    fn json(mut self) -> Value {
        let length: usize = self.header("content-length").unwrap().parse().unwrap();
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// The next `data:` line of an event stream, as JSON. Chunk-size lines and event
    /// boundaries are skipped, which is enough here: every chunk holds whole events.
    fn next_event(&mut self) -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            let read = self.reader.read_line(&mut line).unwrap();
            assert!(read > 0, "the event stream ended");
            if let Some(data) = line.trim_end().strip_prefix("data: ") {
                return serde_json::from_str(data).unwrap();
            }
        }
    }
}
