//! A loopback HTTP server for transport tests, on tiny_http: every request is recorded and
//! answered by a handler on its own thread, which may stream an event-stream reply.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use serde_json::Value;

/// A running server; stopped on drop.
pub struct Server {
    server: Arc<tiny_http::Server>,
    stopping: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The base URL, e.g. `http://127.0.0.1:4321`.
    pub base: String,
    seen: Receiver<Seen>,
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// When the request arrived.
    pub at: Instant,
}

impl Seen {
    /// The value of a header (name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method of the body, if any.
    pub fn rpc_method(&self) -> Option<String> {
        self.json()["method"].as_str().map(str::to_owned)
    }

    /// The JSON-RPC id of the body, if any.
    pub fn rpc_id(&self) -> Value {
        self.json()["id"].clone()
    }
}

/// The answer to one request.
pub struct Reply {
    request: tiny_http::Request,
}

impl Reply {
    /// Answers with a body of the given content type.
    pub fn body(self, status: u16, content_type: &str, headers: &[(&str, &str)], body: &str) {
        let mut response = tiny_http::Response::from_string(body)
            .with_status_code(status)
            .with_header(header("Content-Type", content_type));
        for (name, value) in headers {
            response.add_header(header(name, value));
        }
        let _ = self.request.respond(response);
    }

    /// Answers with a JSON body.
    pub fn json(self, status: u16, headers: &[(&str, &str)], body: &str) {
        self.body(status, "application/json", headers, body);
    }

    /// Answers with an empty body.
    pub fn status(self, status: u16, headers: &[(&str, &str)]) {
        let mut response = tiny_http::Response::empty(status);
        for (name, value) in headers {
            response.add_header(header(name, value));
        }
        let _ = self.request.respond(response);
    }

    /// Starts an event-stream reply (chunked, flushed after every write).
    pub fn sse(self, headers: &[(&str, &str)]) -> SseWriter {
        let mut writer = self.request.into_writer();
        let mut head = String::from(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
             Transfer-Encoding: chunked\r\n",
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let _ = writer
            .write_all(head.as_bytes())
            .and_then(|_| writer.flush());
        SseWriter {
            writer: Some(writer),
        }
    }
}

/// An event stream being written; ends (cleanly) on drop.
pub struct SseWriter {
    writer: Option<Box<dyn Write + Send>>,
}

impl SseWriter {
    /// Writes raw event-stream text and flushes it.
    pub fn send(&mut self, raw: &str) -> io::Result<()> {
        let writer = self.writer.as_mut().ok_or(io::ErrorKind::NotConnected)?;
        if raw.is_empty() {
            return Ok(());
        }
        write!(writer, "{:x}\r\n{raw}\r\n", raw.len())?;
        writer.flush()
    }

    /// Writes one `message` event carrying `json`.
    pub fn message(&mut self, json: &str) -> io::Result<()> {
        self.send(&format!("event: message\ndata: {json}\n\n"))
    }

    /// Ends the stream cleanly (the last chunk), as a server closing it does.
    pub fn end(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            let _ = writer.write_all(b"0\r\n\r\n").and_then(|_| writer.flush());
        }
    }
}

impl Drop for SseWriter {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Starts a server whose handler runs on a new thread for every request.
pub fn serve(handler: impl Fn(Seen, Reply) + Send + Sync + 'static) -> Server {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1:0"));
    let port = server.server_addr().to_ip().expect("an IP listener").port();
    let (seen_tx, seen) = crossbeam_channel::unbounded();
    let stopping = Arc::new(AtomicBool::new(false));
    let handler = Arc::new(handler);
    let thread = {
        let server = Arc::clone(&server);
        let stopping = Arc::clone(&stopping);
        std::thread::Builder::new()
            .name("test-http-server".into())
            .spawn(move || accept(&server, &stopping, &seen_tx, handler))
            .expect("spawn the server thread")
    };
    Server {
        server,
        stopping,
        thread: Some(thread),
        base: format!("http://127.0.0.1:{port}"),
        seen,
    }
}

fn accept(
    server: &tiny_http::Server,
    stopping: &AtomicBool,
    seen_tx: &Sender<Seen>,
    handler: Arc<impl Fn(Seen, Reply) + Send + Sync + 'static>,
) {
    loop {
        let mut request = match server.recv() {
            Ok(request) => request,
            Err(_) if stopping.load(Ordering::SeqCst) => return,
            Err(_) => continue,
        };
        let mut body = String::new();
        let _ = request.as_reader().read_to_string(&mut body);
        let seen = Seen {
            method: request.method().as_str().to_owned(),
            path: request.url().to_owned(),
            headers: request
                .headers()
                .iter()
                .map(|h| {
                    (
                        h.field.as_str().as_str().to_ascii_lowercase(),
                        h.value.as_str().to_owned(),
                    )
                })
                .collect(),
            body,
            at: Instant::now(),
        };
        let _ = seen_tx.send(seen.clone());
        let handler = Arc::clone(&handler);
        std::thread::spawn(move || handler(seen, Reply { request }));
    }
}

impl Server {
    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The next request the server saw, waiting up to 5 s.
    pub fn next(&self) -> Seen {
        self.seen
            .recv_timeout(Duration::from_secs(5))
            .expect("the server saw no request within 5 s")
    }

    /// The next request the server saw within `wait`, if any.
    pub fn next_within(&self, wait: Duration) -> Option<Seen> {
        self.seen.recv_timeout(wait).ok()
    }

    /// The next request with the given HTTP method, skipping others, waiting up to 5 s.
    pub fn next_with_method(&self, method: &str) -> Seen {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let seen = self
                .seen
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("the server saw no {method} within 5 s"));
            if seen.method == method {
                return seen;
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}
