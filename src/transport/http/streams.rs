//! What every event-stream reader thread shares: stop signals, the registry of live streams,
//! the read loop, and reconnection delays.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use super::wire::{self, HttpResponse};
use super::ReconnectPolicy;
use crate::error::{Error, Result};
use crate::jsonrpc::{Message, Payload, RequestId};
use crate::transport::sse::{Event, SseError, SseReader};
use crate::transport::Inbox;

/// Locks a mutex, ignoring poisoning: the data behind it stays consistent on every path.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A stop signal a reader thread checks between events and waits on between attempts.
#[derive(Debug, Default)]
pub(crate) struct Stop {
    stopped: Mutex<bool>,
    wake: Condvar,
}

impl Stop {
    pub fn new() -> Arc<Stop> {
        Arc::new(Stop::default())
    }

    pub fn stop(&self) {
        *lock(&self.stopped) = true;
        self.wake.notify_all();
    }

    pub fn is_stopped(&self) -> bool {
        *lock(&self.stopped)
    }

    /// Sleeps for `duration` unless stopped first; returns whether it was stopped.
    pub fn sleep(&self, duration: Duration) -> bool {
        let until = Instant::now() + duration;
        let mut stopped = lock(&self.stopped);
        while !*stopped {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            stopped = self
                .wake
                .wait_timeout(stopped, left)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        *stopped
    }
}

/// The live POST streams, so `abandon`, `close` and a response arriving elsewhere can stop
/// the thread waiting on one.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    next_key: AtomicU64,
    live: Mutex<HashMap<u64, (RequestId, Arc<Stop>)>>,
}

impl Streams {
    pub fn register(&self, id: RequestId) -> (u64, Arc<Stop>) {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let stop = Stop::new();
        lock(&self.live).insert(key, (id, stop.clone()));
        (key, stop)
    }

    pub fn unregister(&self, key: u64) {
        lock(&self.live).remove(&key);
    }

    /// Stops the streams waiting for the response to `id`.
    pub fn stop_request(&self, id: &RequestId) {
        for (waiting_for, stop) in lock(&self.live).values() {
            if waiting_for == id {
                stop.stop();
            }
        }
    }

    pub fn stop_all(&self) {
        for (_, stop) in lock(&self.live).values() {
            stop.stop();
        }
    }
}

/// Where a stream stands across reconnections.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    /// The id to resume from. Kept when a resumed stream ends before sending a new one.
    pub last_event_id: Option<String>,
    /// The server's last `retry` value.
    pub retry: Option<Duration>,
    /// Events read since the last (re)connection.
    pub events: u64,
}

/// Why [`pump`] returned.
#[derive(Debug)]
pub(crate) enum End {
    /// The event handler said it has what it waited for.
    Done,
    /// The stop signal was raised.
    Stopped,
    /// The server ended the stream.
    Eof,
    /// Reading failed (idle timeout, reset connection) or, when oversized events are fatal,
    /// an event was too large.
    Failed(Error),
}

/// What the event handler of [`pump`] wants next.
pub(crate) enum Flow {
    Continue,
    Done,
}

/// Reads the events of `response` until the handler is done, the stream ends or `stop` is
/// raised (checked after every event). Oversized events end the stream with
/// [`Error::MessageTooLarge`] unless `skip_oversized`, in which case they are logged and
/// skipped.
pub(crate) fn pump(
    response: HttpResponse,
    max_event_size: usize,
    skip_oversized: bool,
    stop: &Stop,
    state: &mut StreamState,
    what: &str,
    mut on_event: impl FnMut(Event) -> Flow,
) -> End {
    state.events = 0;
    let started = Instant::now();
    let body = BufReader::new(StopReader {
        inner: response.into_body().into_reader(),
        stop,
    });
    for item in SseReader::with_max_event_size(body, max_event_size) {
        if stop.is_stopped() {
            return End::Stopped;
        }
        let event = match item {
            Ok(event) => event,
            Err(SseError::EventTooLarge { limit }) if skip_oversized => {
                log::warn!("{what}: skipped an event larger than {limit} bytes");
                continue;
            }
            Err(SseError::EventTooLarge { limit }) => {
                return End::Failed(Error::MessageTooLarge { limit })
            }
            Err(SseError::Io(e)) => return End::Failed(wire::map_read_error(e, what, started)),
        };
        state.events += 1;
        if let Some(id) = &event.id {
            state.last_event_id = Some(id.clone()).filter(|id| !id.is_empty());
        }
        if event.retry.is_some() {
            state.retry = event.retry;
        }
        if let Flow::Done = on_event(event) {
            return End::Done;
        }
    }
    if stop.is_stopped() {
        End::Stopped
    } else {
        End::Eof
    }
}

/// Ends a body at the first read after `stop` is raised. Keep-alive comments yield no event,
/// so without this a stream the caller abandoned (a closed subscription) would be read, and
/// its connection held, for as long as the server keeps it busy.
struct StopReader<'s, R> {
    inner: R,
    stop: &'s Stop,
}

impl<R: Read> Read for StopReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.is_stopped() {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

/// Decodes the data of a message event and delivers it. Returns whether it held the
/// response to `target`. Malformed data is logged and skipped: one bad event never ends a
/// stream.
pub(crate) fn deliver_event(
    inbox: &Inbox,
    streams: Option<&Streams>,
    event: &Event,
    target: Option<&RequestId>,
) -> bool {
    if event.data.is_empty() || !event.is_message() {
        return false;
    }
    log::trace!("< {}", event.data);
    match Payload::decode(&event.data) {
        Ok(Payload::Single(message)) => deliver(inbox, streams, vec![message], false, target),
        Ok(Payload::Batch(messages, dropped)) => {
            if dropped > 0 {
                log::debug!("dropped {dropped} malformed messages of a batch");
            }
            deliver(inbox, streams, messages, true, target)
        }
        Err(e) => {
            log::debug!(
                "skipping an event that is not JSON-RPC ({e}): {}",
                wire::snippet(&event.data)
            );
            false
        }
    }
}

/// Delivers messages to the inbox. A response also stops any other stream still waiting for
/// it: servers may answer on a different stream than the request's own.
pub(crate) fn deliver(
    inbox: &Inbox,
    streams: Option<&Streams>,
    messages: Vec<Message>,
    batch: bool,
    target: Option<&RequestId>,
) -> bool {
    let mut answered = false;
    for message in &messages {
        if let Message::Response(r) = message {
            if let Some(id) = &r.id {
                answered |= Some(id) == target;
                if let Some(streams) = streams.filter(|_| Some(id) != target) {
                    streams.stop_request(id);
                }
            }
        }
    }
    if batch {
        inbox.deliver_batch(messages);
    } else {
        for message in messages {
            inbox.deliver(message);
        }
    }
    answered
}

/// The delay before reconnection attempt `attempt` (1-based).
///
/// The first attempt waits exactly the server's `retry` when it sent one (servers measure
/// it); later attempts double the base up to the policy's maximum, with jitter so that many
/// clients do not reconnect in step.
pub(crate) fn backoff(policy: &ReconnectPolicy, retry: Option<Duration>, attempt: u32) -> Duration {
    if let (Some(retry), 1) = (retry, attempt) {
        return retry;
    }
    let base = retry.unwrap_or(policy.initial_delay);
    let doubled = base.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let capped = doubled.min(policy.max_delay.max(base));
    // Between 75 % and 100 % of the capped delay.
    capped.mul_f64(0.75 + 0.25 * jitter())
}

/// A number in `[0, 1)` that differs between calls and threads, without a random crate.
fn jitter() -> f64 {
    let mut hasher = DefaultHasher::new();
    SystemTime::now().hash(&mut hasher);
    std::thread::current().id().hash(&mut hasher);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Spawns a named reader thread.
pub(crate) fn spawn(name: &str, body: impl FnOnce() + Send + 'static) -> Result<()> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(body)
        .map(|_| ())
        .map_err(Error::io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_attempt_honours_retry_exactly() {
        let policy = ReconnectPolicy::default();
        let retry = Some(Duration::from_millis(500));
        assert_eq!(backoff(&policy, retry, 1), Duration::from_millis(500));
        let second = backoff(&policy, retry, 2);
        assert!(second >= Duration::from_millis(750) && second <= Duration::from_millis(1000));
    }

    #[test]
    fn delays_grow_and_stay_capped() {
        let policy = ReconnectPolicy::new(10, Duration::from_millis(100), Duration::from_secs(1));
        let first = backoff(&policy, None, 1);
        assert!(first >= Duration::from_millis(75) && first <= Duration::from_millis(100));
        let fourth = backoff(&policy, None, 4);
        assert!(fourth >= Duration::from_millis(600) && fourth <= Duration::from_millis(800));
        for attempt in [10, 40, u32::MAX] {
            assert!(backoff(&policy, None, attempt) <= Duration::from_secs(1));
        }
    }

    #[test]
    fn stop_wakes_a_sleeper() {
        let stop = Stop::new();
        let waker = stop.clone();
        let t = std::thread::spawn(move || waker.sleep(Duration::from_secs(30)));
        stop.stop();
        assert!(t.join().unwrap());
        assert!(stop.sleep(Duration::from_secs(30)), "stays stopped");
    }
}
