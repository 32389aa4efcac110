//! Every log line of a test binary, captured at trace level, for the tests of what umcp logs.

#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::sync::{Mutex, Once};

/// The captured lines, `target message` each, in the order they were logged.
static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Every log line of this test binary so far. The first call installs the logger, so call it
/// (or [`capture_logs`]) before the lines to be checked are written.
pub fn logs() -> &'static Mutex<Vec<String>> {
    capture_logs();
    &LINES
}

/// Installs the capturing logger at trace level, once per test binary.
pub fn capture_logs() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        let _ = log::set_boxed_logger(Box::new(Capture));
        log::set_max_level(log::LevelFilter::Trace);
    });
}

/// umcp's own captured lines. (The HTTP library's lines are its own: at trace level ureq dumps
/// whole requests, headers included.)
pub fn umcp_lines() -> Vec<String> {
    logged("")
}

/// umcp's own captured lines that contain `needle`.
pub fn logged(needle: &str) -> Vec<String> {
    let lines = logs().lock().unwrap();
    lines
        .iter()
        .filter(|l| l.starts_with("umcp") && l.contains(needle))
        .cloned()
        .collect()
}

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        let line = format!("{} {}", record.target(), record.args());
        // A test that panicked holding the lock must not take every later line with it.
        LINES.lock().unwrap_or_else(|e| e.into_inner()).push(line);
    }

    fn flush(&self) {}
}
