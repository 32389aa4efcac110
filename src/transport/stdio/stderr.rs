//! The stderr drain: every line to the log, the optional callback and a bounded tail.
//!
//! The callback runs on a thread of its own, fed by a queue of at most [`CALLBACK_BACKLOG`]
//! lines: the drain never waits for it, so a slow or blocked callback can never leave the
//! server stuck on a full stderr pipe. When the callback falls that far behind, new lines
//! skip it (they still reach the log and the tail) and the drain logs how many did.

use std::collections::VecDeque;
use std::io::{BufReader, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use crossbeam_channel::{Receiver, Sender, TrySendError};

use super::lines::{Line, LineReader};
use super::{StderrCallback, STDERR_LINE_MAX_BYTES, STDERR_TAIL_MAX_BYTES};
use crate::sync::lock;

/// The log target of server stderr lines.
const TARGET: &str = "umcp::server_stderr";

/// How many lines may wait for the stderr callback: with lines of at most
/// [`STDERR_LINE_MAX_BYTES`], at most 4 MiB.
pub(super) const CALLBACK_BACKLOG: usize = 1024;

/// The queue from the drain to the callback's thread.
pub(super) fn callback_queue() -> (Sender<String>, Receiver<String>) {
    crossbeam_channel::bounded(CALLBACK_BACKLOG)
}

/// The callback's thread: calls `callback` with each queued line until the drain ends. A
/// panic is caught and logged, and the next line is passed as usual.
pub(super) fn run_callback(lines: &Receiver<String>, callback: &StderrCallback, label: &str) {
    for line in lines {
        if catch_unwind(AssertUnwindSafe(|| callback(&line))).is_err() {
            log::debug!("{label}: the stderr callback panicked");
        }
    }
}

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
    callback: Option<Sender<String>>,
    label: &str,
) {
    // Lines the callback missed since it last kept up.
    let mut skipped = 0u64;
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
        if let Some(queue) = &callback {
            match queue.try_send(text.to_owned()) {
                Ok(()) if skipped > 0 => {
                    log::debug!("{label}: the stderr callback skipped {skipped} lines");
                    skipped = 0;
                }
                Ok(()) | Err(TrySendError::Disconnected(_)) => {}
                Err(TrySendError::Full(_)) => skipped += 1,
            }
        }
        lock(tail).push(text);
    }
    if skipped > 0 {
        log::debug!("{label}: the stderr callback skipped {skipped} lines");
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
            if line.len() == 3 {
                panic!("callbacks may panic");
            }
        });
        let (queue, lines) = callback_queue();
        run(input.as_bytes(), &tail, Some(queue), "test");
        run_callback(&lines, &callback, "test");
        assert_eq!(
            *lock(&seen),
            vec![3, STDERR_LINE_MAX_BYTES + " […]".len(), 3]
        );
        assert!(lock(&tail).text().starts_with("one\nyyy"));
        assert!(lock(&tail).text().ends_with(" […]\ntwo\n"));
    }

    #[test]
    fn a_stuck_callback_never_holds_the_drain() {
        let input = "line\n".repeat(CALLBACK_BACKLOG * 3);
        let tail = Mutex::new(Tail::new(1));
        // Nobody takes lines from the queue, as when the callback blocks: the drain still
        // reads to the end, and the queue holds its bound.
        let (queue, lines) = callback_queue();
        run(input.as_bytes(), &tail, Some(queue), "test");
        assert_eq!(lines.len(), CALLBACK_BACKLOG);
        assert_eq!(lock(&tail).text(), "line\n");
    }
}
