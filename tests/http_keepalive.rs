//! A closed keep-alive connection is not an error: when a server closes a pooled connection
//! right after an answer without saying so (no `Connection: close`), a request that is safe to
//! repeat goes once more on a new connection, and a `tools/call` that may have run does not.
#![cfg(feature = "http")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{json, Value};
use umcp::transport::http::{HttpConfig, HttpTransportKind};
use umcp::{Client, Error, Options, ProtocolMode};

/// What the server saw: connections accepted, and the JSON-RPC methods it read, in order.
#[derive(Default)]
struct Seen {
    connections: AtomicUsize,
    methods: Mutex<Vec<String>>,
}

/// A server that answers at once, and closes a connection on which it answered `tools/list`
/// as soon as the next request arrives on it, without reading it: what a server or load
/// balancer that drops idle keep-alive connections does to a request already on its way.
fn serve() -> (String, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(Seen::default());
    let shared = seen.clone();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            shared.connections.fetch_add(1, Ordering::SeqCst);
            let seen = shared.clone();
            thread::spawn(move || connection(stream, &seen));
        }
    });
    (url, seen)
}

fn connection(stream: TcpStream, seen: &Seen) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let Some(body) = request(&mut reader) else {
            return;
        };
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        seen.methods.lock().unwrap().push(method.clone());
        let answer = match method.as_str() {
            "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "keepalive", "version": "0"}}),
            "tools/list" => json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
            "tools/call" => json!({"content": [{"type": "text", "text": "ran"}]}),
            _ => Value::Null,
        };
        let response = if message.get("id").is_none() {
            "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_owned()
        } else {
            let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": answer});
            let reply = reply.to_string();
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
                reply.len()
            )
        };
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
        if method == "tools/list" {
            // The next request is on its way: close without reading it.
            let _ = reader.fill_buf();
            return;
        }
    }
}

/// One HTTP request's body; `None` once the client closed the connection.
fn request(reader: &mut BufReader<TcpStream>) -> Option<Vec<u8>> {
    let mut length = 0;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

fn connect(url: &str) -> Client {
    let config = HttpConfig::new(url)
        .transport(HttpTransportKind::StreamableHttp)
        .standalone_stream(false);
    let options = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    Client::connect_with_options(config, options).expect("connect")
}

#[test]
fn a_listing_goes_again_on_a_new_connection_and_a_tool_call_does_not() {
    let (url, seen) = serve();
    let client = connect(&url);
    assert_eq!(
        client.list_tools(None).expect("first listing").tools.len(),
        1
    );
    assert_eq!(seen.connections.load(Ordering::SeqCst), 1);

    // The pooled connection is closed under the second listing: sent again on a new one.
    assert_eq!(
        client.list_tools(None).expect("listing again").tools.len(),
        1
    );
    assert_eq!(seen.connections.load(Ordering::SeqCst), 2);

    // Closed under a tool call, which may have run: an error, and the call is not repeated.
    let error = client
        .call_tool("t", json!({}))
        .expect_err("a tool call on a connection the server closed");
    assert!(matches!(error, Error::Io(_)), "{error:?}");
    let methods = seen.methods.lock().unwrap().clone();
    assert!(
        !methods.iter().any(|m| m == "tools/call"),
        "the server never read it, and it was not sent again: {methods:?}"
    );
    // The connection is not lost for all that: the next call goes on a new one.
    let result = client
        .call_tool("t", json!({}))
        .expect("a call on a new connection");
    assert_eq!(result.text(), "ran");
    assert_eq!(seen.connections.load(Ordering::SeqCst), 3);
    client.close();
}
