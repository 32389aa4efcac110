//! Reading newline-terminated lines with a bound on how much of one line is held in memory.

use std::io::{self, BufRead, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One line as read by [`LineReader`], without its newline.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line<'a> {
    /// A whole line within the limit.
    Complete(&'a [u8]),
    /// The first bytes (at most [`HEAD`], and at most the limit) of a line longer than the limit;
    /// the rest is skipped by the next read.
    Oversized(&'a [u8]),
}

/// Splits a byte stream into lines, buffering at most `limit` bytes of one: past it only [`HEAD`]
/// bytes are kept and the rest is skipped as it arrives.
pub(super) struct LineReader<R> {
    inner: R,
    limit: usize,
    buf: Vec<u8>,
    /// The reader is in the middle of an oversized line and must skip to its end first.
    skipping: bool,
}

/// How much of an oversized line is kept (to find the request it answers).
pub(super) const HEAD: usize = 4 << 10;

/// Above this capacity the line buffer is released after use, so one huge message does not
/// pin its memory for the life of the connection.
const KEEP_CAPACITY: usize = 1 << 20;

impl<R: BufRead> LineReader<R> {
    /// A reader of lines of at most `limit` bytes.
    pub(super) fn new(inner: R, limit: usize) -> LineReader<R> {
        LineReader {
            inner,
            limit,
            buf: Vec::new(),
            skipping: false,
        }
    }

    /// The next line, or `None` at the end. An unterminated last line is a line; an oversized one
    /// is returned as soon as it passes the limit.
    pub(super) fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        if self.buf.capacity() > KEEP_CAPACITY {
            self.buf = Vec::new();
        }
        self.buf.clear();
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                if self.skipping || self.buf.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Line::Complete(&self.buf)));
            }
            let newline = chunk.iter().position(|&b| b == b'\n');
            let part = newline.unwrap_or(chunk.len());
            let consumed = newline.map_or(part, |i| i + 1);
            if self.skipping {
                self.inner.consume(consumed);
                self.skipping = newline.is_none();
                continue;
            }
            let room = self.limit.saturating_sub(self.buf.len());
            if part > room {
                let head = HEAD.min(self.limit);
                let keep = head.saturating_sub(self.buf.len()).min(part);
                self.buf.extend_from_slice(&chunk[..keep]);
                self.inner.consume(consumed);
                self.skipping = newline.is_none();
                // Let go of the line at once: only its head is kept, and the rest of it is
                // skipped as it arrives, without being held.
                self.buf.truncate(head);
                self.buf.shrink_to(head);
                return Ok(Some(Line::Oversized(&self.buf)));
            }
            // Grow by doubling, but never past the limit: a line just under the limit holds no
            // more than the limit.
            let wanted = self.buf.len() + part;
            if wanted > self.buf.capacity() {
                let target = wanted.max(self.buf.capacity() * 2).min(self.limit);
                self.buf.reserve_exact(target.max(wanted) - self.buf.len());
            }
            self.buf.extend_from_slice(&chunk[..part]);
            self.inner.consume(consumed);
            if newline.is_some() {
                return Ok(Some(Line::Complete(&self.buf)));
            }
        }
    }
}

/// What a thread reading a pipe is doing, so that the monitor can tell a reader that is still
/// busy with what the server wrote from one waiting on a pipe that something else holds open.
#[derive(Debug, Default)]
pub(super) struct Activity {
    waiting: AtomicBool,
    bytes: AtomicU64,
}

impl Activity {
    /// Whether the reader waits for data, and how many bytes it has read so far.
    pub(super) fn get(&self) -> (bool, u64) {
        (
            self.waiting.load(Ordering::Acquire),
            self.bytes.load(Ordering::Acquire),
        )
    }
}

/// A pipe that records its reader's [`Activity`].
pub(super) struct Watched<'a, R> {
    inner: R,
    activity: &'a Activity,
}

impl<'a, R: Read> Watched<'a, R> {
    /// Wraps `inner`, recording into `activity`.
    pub(super) fn new(inner: R, activity: &'a Activity) -> Watched<'a, R> {
        Watched { inner, activity }
    }
}

impl<R: Read> Read for Watched<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.activity.waiting.store(true, Ordering::Release);
        let result = self.inner.read(buf);
        if let Ok(n) = result {
            self.activity.bytes.fetch_add(n as u64, Ordering::AcqRel);
        }
        self.activity.waiting.store(false, Ordering::Release);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads all lines of `input` through a buffer of `chunk` bytes, as owned values.
    fn read_all(input: &[u8], limit: usize, chunk: usize) -> Vec<(bool, Vec<u8>)> {
        let mut reader = LineReader::new(io::BufReader::with_capacity(chunk, input), limit);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(match line {
                Line::Complete(l) => (true, l.to_vec()),
                Line::Oversized(l) => (false, l.to_vec()),
            });
        }
        out
    }

    #[test]
    fn splits_lines_across_chunk_boundaries() {
        for chunk in [1, 2, 3, 7, 64] {
            let lines = read_all(b"ab\n\ncdef\ngh", 8, chunk);
            let expected = vec![
                (true, b"ab".to_vec()),
                (true, Vec::new()),
                (true, b"cdef".to_vec()),
                (true, b"gh".to_vec()),
            ];
            assert_eq!(lines, expected, "chunk {chunk}");
        }
    }

    #[test]
    fn an_oversized_line_is_let_go_of_at_once() {
        let limit = 1 << 20;
        let mut input = vec![b'x'; 3 << 20];
        input.extend_from_slice(b"\nok\n");
        let mut reader = LineReader::new(io::BufReader::with_capacity(64 << 10, &input[..]), limit);
        match reader.next_line().unwrap() {
            Some(Line::Oversized(head)) => assert_eq!(head.len(), HEAD),
            other => panic!("{other:?}"),
        }
        // Only the head is held while the rest of the line is skipped.
        assert!(reader.buf.capacity() <= HEAD, "{}", reader.buf.capacity());
        assert_eq!(reader.next_line().unwrap(), Some(Line::Complete(b"ok")));
        // A line within the limit never makes the buffer grow past the limit.
        let mut big = vec![b'y'; limit - 10];
        big.push(b'\n');
        let mut reader = LineReader::new(io::BufReader::with_capacity(4096, &big[..]), limit);
        assert!(matches!(
            reader.next_line().unwrap(),
            Some(Line::Complete(_))
        ));
        assert!(reader.buf.capacity() <= limit, "{}", reader.buf.capacity());
    }

    #[test]
    fn cuts_oversized_lines_and_resumes_after_them() {
        for chunk in [1, 3, 5, 64] {
            let lines = read_all(b"abcd\nabcdefghij\nxy\nabcde", 4, chunk);
            let expected = vec![
                (true, b"abcd".to_vec()),
                (false, b"abcd".to_vec()),
                (true, b"xy".to_vec()),
                (false, b"abcd".to_vec()),
            ];
            assert_eq!(lines, expected, "chunk {chunk}");
        }
    }
}

#[cfg(test)]
#[path = "../../../tests/fuzz/internal/lines.rs"]
mod fuzz;
