//! The deadline and the closing of the connection a credential provider is working for,
//! known on the thread the provider runs on: the [`CredentialProvider`](super::CredentialProvider)
//! trait passes neither, yet the HTTP requests umcp's own OAuth provider makes for a call
//! (discovery, registration, token, refresh) must not outlast that call, nor the connection.
//!
//! Requests are cut to what is left of the deadline. A user's answer starts the clock again:
//! what follows it (exchanging the code for a token) gets the budget the call had when the
//! provider was called, counted from the answer, since the user took the time they took; the
//! transport likewise gives the repeated request a fresh budget once the provider is done.
//!
//! Closing the connection ends the provider's work for its calls, by a [`CloseSignal`] the
//! transport owns and fires when it closes, with the reason it closed for. Whatever the
//! provider blocks on registers a hook with it for as long as it waits ([`on_close`]): the
//! OAuth provider makes each HTTP request of its flow on an HTTP agent of the request's own,
//! whose hook shuts that agent down (ureq's shutdown, the same that cuts the transport's own
//! requests on close), and its waits for another thread's flow register a hook that wakes
//! them; the loopback handler polls [`closed`]. What neither reaches runs on: a name
//! resolution or a connect in progress (ureq's shutdown cuts connections, not those), until
//! the request's timeout at the latest, and a provider or authorization handler of the
//! caller's own. Hooks are connection scoped, not provider scoped: a provider shared by several
//! connections keeps serving the others. No thread is added; the closing thread runs the
//! hooks.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{Closed, Error};

/// The closing of one connection, as the work credential providers do for it sees it.
#[derive(Default)]
pub(crate) struct CloseSignal {
    closed: AtomicBool,
    hooks: Mutex<Hooks>,
}

/// What to do when the connection closes, each with the id its [`OnClose`] removes it by.
#[derive(Default)]
struct Hooks {
    next: u64,
    waiting: Vec<(u64, Box<dyn FnOnce() + Send>)>,
    /// Why the connection closed, as the first [`CloseSignal::close`] said.
    why: Option<Arc<Closed>>,
}

impl CloseSignal {
    /// Marks the connection closed (the first `why` stays) and runs the hooks once, under the lock
    /// so that one whose [`OnClose`] is gone never runs: hooks must be quick and not register
    /// hooks.
    pub fn close(&self, why: Arc<Closed>) {
        let mut hooks = self.hooks();
        hooks.why.get_or_insert(why);
        self.closed.store(true, Ordering::SeqCst);
        for (_, hook) in hooks.waiting.drain(..) {
            hook();
        }
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// [`Error::Closed`] with the reason the connection closed for.
    pub fn closed_error(&self) -> Error {
        Error::Closed(self.hooks().why.clone().unwrap_or_default())
    }

    fn hooks(&self) -> MutexGuard<'_, Hooks> {
        self.hooks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Keeps a hook registered by [`on_close`] until dropped.
#[must_use = "the hook is removed when this is dropped"]
pub(crate) struct OnClose {
    registered: Option<(Arc<CloseSignal>, u64)>,
}

impl Drop for OnClose {
    fn drop(&mut self) {
        if let Some((signal, id)) = self.registered.take() {
            signal.hooks().waiting.retain(|(each, _)| *each != id);
        }
    }
}

/// The deadline in force, the budget it gave when it was set, and the connection's signal.
#[derive(Clone)]
struct Scope {
    deadline: Instant,
    budget: Duration,
    signal: Option<Arc<CloseSignal>>,
}

thread_local! {
    static SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// Restores the scope that was in force, also when `f` panics.
struct Restore(Option<Scope>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        SCOPE.with(|scope| *scope.borrow_mut() = previous);
    }
}

fn scoped<T>(scope: Option<Scope>, f: impl FnOnce() -> T) -> T {
    let _restore = Restore(SCOPE.with(|s| s.replace(scope)));
    f()
}

fn current() -> Option<Scope> {
    SCOPE.with(|scope| scope.borrow().clone())
}

/// Runs `f`, a provider's work for a request due by `deadline` on the connection `signal`
/// belongs to, with both known.
pub(crate) fn within<T>(deadline: Instant, signal: &Arc<CloseSignal>, f: impl FnOnce() -> T) -> T {
    let budget = deadline.saturating_duration_since(Instant::now());
    let signal = Some(Arc::clone(signal));
    scoped(
        Some(Scope {
            deadline,
            budget,
            signal,
        }),
        f,
    )
}

/// Runs `f`, what follows a user's answer, with the budget the request had when the provider
/// was called, counted from now (no deadline when none was in force).
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) fn after_user<T>(f: impl FnOnce() -> T) -> T {
    let restarted = current().map(|scope| Scope {
        deadline: crate::transport::deadline_after(Instant::now(), scope.budget),
        ..scope
    });
    scoped(restarted, f)
}

/// `limit`, cut to what is left of the deadline of the request being served; at least a
/// millisecond, so that a spent deadline fails the next request at once.
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) fn capped(limit: Duration) -> Duration {
    match SCOPE.with(|scope| scope.borrow().as_ref().map(|s| s.deadline)) {
        Some(deadline) => {
            let left = deadline.saturating_duration_since(Instant::now());
            limit.min(left.max(Duration::from_millis(1)))
        }
        None => limit,
    }
}

/// Whether the connection of the request being served has closed (never outside a request).
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) fn closed() -> bool {
    SCOPE.with(|scope| {
        scope
            .borrow()
            .as_ref()
            .and_then(|s| s.signal.as_ref())
            .is_some_and(|signal| signal.is_closed())
    })
}

/// Has `hook` run when the connection of the request being served closes, as long as the
/// returned [`OnClose`] lives (outside a request, never); `None`, without running it, when
/// the connection has closed already.
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) fn on_close(hook: impl FnOnce() + Send + 'static) -> Option<OnClose> {
    let Some(signal) = current().and_then(|scope| scope.signal) else {
        return Some(OnClose { registered: None });
    };
    let mut hooks = signal.hooks();
    // Checked under the lock `close` sets it under: a hook is either run or refused.
    if signal.is_closed() {
        return None;
    }
    let id = hooks.next;
    hooks.next += 1;
    hooks.waiting.push((id, Box::new(hook)));
    drop(hooks);
    Some(OnClose {
        registered: Some((signal, id)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn a_limit_is_cut_to_the_deadline_in_scope_and_restored_after() {
        let hour = Duration::from_secs(3600);
        let signal = Arc::new(CloseSignal::default());
        assert_eq!(capped(hour), hour);
        let soon = Instant::now() + Duration::from_secs(2);
        within(soon, &signal, || {
            assert!(capped(hour) <= Duration::from_secs(2));
            assert_eq!(capped(Duration::from_millis(5)), Duration::from_millis(5));
            std::thread::sleep(Duration::from_millis(300));
            // After the user's answer, the whole budget again.
            after_user(|| assert!(capped(hour) > Duration::from_millis(1900)));
            assert!(capped(hour) <= Duration::from_millis(1700));
        });
        assert_eq!(capped(hour), hour);
        after_user(|| assert_eq!(capped(hour), hour));
        let spent = Instant::now() - Duration::from_secs(1);
        within(spent, &signal, || {
            assert_eq!(capped(hour), Duration::from_millis(1));
        });
    }

    fn why(reason: &str) -> Arc<Closed> {
        Arc::new(Closed {
            reason: reason.into(),
            ..Closed::default()
        })
    }

    #[test]
    fn hooks_run_once_on_close_while_registered_and_are_refused_after() {
        let signal = Arc::new(CloseSignal::default());
        let runs = Arc::new(AtomicUsize::new(0));
        let hook = |runs: &Arc<AtomicUsize>| {
            let runs = Arc::clone(runs);
            move || {
                runs.fetch_add(1, Ordering::SeqCst);
            }
        };
        // Outside a request there is nothing to close.
        assert!(on_close(hook(&runs)).is_some() && !closed());
        let far = Instant::now() + Duration::from_secs(60);
        within(far, &signal, || {
            let removed = on_close(hook(&runs)).expect("open");
            drop(removed);
            let _kept = on_close(hook(&runs)).expect("open");
            // After a user's answer the connection is the same.
            after_user(|| {
                assert!(!closed());
                signal.close(why("the server is gone"));
                assert!(closed());
                assert!(on_close(hook(&runs)).is_none(), "refused once closed");
            });
            signal.close(why("closed by client"));
        });
        assert_eq!(
            runs.load(Ordering::SeqCst),
            1,
            "only the registered hook, once"
        );
        assert!(!closed(), "the scope ended");
        match signal.closed_error() {
            Error::Closed(closed) => assert_eq!(closed.reason, "the server is gone", "the first"),
            other => panic!("{other:?}"),
        }
    }
}
