//! The bridge's diagnostics on stderr, which hosts keep as the server's log: what the bridge
//! and the library say of their work (`log` records of `umcp`'s own targets), from the level
//! `UMCP_LOG` names (`error`, `warn`, `info`, `debug`, or `trace`, which shows every message on
//! the wire), each with the time since the bridge started; nothing when it is unset.

use std::io::Write;
use std::time::Instant;

/// The variable that names the level.
pub const VARIABLE: &str = "UMCP_LOG";

struct Stderr(log::LevelFilter, Instant);

impl log::Log for Stderr {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= self.0 && metadata.target().starts_with("umcp")
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            let (at, level, target) = (self.1.elapsed(), record.level(), record.target());
            let line = format!("umcp: +{at:.3?} {level} {target}: {}\n", record.args());
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }
    }

    fn flush(&self) {}
}

/// Installs the logger when `UMCP_LOG` names a level; a value that names none is said once.
pub fn install() {
    let Some(value) = std::env::var_os(VARIABLE) else {
        return;
    };
    let level = value
        .to_str()
        .and_then(|v| v.parse::<log::LevelFilter>().ok());
    let Some(level) = level else {
        crate::output::warn(&format!(
            "umcp: {VARIABLE}={value:?} names no level: error, warn, info, debug or trace"
        ));
        return;
    };
    // Installed once, for the life of the program.
    let logger: &'static Stderr = Box::leak(Box::new(Stderr(level, Instant::now())));
    if log::set_logger(logger).is_ok() {
        log::set_max_level(level);
    }
}
