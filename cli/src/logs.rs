//! `--log LEVEL`: the servers' log messages (`notifications/message`), on stderr as they come.

use std::thread::JoinHandle;
use std::time::Duration;

use umcp::types::ServerNotification;
use umcp::Manager;

use crate::output::warn;
use crate::shown;

/// How long the end waits for the last messages once the manager is closed.
const DRAIN: Duration = Duration::from_secs(1);

/// The thread printing log messages, until the manager's notification queue ends.
pub struct Printer {
    thread: Option<JoinHandle<()>>,
    done: crossbeam_channel::Receiver<()>,
}

impl Printer {
    /// Prints every log message `manager` receives from now on. The level the servers were
    /// asked for (`Options::with_log_level`) already filters them.
    pub fn start(manager: &Manager) -> Printer {
        let notes = manager.notifications();
        let (done_tx, done) = crossbeam_channel::bounded::<()>(0);
        let thread = std::thread::Builder::new()
            .name("umcp-logs".into())
            .spawn(move || {
                for tagged in notes.iter() {
                    if let ServerNotification::LoggingMessage(message) = &tagged.notification {
                        // What the server wrote, escaped: a log line cannot drive the
                        // terminal nor start a line of its own that passes for umcp's.
                        let text = match &message.data {
                            serde_json::Value::String(text) => shown::block(text),
                            other => shown::line(&other.to_string()),
                        };
                        let logger = message.logger.as_deref();
                        let logger = logger.map(|l| format!("{}: ", shown::line(l)));
                        let logger = logger.unwrap_or_default();
                        warn(&format!(
                            "{}: {}: {logger}{text}",
                            tagged.server, message.level
                        ));
                    }
                }
                drop(done_tx);
            })
            .ok();
        Printer { thread, done }
    }

    /// Waits, briefly, for the messages still queued; call after closing the manager, which
    /// ends the queue.
    pub fn finish(self) {
        if let Err(crossbeam_channel::RecvTimeoutError::Disconnected) =
            self.done.recv_timeout(DRAIN)
        {
            if let Some(thread) = self.thread {
                let _ = thread.join();
            }
        }
    }
}
