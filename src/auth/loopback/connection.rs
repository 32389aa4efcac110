//! The loopback listener's connections: reading request heads without waiting, and the
//! small pages that answer them.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The most read of one request's head.
const HEAD_LIMIT: usize = 16 * 1024;
/// How long one connection may take to send its request head; connections are served side
/// by side, so a slow one only loses its own chance.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection to the listener whose request head is still arriving.
pub(super) struct Pending {
    pub(super) stream: TcpStream,
    head: Vec<u8>,
    /// When the connection is dropped if its head is incomplete: [`REQUEST_TIMEOUT`] after it
    /// connected, never past the authorization's deadline.
    deadline: Instant,
}

/// What reading from a pending connection gave.
pub(super) enum Poll {
    /// Nothing new.
    Waiting,
    /// More of the head.
    Progress,
    /// Finished: the target of a complete GET request, or `None` for a connection that
    /// closed, overstayed or sent something else.
    Done(Option<String>),
}

impl Pending {
    pub(super) fn new(stream: TcpStream, total: Option<Instant>) -> Option<Pending> {
        stream.set_nonblocking(true).ok()?;
        let now = Instant::now();
        let own = now.checked_add(REQUEST_TIMEOUT).unwrap_or(now);
        Some(Pending {
            stream,
            head: Vec::new(),
            deadline: total.map_or(own, |t| t.min(own)),
        })
    }

    /// Reads what has arrived, without waiting.
    pub(super) fn poll(&mut self, now: Instant) -> Poll {
        let mut chunk = [0u8; 1024];
        let mut progress = false;
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => return Poll::Done(None),
                Ok(n) => {
                    progress = true;
                    self.head.extend_from_slice(&chunk[..n]);
                    if let Some(done) = complete_target(&self.head) {
                        return Poll::Done(done);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => return Poll::Done(None),
            }
        }
        if now >= self.deadline {
            return Poll::Done(None);
        }
        if progress {
            Poll::Progress
        } else {
            Poll::Waiting
        }
    }
}

/// The verdict on a request head read so far: `None` while it is incomplete (and under
/// [`HEAD_LIMIT`]), `Some(Some(target))` for a complete GET request, `Some(None)` for
/// anything else.
fn complete_target(head: &[u8]) -> Option<Option<String>> {
    if !head.windows(4).any(|w| w == b"\r\n\r\n") {
        return (head.len() >= HEAD_LIMIT).then_some(None);
    }
    let head = String::from_utf8_lossy(head);
    let mut words = head.lines().next().unwrap_or_default().split_whitespace();
    let target = match (words.next(), words.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Some(target.to_owned()),
        _ => None,
    };
    Some(target)
}

/// Writes a small HTML page and closes the connection.
pub(super) fn respond(stream: &mut TcpStream, status: &str, title: &str, text: &str) {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{title}</h1><p>{text}</p></body></html>"
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.flush();
}
