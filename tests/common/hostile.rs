//! A hostile HTTP/1.1 server on raw sockets, for tests of what the HTTP transports do when a
//! server trickles, stalls, cuts or floods; and counters of the threads and sockets the
//! client leaves behind (through `/proc/self/task` and `/proc/self/fd`).

#![allow(dead_code)] // Each test file uses a different part of this module.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use serde_json::Value;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method, or `""`.
    pub fn rpc_method(&self) -> String {
        self.json()["method"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The JSON-RPC id (`Null` for notifications).
    pub fn rpc_id(&self) -> Value {
        self.json()["id"].clone()
    }
}

/// The server side of one connection, handed to the handler for each request.
pub struct Conn {
    stream: TcpStream,
    stopping: Arc<AtomicBool>,
}

impl Conn {
    /// Writes raw bytes; false once the client is gone.
    pub fn raw(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).is_ok() && self.stream.flush().is_ok()
    }

    /// A complete response with a body of known length.
    pub fn reply(&mut self, status: u16, headers: &[(&str, &str)], content_type: &str, body: &str) {
        let mut head = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        head.push_str(body);
        self.raw(head.as_bytes());
    }

    /// A JSON-RPC result for `request`.
    pub fn result(&mut self, request: &Req, headers: &[(&str, &str)], result: Value) {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": request.rpc_id(), "result": result});
        self.reply(200, headers, "application/json", &body.to_string());
    }

    /// A head announcing `content_length` bytes (or an unframed body when `None`), and no
    /// body yet.
    pub fn head(&mut self, status: u16, content_type: &str, content_length: Option<usize>) -> bool {
        let length = content_length
            .map(|n| format!("content-length: {n}\r\n"))
            .unwrap_or_else(|| "connection: close\r\n".to_owned());
        self.raw(
            format!("HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\n{length}\r\n")
                .as_bytes(),
        )
    }

    /// Sends `bytes` one at a time, one every `every`, until done, the client leaves or the
    /// server stops.
    pub fn trickle(&mut self, bytes: &[u8], every: Duration) {
        for byte in bytes {
            if self.stopping.load(Ordering::SeqCst) || !self.raw(&[*byte]) {
                return;
            }
            std::thread::sleep(every);
        }
    }

    /// Sends `chunk` every `every` for at most `max`, until the client leaves or the server
    /// stops.
    pub fn repeat(&mut self, chunk: &[u8], every: Duration, max: Duration) {
        let until = Instant::now() + max;
        while Instant::now() < until && !self.stopping.load(Ordering::SeqCst) {
            if !self.raw(chunk) {
                return;
            }
            std::thread::sleep(every);
        }
    }

    /// Holds the connection open without a word for at most `max`.
    pub fn hold(&mut self, max: Duration) {
        let until = Instant::now() + max;
        while Instant::now() < until && !self.stopping.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Closes the connection at once.
    pub fn cut(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// Answers what a 2025-11-25 test server answers alike, as `name` with tool support:
/// `initialize` (session `s-1`), notifications (202) and `DELETE`. False for anything else,
/// which the caller answers.
pub fn session(req: &Req, conn: &mut Conn, name: &str) -> bool {
    match (req.method.as_str(), req.rpc_method().as_str()) {
        ("POST", "initialize") => conn.result(
            req,
            &[("mcp-session-id", "s-1")],
            serde_json::json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": name, "version": "0"}
            }),
        ),
        ("POST", method) if method.starts_with("notifications/") => {
            conn.reply(202, &[], "text/plain", "")
        }
        ("DELETE", _) => conn.reply(200, &[], "text/plain", ""),
        _ => return false,
    }
    true
}

type Handler = dyn Fn(&Req, &mut Conn) + Send + Sync;

/// A running server; on drop it stops, cuts every connection and joins its threads.
pub struct Hostile {
    pub url: String,
    pub port: u16,
    stopping: Arc<AtomicBool>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: Option<JoinHandle<()>>,
    seen: Receiver<Req>,
}

/// Starts a server answering each request with `handler` (one thread per connection).
pub fn hostile(handler: impl Fn(&Req, &mut Conn) + Send + Sync + 'static) -> Hostile {
    hostile_on(0, handler)
}

/// [`hostile`] on `port` (0 for any free one): a server restarting where another ran.
pub fn hostile_on(port: u16, handler: impl Fn(&Req, &mut Conn) + Send + Sync + 'static) -> Hostile {
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("address").port();
    let stopping = Arc::new(AtomicBool::new(false));
    let streams: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
    let threads: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
    let (seen_tx, seen) = crossbeam_channel::unbounded();
    let handler: Arc<Handler> = Arc::new(handler);
    let accept = {
        let (stopping, streams, threads) = (stopping.clone(), streams.clone(), threads.clone());
        std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = stream.set_nonblocking(false);
                        if let Ok(clone) = stream.try_clone() {
                            streams.lock().unwrap().push(clone);
                        }
                        let conn = Conn {
                            stream,
                            stopping: stopping.clone(),
                        };
                        let (handler, seen_tx) = (handler.clone(), seen_tx.clone());
                        let thread = std::thread::spawn(move || serve(conn, &*handler, &seen_tx));
                        threads.lock().unwrap().push(thread);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        })
    };
    Hostile {
        url: format!("http://127.0.0.1:{port}/mcp"),
        port,
        stopping,
        streams,
        threads,
        accept: Some(accept),
        seen,
    }
}

/// Reads requests from one connection and hands each to the handler, until the client
/// closes it or the server stops.
fn serve(mut conn: Conn, handler: &Handler, seen: &Sender<Req>) {
    let Ok(read_side) = conn.stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_side);
    while !conn.stopping.load(Ordering::SeqCst) {
        let Some(request) = read_request(&mut reader) else {
            return;
        };
        let _ = seen.send(request.clone());
        handler(&request, &mut conn);
    }
}

fn read_request(reader: &mut impl BufRead) -> Option<Req> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let method = line.split_whitespace().next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Req {
        method,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

impl Hostile {
    /// The next request whose HTTP method is `method`, waiting at most 5 s.
    pub fn next_with_method(&self, method: &str) -> Req {
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let request = self
                .seen
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {method} request arrived"));
            if request.method == method {
                return request;
            }
        }
    }

    /// Every request seen so far.
    pub fn seen(&self) -> Vec<Req> {
        self.seen.try_iter().collect()
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        for stream in self.streams.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        for thread in self.threads.lock().unwrap().drain(..) {
            let _ = thread.join();
        }
    }
}

/// The threads of this process whose name starts with `prefix` (the client names all of
/// its threads `umcp-…`).
pub fn threads_named(prefix: &str) -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        panic!("/proc/self/task is not readable: these tests need Linux");
    };
    tasks
        .filter_map(|task| task.ok())
        .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
        .filter(|name| name.starts_with(prefix))
        .count()
}

/// The open sockets of this process connected to `port` on the loopback: the client's side
/// of its connections to a test server. Found through the socket inodes of
/// `/proc/self/fd`, matched against `/proc/self/net/tcp`.
pub fn sockets_to(port: u16) -> usize {
    let inodes: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd is not readable: these tests need Linux")
        .filter_map(|fd| fd.ok())
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            link.strip_prefix("socket:[")
                .and_then(|rest| rest.strip_suffix(']'))
                .map(str::to_owned)
        })
        .collect();
    let mut count = 0;
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(remote), Some(inode)) = (fields.get(2), fields.get(9)) else {
                continue;
            };
            let remote_port = remote
                .rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if remote_port == Some(port) && inodes.iter().any(|i| i == inode) {
                count += 1;
            }
        }
    }
    count
}

/// Waits at most `within` for `measure` to reach at most `target`; returns the last value.
pub fn settles(measure: impl Fn() -> usize, target: usize, within: Duration) -> usize {
    let until = Instant::now() + within;
    loop {
        let value = measure();
        if value <= target || Instant::now() >= until {
            return value;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
