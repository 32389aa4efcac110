//! The requests waiting for a response, and the reusable slot each waiting caller sleeps on.
//!
//! A response takes one hand-off: the transport's reading thread finds the request in the
//! pending table, puts the outcome into the caller's slot and wakes it. A slot belongs to the
//! calling thread and is reused by its next call, so a call creates no channel. Replies are
//! tagged with their request id: one left behind by a request that gave up (a late progress
//! notification, say) is recognised and dropped by the next call on that slot.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{Closed, Error, Result};
use crate::sync::lock;

/// A response's result as the text read, decoded once by the caller into its type. A [`Value`]
/// result (from a batch) is written back to text: one decoder per type, not two, saves code size.
#[derive(Debug, Clone)]
pub(crate) struct Answer(Box<RawValue>);

impl Answer {
    /// The result `text` as the transport read it.
    pub(crate) fn raw(text: Box<RawValue>) -> Answer {
        Answer(text)
    }

    /// A result already decoded to a value.
    pub(crate) fn from_value(value: &Value) -> Answer {
        // Writing a `Value` cannot fail: its keys are strings and its numbers finite.
        Answer(serde_json::value::to_raw_value(value).unwrap_or_default())
    }

    /// The result's text.
    pub(crate) fn text(&self) -> &RawValue {
        &self.0
    }

    /// Reads `T` from the result without consuming it: the few fields the stateless era's
    /// bookkeeping needs (`resultType`, `ttlMs`, `_meta`, the tools' names), leaving the text
    /// itself to be decoded by the caller.
    pub(crate) fn peek<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(self.0.get()).or_else(|e| {
            // Text holding a lone surrogate is read with U+FFFD in its place.
            let mended = crate::jsonrpc::surrogates::mend(self.0.get()).ok_or(e)?;
            serde_json::from_str(&mended)
        })
    }

    /// The result decoded as `T`.
    pub(crate) fn decode<T: DeserializeOwned>(self, method: &str) -> Result<T> {
        self.peek()
            .map_err(|e| Error::Protocol(format!("malformed `{method}` result: {e}")))
    }
}

/// What a waiting caller is handed.
pub(crate) enum Reply {
    /// Progress for the caller's token.
    Progress(Value),
    /// The outcome.
    Done(Result<Answer>),
    /// The error of a request the server accepted and may still be working on, but whose
    /// response can never come: the caller cancels it on the server.
    Unanswered(crate::Error),
    /// The caller's cancel handle fired.
    Cancel,
    /// A sending thread handed the request over (see `senders`).
    Sent,
    /// A sending thread could not hand the request over.
    SendFailed(crate::Error),
}

/// How many times a caller whose request is alone in flight yields before parking (within
/// [`LINGER_LIMIT`]): a quick reply is taken without a futex wake-up. Yields, not a spin, and
/// only a lone caller: `examples/bench` measured a spin slowing a shared core and many threads.
pub(crate) const LONE_CALLER_YIELDS: u32 = 50;

/// The longest a lone caller yields before parking, whatever the count: on a core other
/// threads keep busy, one yield can last a time slice, and waiting behind them for a reply
/// that has come would cost more than parking.
const LINGER_LIMIT: Duration = Duration::from_micros(100);

/// Where one thread's calls receive their replies.
#[derive(Default)]
pub(crate) struct Slot {
    replies: Mutex<VecDeque<(i64, Reply)>>,
    ready: Condvar,
}

impl Slot {
    /// Hands `reply` for request `id` to the caller and wakes it.
    pub(crate) fn put(&self, id: i64, reply: Reply) {
        lock(&self.replies).push_back((id, reply));
        self.ready.notify_one();
    }

    /// The next reply for request `id`, waiting until `deadline` (`None`: no deadline);
    /// `None` when the deadline passed first. The caller parks on a condition variable at
    /// once (see [`LONE_CALLER_YIELDS`] for the one exception).
    pub(crate) fn take(&self, id: i64, deadline: Option<Instant>) -> Option<Reply> {
        self.take_lingering(id, deadline, 0)
    }

    /// [`take`](Self::take), first giving the core away (`sched_yield`) up to `yields` times
    /// while the reply is not there: see [`LONE_CALLER_YIELDS`].
    pub(crate) fn take_lingering(
        &self,
        id: i64,
        deadline: Option<Instant>,
        yields: u32,
    ) -> Option<Reply> {
        let mut replies = lock(&self.replies);
        let lingering = (yields > 0).then(Instant::now);
        for _ in 0..yields {
            if let Some(at) = replies.iter().position(|(for_id, _)| *for_id == id) {
                return replies.remove(at).map(|(_, reply)| reply);
            }
            // On a busy core a yield may wait behind other threads' time slices, and a
            // runnable caller is not preferred the way a woken one is: past the limit, park.
            if lingering.is_some_and(|since| since.elapsed() > LINGER_LIMIT) {
                break;
            }
            drop(replies);
            std::thread::yield_now();
            replies = lock(&self.replies);
        }
        loop {
            while let Some((for_id, reply)) = replies.pop_front() {
                if for_id == id {
                    return Some(reply);
                }
            }
            replies = match deadline {
                None => self
                    .ready
                    .wait(replies)
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.checked_duration_since(Instant::now())?;
                    self.ready
                        .wait_timeout(replies, left)
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}

thread_local! {
    /// The calling thread's idle slot. Empty while a call on this thread is using it, so a
    /// call made from inside a progress callback gets a slot of its own.
    static IDLE: RefCell<Option<Arc<Slot>>> = const { RefCell::new(None) };
}

/// The calling thread's slot for the length of one call.
pub(crate) struct SlotGuard(Option<Arc<Slot>>);

impl SlotGuard {
    /// Takes the thread's idle slot, or makes one.
    pub(crate) fn acquire() -> SlotGuard {
        let slot = IDLE
            .try_with(|idle| idle.borrow_mut().take())
            .ok()
            .flatten()
            .unwrap_or_default();
        SlotGuard(Some(slot))
    }

    /// The slot.
    pub(crate) fn slot(&self) -> &Arc<Slot> {
        // Always `Some` until dropped.
        self.0.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        if let Some(slot) = self.0.take() {
            // Leftovers belong to finished requests; the next call would skip them anyway.
            lock(&slot.replies).clear();
            let _ = IDLE.try_with(|idle| *idle.borrow_mut() = Some(slot));
        }
    }
}

/// The pending table and the closed state live under one lock, so a request is either
/// registered before the connection closed (and then failed by the close) or sees the closed
/// state and fails at once. No request can slip in between and wait for nothing.
#[derive(Default)]
pub(crate) struct Pending {
    pub(crate) entries: HashMap<i64, Arc<Slot>>,
    pub(crate) closed: Option<Arc<Closed>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_for_another_request_is_skipped() {
        let slot = Slot::default();
        slot.put(1, Reply::Cancel);
        slot.put(2, Reply::Done(Ok(Answer::from_value(&Value::Null))));
        assert!(matches!(slot.take(2, None), Some(Reply::Done(Ok(_)))));
        let soon = Instant::now() + Duration::from_millis(10);
        assert!(slot.take(1, Some(soon)).is_none());
    }

    #[test]
    fn a_lingering_caller_takes_its_reply_whenever_it_comes() {
        let slot = Arc::new(Slot::default());
        // Already there, behind another request's.
        slot.put(1, Reply::Cancel);
        slot.put(2, Reply::Sent);
        assert!(matches!(slot.take_lingering(2, None, 5), Some(Reply::Sent)));
        // Put while it yields or once it has parked: either way it gets it.
        for delay in [Duration::ZERO, Duration::from_millis(20)] {
            let putter = Arc::clone(&slot);
            let thread = std::thread::spawn(move || {
                std::thread::sleep(delay);
                putter.put(3, Reply::Sent);
            });
            let until = Instant::now() + Duration::from_secs(10);
            let reply = slot.take_lingering(3, Some(until), LONE_CALLER_YIELDS);
            assert!(matches!(reply, Some(Reply::Sent)));
            thread.join().unwrap();
        }
        // Nothing comes: the deadline still ends the wait.
        let soon = Instant::now() + Duration::from_millis(10);
        assert!(slot
            .take_lingering(4, Some(soon), LONE_CALLER_YIELDS)
            .is_none());
    }

    #[test]
    fn nested_calls_get_their_own_slot_and_slots_are_reused() {
        let outer = SlotGuard::acquire();
        let inner = SlotGuard::acquire();
        assert!(!Arc::ptr_eq(outer.slot(), inner.slot()));
        let inner_ptr = Arc::as_ptr(inner.slot());
        drop(inner);
        let again = SlotGuard::acquire();
        assert_eq!(Arc::as_ptr(again.slot()), inner_ptr);
        drop(again);
        drop(outer);
    }
}
