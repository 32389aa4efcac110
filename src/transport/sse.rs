//! A reader for `text/event-stream` bodies (Server-Sent Events), with no I/O of its own.
//!
//! [`SseReader`] turns any [`BufRead`] into an iterator of [`Event`]s, following the parsing
//! rules of the HTML standard's event-stream format: `\r\n`, `\n` and `\r` line endings, one
//! leading byte-order mark, `:` comments, multi-line `data` joined with `\n`, `id` values with
//! NUL ignored and `retry` values that are not all digits ignored.
//!
//! Two choices go beyond the standard, both for streaming JSON-RPC:
//! - Events whose `data` is empty are still yielded when they carry an `id` or `retry` (the
//!   "priming" events of MCP servers), so the caller can record where to resume and how long
//!   to wait. Callers skip them as messages.
//! - Every event is capped in size ([`DEFAULT_MAX_EVENT_SIZE`] unless set otherwise). Lines
//!   are read one at a time and never buffered beyond the cap; an oversized event yields
//!   [`SseError::EventTooLarge`], its remaining bytes are skipped, and reading can go on.
//!
//! A final event that ends with a complete line but no blank line is still delivered at end
//! of stream; a final line cut off without a line ending is discarded as truncated.
//!
//! ```
//! use std::time::Duration;
//! use umcp::transport::sse::SseReader;
//!
//! let body = "id: 7\nretry: 500\ndata:\n\n: keep-alive\nevent: message\ndata: {\"a\":\ndata: 1}\n\n";
//! let mut reader = SseReader::new(body.as_bytes());
//!
//! let priming = reader.next().unwrap().unwrap();
//! assert!(priming.data.is_empty());
//! assert_eq!(priming.retry, Some(Duration::from_millis(500)));
//! assert_eq!(reader.last_event_id(), Some("7"));
//!
//! let message = reader.next().unwrap().unwrap();
//! assert!(message.is_message());
//! assert_eq!(message.data, "{\"a\":\n1}");
//! assert!(reader.next().is_none());
//! ```

use std::fmt;
use std::io::{self, BufRead};
use std::time::Duration;

/// The event size limit used by [`SseReader::new`]: 16 MiB.
///
/// See the example in the [`transport::sse`](crate::transport::sse) module.
pub const DEFAULT_MAX_EVENT_SIZE: usize = 16 * 1024 * 1024;

/// One dispatched event.
///
/// See the example in the [`transport::sse`](crate::transport::sse) module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event` field (the event type); `None` when absent or empty, which means `message`.
    pub event: Option<String>,
    /// The `data` lines joined with `\n`; empty for priming and keep-alive events.
    pub data: String,
    /// The `id` field of this event, when it had one; `Some("")` resets the last event id.
    /// [`SseReader::last_event_id`] tracks the id to resume from.
    pub id: Option<String>,
    /// The `retry` field of this event: how long to wait before reconnecting.
    pub retry: Option<Duration>,
}

impl Event {
    /// True when this event is of type `message` (explicitly or by default).
    ///
    /// See the example in the [`transport::sse`](crate::transport::sse) module.
    pub fn is_message(&self) -> bool {
        matches!(self.event.as_deref(), None | Some("message"))
    }
}

/// Why an event could not be read.
///
/// See the example in the [`transport::sse`](crate::transport::sse) module.
#[derive(Debug)]
#[non_exhaustive]
pub enum SseError {
    /// Reading the underlying stream failed; the reader yields nothing after this.
    Io(io::Error),
    /// An event was larger than the limit; its remaining bytes are skipped and the next
    /// call to `next` continues with the following event.
    EventTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SseError::Io(e) => write!(f, "reading the event stream failed: {e}"),
            SseError::EventTooLarge { limit } => {
                write!(f, "event larger than the limit of {limit} bytes")
            }
        }
    }
}

impl std::error::Error for SseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SseError::Io(e) => Some(e),
            SseError::EventTooLarge { .. } => None,
        }
    }
}

/// Reads [`Event`]s from a byte stream; see the [module docs](self).
///
/// See the example in the [`transport::sse`](crate::transport::sse) module.
#[derive(Debug)]
pub struct SseReader<R> {
    inner: R,
    max_event_size: usize,
    /// The bytes of the line being read, without its line ending.
    line: Vec<u8>,
    /// The event being assembled.
    pending: Event,
    /// Whether `pending` has any field set (a data line counts even when empty).
    pending_used: bool,
    /// Bytes taken by the fields of `pending` so far, counted against the limit.
    pending_bytes: usize,
    last_event_id: Option<String>,
    /// The previous line ended with `\r`: a `\n` right after it belongs to that line ending.
    skip_lf: bool,
    at_start: bool,
    /// An oversized event is being skipped up to its terminating blank line.
    discarding: bool,
    /// The oversized part was in the middle of a line, so the next line read is its rest.
    discard_mid_line: bool,
    done: bool,
}

/// How a call to `read_line` ended.
enum Line {
    /// A line with its line ending, and the length of the line without it.
    Complete(usize),
    /// End of stream with a partial line (no line ending).
    Truncated,
    /// End of stream at a line boundary.
    Eof,
    /// The line grew past the limit; its start was dropped.
    TooLong,
}

impl<R: BufRead> SseReader<R> {
    /// A reader with the [`DEFAULT_MAX_EVENT_SIZE`] limit.
    ///
    /// See the example in the [`transport::sse`](crate::transport::sse) module.
    pub fn new(inner: R) -> SseReader<R> {
        SseReader::with_max_event_size(inner, DEFAULT_MAX_EVENT_SIZE)
    }

    /// A reader that refuses events larger than `max_event_size` bytes.
    ///
    /// See the example in the [`transport::sse`](crate::transport::sse) module.
    pub fn with_max_event_size(inner: R, max_event_size: usize) -> SseReader<R> {
        SseReader {
            inner,
            max_event_size: max_event_size.max(1),
            line: Vec::new(),
            pending: Event::default(),
            pending_used: false,
            pending_bytes: 0,
            last_event_id: None,
            skip_lf: false,
            at_start: true,
            discarding: false,
            discard_mid_line: false,
            done: false,
        }
    }

    /// The last event id seen on this stream (the value to send as `Last-Event-ID` when
    /// reconnecting), or `None` if there was none or the server reset it.
    ///
    /// See the example in the [`transport::sse`](crate::transport::sse) module.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The underlying reader.
    ///
    /// See the example in the [`transport::sse`](crate::transport::sse) module.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Reads one line into `self.line`. When `store` is false the bytes are dropped, which
    /// skips the rest of an oversized event in constant memory.
    fn read_line(&mut self, store: bool) -> io::Result<Line> {
        self.line.clear();
        let limit = self.max_event_size.saturating_sub(self.pending_bytes);
        let mut seen = 0usize;
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(if seen > 0 { Line::Truncated } else { Line::Eof });
            }
            if self.skip_lf {
                self.skip_lf = false;
                if buf[0] == b'\n' {
                    self.inner.consume(1);
                    continue;
                }
            }
            let end = buf.iter().position(|&b| b == b'\n' || b == b'\r');
            let take = end.unwrap_or(buf.len());
            if store {
                if self.line.len() + take > limit {
                    self.inner.consume(take);
                    self.line.clear();
                    return Ok(Line::TooLong);
                }
                self.line.extend_from_slice(&buf[..take]);
            }
            seen += take;
            match end {
                Some(i) => {
                    self.skip_lf = buf[i] == b'\r';
                    self.inner.consume(i + 1);
                    return Ok(Line::Complete(seen));
                }
                None => self.inner.consume(take),
            }
        }
    }

    /// Applies one complete line to the pending event; returns the event when the line
    /// dispatches it.
    fn process_line(&mut self, first: bool) -> Option<Event> {
        // Only a byte-order mark at the very start of the stream is dropped.
        if first && self.line.starts_with("\u{feff}".as_bytes()) {
            self.line.drain(..3);
        }
        if self.line.is_empty() {
            return self.dispatch();
        }
        if self.line[0] == b':' {
            return None;
        }
        let line = String::from_utf8_lossy(&self.line);
        let (field, value) = match line.find(':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (&line[..], ""),
        };
        match field {
            "event" => {
                self.pending.event = Some(value.to_owned()).filter(|v| !v.is_empty());
            }
            "data" => {
                self.pending.data.push_str(value);
                self.pending.data.push('\n');
            }
            "id" if !value.contains('\0') => {
                self.pending.id = Some(value.to_owned());
                self.last_event_id = Some(value.to_owned()).filter(|v| !v.is_empty());
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // Digits only, so parsing fails only on overflow; such a value is ignored,
                // as if the line were not there.
                match value.parse::<u64>() {
                    Ok(ms) => self.pending.retry = Some(Duration::from_millis(ms)),
                    Err(_) => return None,
                }
            }
            _ => return None,
        }
        self.pending_used = true;
        // The decoded length: each invalid byte became a three-byte U+FFFD, so the raw
        // length, which `read_line` checked, can be a third of what the event now holds.
        self.pending_bytes = self.pending_bytes.saturating_add(line.len());
        None
    }

    /// Ends the pending event at a blank line (or end of stream).
    fn dispatch(&mut self) -> Option<Event> {
        let mut event = std::mem::take(&mut self.pending);
        let used = std::mem::replace(&mut self.pending_used, false);
        self.pending_bytes = 0;
        if event.data.ends_with('\n') {
            event.data.pop();
        }
        used.then_some(event)
    }

    /// Drops the pending event and skips input up to the blank line that ends it.
    fn start_discarding(&mut self, mid_line: bool) -> SseError {
        self.pending = Event::default();
        self.pending_used = false;
        self.pending_bytes = 0;
        self.discarding = true;
        self.discard_mid_line = mid_line;
        SseError::EventTooLarge {
            limit: self.max_event_size,
        }
    }

    fn next_event(&mut self) -> Result<Option<Event>, SseError> {
        loop {
            let line = self.read_line(!self.discarding).map_err(SseError::Io)?;
            let first = std::mem::replace(&mut self.at_start, false);
            if self.discarding {
                match line {
                    Line::Eof | Line::Truncated => return Ok(None),
                    Line::Complete(len) => {
                        // The first line read after the limit was hit mid-line is the rest
                        // of that line, never the blank line that ends the event.
                        let rest_of_line = std::mem::replace(&mut self.discard_mid_line, false);
                        if len == 0 && !rest_of_line {
                            self.discarding = false;
                        }
                    }
                    Line::TooLong => {}
                }
                continue;
            }
            match line {
                Line::Complete(_) => {
                    if let Some(event) = self.process_line(first) {
                        return Ok(Some(event));
                    }
                    if self.pending_bytes > self.max_event_size {
                        return Err(self.start_discarding(false));
                    }
                }
                Line::Eof => return Ok(self.dispatch()),
                Line::Truncated => {
                    log::debug!("event stream ended in the middle of a line; dropping the event");
                    return Ok(None);
                }
                Line::TooLong => return Err(self.start_discarding(true)),
            }
        }
    }
}

impl<R: BufRead> Iterator for SseReader<R> {
    type Item = Result<Event, SseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_event() {
            Ok(Some(event)) => Some(Ok(event)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(SseError::Io(e)) => {
                self.done = true;
                Some(Err(SseError::Io(e)))
            }
            Err(e) => Some(Err(e)),
        }
    }
}

#[cfg(test)]
mod tests;
