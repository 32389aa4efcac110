//! What every event-stream reader thread shares: stop signals, the registry of live streams,
//! the read loop, and reconnection delays.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{self, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

pub(crate) use super::stop::Stop;
use super::wire::{self, HttpResponse};
use super::ReconnectPolicy;
use crate::error::{Error, Result};
use crate::jsonrpc::RequestId;
use crate::transport::sse::{Event, SseError, SseReader};

pub(crate) use crate::sync::lock;

/// A body reader that fails as soon as its stop signal is raised, so a stream of comments
/// or keep-alives cannot keep an unwanted reader alive: the signal is looked at before every
/// read, whatever the read brings.
struct Checked<'s, R> {
    inner: R,
    stop: &'s Stop,
}

impl<R: Read> Read for Checked<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.stop.is_stopped() {
            return Err(io::Error::other("the stream was stopped"));
        }
        self.inner.read(buf)
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
    /// Registers the stream that will carry the response to `id`, before its POST goes out:
    /// a request abandoned while the POST waits for its answer then finds its stop signal
    /// raised, so the stream the server opens later is never read.
    pub fn claim(&self, id: RequestId) -> Claim<'_> {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let stop = Stop::new();
        lock(&self.live).insert(key, (id, stop.clone()));
        Claim {
            streams: self,
            key,
            stop,
            kept: false,
        }
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

/// A stream's place in [`Streams`] while its POST is under way; given up on drop unless a
/// reader thread took it over.
pub(crate) struct Claim<'s> {
    streams: &'s Streams,
    key: u64,
    stop: Arc<Stop>,
    /// Taken over by a reader thread.
    kept: bool,
}

impl Claim<'_> {
    /// Whether the request was abandoned (or the connection closed) since the claim.
    pub fn is_stopped(&self) -> bool {
        self.stop.is_stopped()
    }

    /// The registry the stream is claimed in.
    pub fn streams(&self) -> &Streams {
        self.streams
    }

    /// Hands the registration to a reader thread, which unregisters `key` when it ends.
    pub fn keep(mut self) -> (u64, Arc<Stop>) {
        self.kept = true;
        (self.key, Arc::clone(&self.stop))
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.streams.unregister(self.key);
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

impl StreamState {
    /// Records an event's `id` to resume from (an empty one forgets it). One that is no valid
    /// header value (SSE allows control bytes) is ignored: the reconnection would fail with it.
    fn record_event_id(&mut self, id: &str, what: &str) {
        if id.is_empty() {
            self.last_event_id = None;
        } else if wire::valid_header_value(id) {
            self.last_event_id = Some(id.to_owned());
        } else {
            log::debug!("{what}: ignoring event id {id:?}, which cannot be sent as Last-Event-ID");
        }
    }
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

/// Reads events until the handler is done, the stream ends or `stop` is raised. An oversized
/// event ends the stream unless `skip_oversized`.
pub(crate) fn pump(
    response: HttpResponse,
    max_event_size: usize,
    skip_oversized: bool,
    stop: &Stop,
    state: &mut StreamState,
    what: &str,
    on_event: impl FnMut(Event) -> Flow,
) -> End {
    state.events = 0;
    let body = BufReader::new(Checked {
        inner: response.into_body().into_reader(),
        stop,
    });
    let mut reader = SseReader::with_max_event_size(body, max_event_size);
    let end = read_events(&mut reader, skip_oversized, stop, state, what, on_event);
    if let End::Done = end {
        finish_body(&mut reader, what);
    }
    stop.detach();
    drop(reader);
    end
}

/// How long a stream that brought what it was read for gets to end, so that its connection
/// goes back to the pool rather than being closed: a server ends a POST's stream right after
/// the response, and its last bytes follow at once. Shorter on a caller's own thread, which
/// has its answer already (see [`waiting`](crate::transport::waiting)).
const FINISH_GRACE: Duration = Duration::from_millis(50);
const FINISH_GRACE_HERE: Duration = Duration::from_millis(10);

/// How many more events a stream that brought what it was read for may send in the grace
/// before its connection is given up.
const FINISH_EVENTS: usize = 8;

/// Reads `reader` to its end within [`FINISH_GRACE`]: a body read to its end lets ureq keep the
/// connection for the next request. What comes meanwhile was not asked for and is dropped (a
/// stream kept open past the grace is closed, as it was before).
fn finish_body(
    reader: &mut impl Iterator<Item = std::result::Result<Event, SseError>>,
    what: &str,
) {
    let grace = match crate::transport::waiting::is_waiting_here() {
        true => FINISH_GRACE_HERE,
        false => FINISH_GRACE,
    };
    let deadline = super::socket::deadline_after(Instant::now(), grace);
    super::socket::with_deadline(deadline, || {
        for item in reader.take(FINISH_EVENTS) {
            match item {
                Ok(event) => log::debug!(
                    "{what}: dropping an event after the response ({:?})",
                    event.event
                ),
                Err(_) => return,
            }
        }
    });
}

fn read_events(
    reader: &mut impl Iterator<Item = std::result::Result<Event, SseError>>,
    skip_oversized: bool,
    stop: &Stop,
    state: &mut StreamState,
    what: &str,
    mut on_event: impl FnMut(Event) -> Flow,
) -> End {
    let started = Instant::now();
    for item in reader {
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
            Err(SseError::Io(_)) if stop.is_stopped() => return End::Stopped,
            Err(SseError::Io(e)) => return End::Failed(wire::map_read_error(e, what, started)),
        };
        state.events += 1;
        if let Some(id) = &event.id {
            state.record_event_id(id, what);
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

/// The least delay before a stream is opened again, whatever `retry` the server asks for.
pub(crate) const MIN_RETRY: Duration = Duration::from_millis(100);

/// The delay before reconnection attempt `attempt` (1-based). The server's `retry` (at least
/// [`MIN_RETRY`]) is every attempt's floor and the first one's delay (the spec's "MUST respect");
/// later attempts double up to the policy's maximum, with jitter.
pub(crate) fn backoff(policy: &ReconnectPolicy, retry: Option<Duration>, attempt: u32) -> Duration {
    // A server asking for less (`retry: 0` on a stream it closes at once) would have the
    // client reconnect in a tight loop, thousands of times a second.
    let retry = retry.map(|retry| retry.max(MIN_RETRY));
    if let (Some(retry), 1) = (retry, attempt) {
        return retry;
    }
    let base = retry.unwrap_or(policy.initial_delay);
    let doubled = base.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let capped = doubled.min(policy.max_delay.max(base));
    // Between 75 % and 100 % of the capped delay (a float near `Duration::MAX` may round
    // above it, hence the checked conversion).
    let jittered = Duration::try_from_secs_f64(capped.as_secs_f64() * (0.75 + 0.25 * jitter()))
        .map_or(capped, |delay| delay.min(capped));
    jittered.max(retry.unwrap_or_default())
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
    crate::threads::spawn(name, Box::new(body))
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
    fn a_retry_of_zero_is_no_tight_loop() {
        let policy = ReconnectPolicy::default();
        for attempt in [1, 2, 3] {
            assert!(backoff(&policy, Some(Duration::ZERO), attempt) >= MIN_RETRY);
        }
    }

    #[test]
    fn no_attempt_waits_less_than_retry() {
        // A `retry` at the policy's cap or above it: doubling stops there, and jitter must
        // not take any attempt below what the server asked for.
        let policy = ReconnectPolicy::new(10, Duration::from_millis(100), Duration::from_secs(1));
        for retry in [Duration::from_secs(1), Duration::from_secs(45)] {
            for attempt in 1..=12 {
                for _ in 0..50 {
                    let delay = backoff(&policy, Some(retry), attempt);
                    assert!(delay >= retry, "attempt {attempt}: {delay:?} < {retry:?}");
                    assert!(delay <= retry.max(policy.max_delay), "{delay:?}");
                }
            }
        }
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
    fn unbounded_delays_do_not_overflow() {
        let policy = ReconnectPolicy::new(u32::MAX, Duration::MAX, Duration::MAX);
        for attempt in [1, 2, 40, u32::MAX] {
            assert!(backoff(&policy, None, attempt) > Duration::from_secs(3600));
        }
        assert_eq!(
            backoff(&policy, Some(Duration::MAX), 1),
            Duration::MAX,
            "the server's retry, exactly"
        );
    }

    #[test]
    fn only_ids_that_can_be_sent_as_a_header_are_recorded() {
        let mut state = StreamState::default();
        for id in ["a\tb", "é-1"] {
            state.record_event_id(id, "test");
            assert_eq!(state.last_event_id.as_deref(), Some(id));
        }
        for id in ["x\u{1}", "x\u{7f}", "x\u{1b}[0m"] {
            state.record_event_id(id, "test");
            assert_eq!(state.last_event_id.as_deref(), Some("é-1"), "{id:?}");
        }
        state.record_event_id("", "test");
        assert_eq!(state.last_event_id, None);
    }
}
