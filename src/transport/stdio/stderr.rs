//! The stderr drain: every line to the log, the optional callback and a bounded tail.

use std::collections::VecDeque;
use std::io::{BufReader, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use super::lines::{Line, LineReader};
use super::transport::lock;
use super::{StderrCallback, STDERR_LINE_MAX_BYTES, STDERR_TAIL_MAX_BYTES};

/// The log target of server stderr lines.
const TARGET: &str = "umcp::server_stderr";

/// The last lines a server wrote to stderr, bounded in lines and bytes.
#[derive(Debug)]
pub(super) struct Tail {
    lines: VecDeque<String>,
    bytes: usize,
    max_lines: usize,
}

impl Tail {
    /// An empty tail keeping at most `max_lines` lines.
    pub(super) fn new(max_lines: usize) -> Tail {
        Tail {
            lines: VecDeque::new(),
            bytes: 0,
            max_lines,
        }
    }

    /// Adds a line, dropping the oldest ones beyond the bounds.
    pub(super) fn push(&mut self, line: &str) {
        if self.max_lines == 0 {
            return;
        }
        self.lines.push_back(line.to_owned());
        self.bytes += line.len();
        while self.lines.len() > self.max_lines
            || (self.bytes > STDERR_TAIL_MAX_BYTES && self.lines.len() > 1)
        {
            if let Some(old) = self.lines.pop_front() {
                self.bytes -= old.len();
            }
        }
    }

    /// The kept lines, each ending in a newline.
    pub(super) fn text(&self) -> String {
        let mut text = String::with_capacity(self.bytes + self.lines.len());
        for line in &self.lines {
            text.push_str(line);
            text.push('\n');
        }
        text
    }
}

/// Reads `stderr` until it ends, so the server never blocks on a full pipe.
pub(super) fn run(
    stderr: impl Read,
    tail: &Mutex<Tail>,
    callback: Option<&StderrCallback>,
    label: &str,
) {
    let mut lines = LineReader::new(
        BufReader::with_capacity(16 << 10, stderr),
        STDERR_LINE_MAX_BYTES,
    );
    loop {
        let text = match lines.next_line() {
            Ok(Some(Line::Complete(bytes))) => String::from_utf8_lossy(bytes).into_owned(),
            Ok(Some(Line::Oversized(head))) => format!("{} […]", String::from_utf8_lossy(head)),
            Ok(None) => break,
            Err(e) => {
                log::debug!("{label}: reading stderr failed: {e}");
                break;
            }
        };
        let text = text.strip_suffix('\r').unwrap_or(&text);
        log::debug!(target: TARGET, "{label}: {text}");
        if let Some(callback) = callback {
            // A panicking callback must not end the drain, or the server would block.
            if catch_unwind(AssertUnwindSafe(|| callback(text))).is_err() {
                log::debug!("{label}: the stderr callback panicked");
            }
        }
        lock(tail).push(text);
    }
    log::debug!("{label}: stderr ended");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines_within_bounds() {
        let mut tail = Tail::new(3);
        for line in ["a", "b", "c", "d"] {
            tail.push(line);
        }
        assert_eq!(tail.text(), "b\nc\nd\n");

        let mut tail = Tail::new(100);
        let long = "x".repeat(STDERR_LINE_MAX_BYTES);
        for _ in 0..10 {
            tail.push(&long);
        }
        tail.push("last");
        assert!(tail.text().len() <= STDERR_TAIL_MAX_BYTES + 100);
        assert!(tail.text().ends_with("last\n"));

        let mut none = Tail::new(0);
        none.push("a");
        assert_eq!(none.text(), "");
    }

    #[test]
    fn drains_and_cuts_long_lines() {
        let input = format!("one\r\n{}\ntwo", "y".repeat(STDERR_LINE_MAX_BYTES * 3));
        let tail = Mutex::new(Tail::new(10));
        let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let callback: StderrCallback = std::sync::Arc::new(move |line: &str| {
            lock(&sink).push(line.len());
            if line == "two" {
                panic!("callbacks may panic");
            }
        });
        run(input.as_bytes(), &tail, Some(&callback), "test");
        assert_eq!(
            *lock(&seen),
            vec![3, STDERR_LINE_MAX_BYTES + " […]".len(), 3]
        );
        assert!(lock(&tail).text().starts_with("one\nyyy"));
        assert!(lock(&tail).text().ends_with(" […]\ntwo\n"));
    }
}
