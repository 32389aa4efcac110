//! Where messages to a host go: a bounded queue in front of whatever writes them (stdout, an
//! HTTP response's event stream), so that no thread of the bridge ever blocks on a host that
//! stopped reading for longer than a deadline.
//!
//! Answers (responses, and the requests the bridge sends on for a server) wait for room up to
//! their deadline; notifications never wait: when the queue is full they are dropped and
//! counted, as progress and log lines are worth less than a stalled bridge.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use umcp::jsonrpc::Message;

/// How many messages wait for a host's writer at most.
pub const QUEUE: usize = 1024;

/// How a message is queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A response, or a request for the host: waits for room up to the channel's deadline.
    Answer,
    /// A notification: dropped (and counted) when the queue is full.
    Note,
}

/// A way to a host.
pub trait Channel: Send + Sync {
    /// Queues `message`; false when it could not be (the host is gone, or the queue stayed
    /// full past the deadline, or it was full for a notification).
    fn send(&self, message: Message, kind: Kind) -> bool;
}

/// A bounded queue of messages for one writer.
pub struct Queue {
    tx: Sender<Message>,
    wait: Duration,
    dropped: AtomicU64,
}

impl Queue {
    /// A queue whose answers wait up to `wait` for room, and its receiving end.
    pub fn new(capacity: usize, wait: Duration) -> (Queue, Receiver<Message>) {
        let (tx, rx) = crossbeam_channel::bounded(capacity);
        let queue = Queue {
            tx,
            wait,
            dropped: AtomicU64::new(0),
        };
        (queue, rx)
    }

    /// How many notifications were dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl Channel for Queue {
    fn send(&self, message: Message, kind: Kind) -> bool {
        let sent = match kind {
            Kind::Answer => self.tx.send_timeout(message, self.wait).is_ok(),
            Kind::Note => self.tx.try_send(message).is_ok(),
        };
        if !sent && kind == Kind::Note {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            log::debug!("a notification for the host was dropped ({dropped} so far)");
        }
        sent
    }
}

/// Starts the thread that writes the queue's messages to `out`, one line each, flushed
/// whenever the queue runs empty. It ends when every sender is gone, or when `out` fails.
pub fn write_lines(
    out: impl Write + Send + 'static,
    rx: Receiver<Message>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("umcp-bridge-out".into())
        .spawn(move || {
            let mut out = std::io::BufWriter::new(out);
            for message in rx.iter() {
                log::trace!("> host {}", message.encode());
                let mut line = message.encode();
                line.push('\n');
                let written = out.write_all(line.as_bytes());
                let flushed = match rx.is_empty() {
                    true => written.and_then(|()| out.flush()),
                    false => written,
                };
                if let Err(e) = flushed {
                    log::debug!("writing to the host failed: {e}");
                    return;
                }
            }
            let _ = out.flush();
        })
}

/// A channel that goes nowhere: for a host that has no way to receive what is not an answer
/// to one of its requests (a stateless-era host over HTTP).
pub struct Nowhere;

impl Channel for Nowhere {
    fn send(&self, _message: Message, _kind: Kind) -> bool {
        false
    }
}

/// Shared channels.
pub type Shared = Arc<dyn Channel>;

#[cfg(test)]
mod tests {
    use super::*;
    use umcp::jsonrpc::Notification;

    #[test]
    fn notifications_are_dropped_and_counted_when_the_queue_is_full() {
        let (queue, rx) = Queue::new(1, Duration::from_millis(10));
        let note = || Message::from(Notification::new("n", None));
        assert!(queue.send(note(), Kind::Note));
        assert!(!queue.send(note(), Kind::Note));
        assert!(
            !queue.send(note(), Kind::Answer),
            "an answer waits only its deadline"
        );
        assert_eq!(queue.dropped(), 1);
        assert!(rx.try_recv().is_ok());
        assert!(queue.send(note(), Kind::Answer));
    }
}
