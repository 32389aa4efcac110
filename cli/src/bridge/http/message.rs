//! HTTP/1.1 as the bridge serves it: a request's head and body read within bounds, and a
//! response written whole (JSON, or nothing) or as an event stream in chunks.

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;

use umcp::jsonrpc::Message;

use crate::bridge::wire::MAX_MESSAGE_BYTES;

/// The largest request head (request line and headers).
const MAX_HEAD: usize = 64 * 1024;

/// How many headers a request may have.
const MAX_HEADERS: usize = 100;

/// A request read from a host.
pub struct Request {
    pub method: String,
    pub path: String,
    headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the host keeps the connection for another request.
    pub fn keep_alive(&self) -> bool {
        !self
            .header("Connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"))
    }
}

/// Why no request could be read.
pub enum Unread {
    /// The connection ended (or stayed idle past its read timeout) before a request began.
    Ended,
    /// The request is refused with this status.
    Refused(u16),
}

/// Reads the next request of a connection.
pub fn read(input: &mut impl BufRead) -> Result<Request, Unread> {
    let mut head = Vec::new();
    loop {
        let read = input
            .by_ref()
            .take((MAX_HEAD - head.len()) as u64)
            .read_until(b'\n', &mut head);
        match read {
            Ok(0) | Err(_) => return Err(Unread::Ended),
            Ok(_) => {}
        }
        if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
            break;
        }
        if head.len() >= MAX_HEAD {
            return Err(Unread::Refused(431));
        }
        // A blank first line before the request is tolerated.
        if head == b"\r\n" || head == b"\n" {
            head.clear();
        }
    }
    let mut request = parse_head(&head)?;
    if request.header("Transfer-Encoding").is_some() {
        return Err(Unread::Refused(411));
    }
    let length = match request.header("Content-Length") {
        None => 0,
        Some(length) => length
            .trim()
            .parse::<usize>()
            .map_err(|_| Unread::Refused(400))?,
    };
    if length > MAX_MESSAGE_BYTES {
        return Err(Unread::Refused(413));
    }
    let mut body = vec![0u8; length];
    input.read_exact(&mut body).map_err(|_| Unread::Ended)?;
    request.body = body;
    Ok(request)
}

fn parse_head(head: &[u8]) -> Result<Request, Unread> {
    let bad = Unread::Refused(400);
    let text = std::str::from_utf8(head).map_err(|_| Unread::Refused(400))?;
    let mut lines = text.split('\n').map(|l| l.trim_end_matches('\r'));
    let line = lines.next().ok_or(Unread::Refused(400))?;
    let mut words = line.split(' ');
    let (Some(method), Some(path), Some(version)) = (words.next(), words.next(), words.next())
    else {
        return Err(bad);
    };
    if !version.starts_with("HTTP/1.") {
        return Err(Unread::Refused(505));
    }
    let mut headers = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or(Unread::Refused(400))?;
        if headers.len() >= MAX_HEADERS {
            return Err(Unread::Refused(431));
        }
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    Ok(Request {
        method: method.to_owned(),
        path: path.split('?').next().unwrap_or(path).to_owned(),
        headers,
        body: Vec::new(),
    })
}

/// The reason phrase of a status the bridge sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}

/// Writes a whole response: `body` as JSON when given.
pub fn respond(
    out: &mut TcpStream,
    status: u16,
    headers: &[(&str, String)],
    body: Option<&str>,
) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = body.unwrap_or_default();
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    out.write_all(head.as_bytes())?;
    out.write_all(body.as_bytes())?;
    out.flush()
}

/// Starts an event stream: its head; each event then goes in a chunk of its own.
pub fn start_stream(out: &mut TcpStream, headers: &[(&str, String)]) -> std::io::Result<()> {
    let mut head = String::from("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n");
    head.push_str("Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n");
    head.push_str("Transfer-Encoding: chunked\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    out.flush()
}

/// Writes one message as an event of the stream.
pub fn event(out: &mut TcpStream, message: &Message) -> std::io::Result<()> {
    chunk(
        out,
        &format!("event: message\ndata: {}\n\n", message.encode()),
    )
}

/// Writes a comment line, which keeps an idle stream open through proxies.
pub fn keep_alive(out: &mut TcpStream) -> std::io::Result<()> {
    chunk(out, ":\n\n")
}

/// Ends the event stream (the connection stays for another request).
pub fn end_stream(out: &mut TcpStream) -> std::io::Result<()> {
    out.write_all(b"0\r\n\r\n")?;
    out.flush()
}

fn chunk(out: &mut TcpStream, text: &str) -> std::io::Result<()> {
    let framed = format!("{:x}\r\n{text}\r\n", text.len());
    out.write_all(framed.as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Result<Request, Unread> {
        read(&mut std::io::BufReader::new(text.as_bytes()))
    }

    #[test]
    fn a_request_is_read_within_its_bounds() {
        let request = read_text(
            "POST /mcp?x=1 HTTP/1.1\r\nHost: a\r\ncontent-length: 2\r\nConnection: close\r\n\r\n{}",
        )
        .ok()
        .unwrap();
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/mcp")
        );
        assert_eq!(request.header("CONTENT-LENGTH"), Some("2"));
        assert_eq!(request.body, b"{}");
        assert!(!request.keep_alive());
        let huge = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_MESSAGE_BYTES + 1
        );
        assert!(matches!(read_text(&huge), Err(Unread::Refused(413))));
        let chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(matches!(read_text(chunked), Err(Unread::Refused(411))));
        assert!(matches!(read_text(""), Err(Unread::Ended)));
        assert!(matches!(
            read_text("GET / SPDY/3\r\n\r\n"),
            Err(Unread::Refused(505))
        ));
        let long = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert!(matches!(read_text(&long), Err(Unread::Refused(431))));
    }
}
