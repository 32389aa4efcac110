//! The stdout reader: newline-delimited JSON-RPC from the server into the inbox.

use std::io::{BufReader, Read};
use std::sync::atomic::Ordering;

use super::lines::{Line, LineReader, HEAD};
use super::shared::Shared;
use crate::error::Error;
use crate::jsonrpc::RequestId;
use crate::sync::lock;

/// How much of a skipped line is shown in the debug log.
const PREVIEW_CHARS: usize = 200;

/// Reads messages from `stdout` into the inbox until it ends. A bad line is logged and skipped,
/// never ending the connection; an oversized one fails the request it names, if any.
pub(super) fn run(stdout: impl Read, shared: &Shared, limit: usize, label: &str) {
    // One byte more is read, for the `\r` of a CRLF line ending, which the limit leaves out
    // like the `\n`.
    let mut lines = LineReader::new(
        BufReader::with_capacity(64 << 10, stdout),
        limit.saturating_add(1),
    );
    let mut oversized = 0u64;
    loop {
        let line = match lines.next_line() {
            Ok(Some(Line::Complete(bytes)))
                if bytes.len() > limit && bytes.last() != Some(&b'\r') =>
            {
                Ok(Some(Line::Oversized(&bytes[..HEAD.min(limit)])))
            }
            other => other,
        };
        let line = match line {
            Ok(Some(line)) => line,
            Ok(None) => {
                log::debug!("{label}: stdout ended");
                return;
            }
            Err(e) => {
                log::debug!("{label}: reading stdout failed: {e}");
                return;
            }
        };
        let listening = match line {
            Line::Complete(bytes) => deliver(bytes, shared, label),
            Line::Oversized(head) => {
                oversized += 1;
                let id = response_id(head);
                log::debug!(
                    "{label}: skipped a message over the limit of {limit} bytes \
                     ({oversized} so far), answering {}",
                    id.as_ref()
                        .map_or("no known request".to_owned(), |id| format!("request {id}")),
                );
                match id {
                    Some(id) => {
                        shared.deliver(|inbox| inbox.fail(id, Error::MessageTooLarge { limit }))
                    }
                    None => true,
                }
            }
        };
        if !listening {
            log::debug!("{label}: the connection is over; the reader stops");
            return;
        }
    }
}

/// Decodes one line and delivers what it holds; `false` when nobody listens any more.
fn deliver(bytes: &[u8], shared: &Shared, label: &str) -> bool {
    // A UTF-8 byte order mark is no part of JSON (RFC 8259 lets a reader ignore it), and a
    // UTF-8 writer may put one at the start of the output.
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let Ok(text) = std::str::from_utf8(bytes) else {
        log::debug!(
            "{label}: skipped a line that is not UTF-8 ({} bytes)",
            bytes.len()
        );
        return unreadable(bytes, "it is not UTF-8", shared).unwrap_or_else(|| {
            noise(
                shared,
                &format!("a line that is not UTF-8 ({} bytes)", bytes.len()),
            );
            true
        });
    };
    let text = text.trim();
    if text.is_empty() {
        return true;
    }
    log::trace!("< {text}");
    shared.deliver(|inbox| match inbox.deliver_text(text) {
        Ok(listening) => listening,
        Err(e) => {
            log::debug!(
                "{label}: skipped a line that is not a message ({e}): {}",
                preview(text)
            );
            unreadable(text.as_bytes(), &e.to_string(), shared).unwrap_or_else(|| {
                noise(shared, preview(text));
                true
            })
        }
    })
}

/// Fails the request an unreadable line answers, so its caller need not wait for its deadline.
/// `None` when it names none: `{"id":5}` alone is no response and must not settle a request.
fn unreadable(bytes: &[u8], why: &str, shared: &Shared) -> Option<bool> {
    let id = response_id(bytes)?;
    let error = Error::Protocol(format!("the response to request {id} is unreadable: {why}"));
    Some(shared.deliver(|inbox| inbox.fail(id, error)))
}

/// How many of the lines on stdout that are not JSON-RPC go into the stderr tail.
const NOISE_IN_TAIL: u64 = 3;

/// Notes a line on stdout that is not JSON-RPC. The first few join the stderr tail that
/// errors carry, marked: a server printing a banner or its logs on stdout (a common mistake)
/// then shows it in the timeout or the closed connection it causes, not only in debug logs.
fn noise(shared: &Shared, line: &str) {
    if shared.stdout_noise.fetch_add(1, Ordering::Relaxed) < NOISE_IN_TAIL {
        lock(&shared.tail).push(&format!("[stdout, not JSON-RPC] {line}"));
    }
}

/// The start of `text`, for logs.
fn preview(text: &str) -> &str {
    match text.char_indices().nth(PREVIEW_CHARS) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// The id of the response `head` (the start of a JSON object) begins, if it tells: top-level
/// members only, and only beside `result` or `error` (a server's request has ids of its own).
fn response_id(head: &[u8]) -> Option<RequestId> {
    let head = scan_head(head)?;
    head.id.filter(|_| head.response && !head.request)
}

/// What the top-level members of a JSON object tell of the message it is.
struct Head {
    id: Option<RequestId>,
    /// A `result` or `error` member.
    response: bool,
    /// A `method` member.
    request: bool,
}

/// Reads the top-level members of the (possibly truncated) JSON object `head` begins with.
fn scan_head(head: &[u8]) -> Option<Head> {
    let mut scan = Scanner { text: head, pos: 0 };
    scan.skip_ws();
    if !scan.eat(b'{') {
        return None;
    }
    let (mut id, mut response, mut request) = (None, false, false);
    // The head ends somewhere inside the object; stop quietly wherever that is.
    let _ = (|| -> Option<()> {
        loop {
            scan.skip_ws();
            let key = scan.string()?;
            scan.skip_ws();
            if !scan.eat(b':') {
                return None;
            }
            scan.skip_ws();
            match key {
                b"id" => id = Some(scan.id()?),
                b"result" | b"error" => {
                    response = true;
                    scan.value()?;
                }
                b"method" => {
                    request = true;
                    scan.value()?;
                }
                _ => scan.value()?,
            }
            scan.skip_ws();
            if !scan.eat(b',') {
                return None;
            }
        }
    })();
    Some(Head {
        id,
        response,
        request,
    })
}

/// A cursor over the bytes of a possibly truncated JSON text. Each method returns `None` when
/// the text ends or does not fit.
struct Scanner<'a> {
    text: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.pos += 1;
        }
    }

    /// A string, returned raw (quotes removed, escapes left as they are).
    fn string(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.pos;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => break,
                _ => self.pos += 1,
            }
        }
        let raw = self.text.get(start..self.pos)?;
        self.pos += 1;
        Some(raw)
    }

    /// An id: an integer, or a string. A number must be followed by something, or it may
    /// have been cut.
    fn id(&mut self) -> Option<RequestId> {
        if self.peek()? == b'"' {
            let start = self.pos;
            self.string()?;
            let quoted = std::str::from_utf8(&self.text[start..self.pos]).ok()?;
            return serde_json::from_str::<String>(quoted)
                .ok()
                .map(RequestId::from);
        }
        let start = self.pos;
        self.eat(b'-');
        while self.peek()?.is_ascii_digit() {
            self.pos += 1;
        }
        if !matches!(self.peek()?, b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n') {
            return None;
        }
        let digits = std::str::from_utf8(&self.text[start..self.pos]).ok()?;
        digits.parse::<i64>().ok().map(RequestId::from)
    }

    /// Skips any value: a string, an object or array (by bracket depth), or a scalar.
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while !matches!(
                    self.peek()?,
                    b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'
                ) {
                    self.pos += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(head: &str) -> Option<RequestId> {
        response_id(head.as_bytes())
    }

    #[test]
    fn finds_the_id_of_a_cut_response() {
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"te"#),
            Some(7.into())
        );
        assert_eq!(id(r#"{ "id" : -3 , "result" : "aaaa"#), Some((-3).into()));
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":"a\"b","error":{"#),
            Some("a\"b".into())
        );
        let nested = r#"{"jsonrpc":"2.0","result":{"id":5},"id":8,"x":"#;
        assert_eq!(id(nested), Some(8.into()));
    }

    #[test]
    fn declines_when_it_cannot_tell() {
        // The id comes after the cut, or only nested ids are seen.
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","result":{"id":5,"content":"xx"#),
            None
        );
        // A number at the very end may have been cut.
        assert_eq!(id(r#"{"jsonrpc":"2.0","result":1,"id":12"#), None);
        // Requests and notifications from the server are not responses.
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":"#),
            None
        );
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":1,"params":{},"method":"x","result":"#),
            None
        );
        // No result or error seen yet.
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":4,"params":{"a":"#), None);
        assert_eq!(id(r#"[{"jsonrpc":"2.0","id":1,"result":"#), None);
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":1.5,"result":"#), None);
        assert_eq!(id(r#"{"id":99999999999999999999999,"result":"#), None);
    }

    #[test]
    fn preview_cuts_on_char_boundaries() {
        let long = "é".repeat(300);
        assert_eq!(preview(&long).chars().count(), PREVIEW_CHARS);
        assert_eq!(preview("short"), "short");
    }
}
