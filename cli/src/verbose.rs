//! umcp's own log on stderr, asked for with `-v` (how it connects, which protocol era it
//! chose and why, what it retried) or `-vv` (every message exchanged too).
//!
//! Only the library's lines are shown (their targets start with `umcp`), each with the time
//! since the program started and made safe for a terminal: they quote what servers sent.
//! `-vv` shows messages as they were sent and received, secrets in them included.

use std::sync::OnceLock;
use std::time::Instant;

use log::{Level, LevelFilter, Log, Metadata, Record};

/// The logger, set once.
static LOGGER: OnceLock<Stderr> = OnceLock::new();

struct Stderr {
    level: LevelFilter,
    started: Instant,
}

/// Turns the log on for `verbosity` (the number of `-v`): debug for one, trace for more;
/// nothing for none.
pub fn init(verbosity: u8) {
    let level = match verbosity {
        0 => return,
        1 => LevelFilter::Debug,
        _ => LevelFilter::Trace,
    };
    let logger = LOGGER.get_or_init(|| Stderr {
        level,
        started: Instant::now(),
    });
    if log::set_logger(logger).is_ok() {
        log::set_max_level(level);
    }
}

impl Log for Stderr {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= self.level && metadata.target().starts_with("umcp")
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let level = match record.level() {
            Level::Error => "error",
            Level::Warn => "warn",
            Level::Info => "info",
            Level::Debug => "debug",
            Level::Trace => "trace",
        };
        let elapsed = self.started.elapsed().as_secs_f64();
        let text = crate::shown::line(&record.args().to_string());
        crate::console::err(&format!(
            "umcp: {elapsed:8.3}s {level} {}: {text}\n",
            record.target()
        ));
    }

    fn flush(&self) {}
}
