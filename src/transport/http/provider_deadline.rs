//! The deadline of the request a credential provider is working for, known on the thread the
//! provider runs on: the [`CredentialProvider`](super::CredentialProvider) trait passes none,
//! yet the HTTP requests umcp's own OAuth provider makes for a call (discovery, registration,
//! token, refresh) must not outlast that call. They are cut to what is left of it.
//!
//! A user's answer starts the clock again: what follows it (exchanging the code for a token)
//! gets the budget the call had when the provider was called, counted from the answer, since
//! the user took the time they took; the transport likewise gives the repeated request a
//! fresh budget once the provider is done.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// The deadline in force, and the budget it gave when it was set.
#[derive(Clone, Copy)]
struct Scope {
    deadline: Instant,
    budget: Duration,
}

thread_local! {
    static SCOPE: Cell<Option<Scope>> = const { Cell::new(None) };
}

/// Restores the scope that was in force, also when `f` panics.
struct Restore(Option<Scope>);

impl Drop for Restore {
    fn drop(&mut self) {
        SCOPE.with(|scope| scope.set(self.0));
    }
}

fn scoped<T>(scope: Option<Scope>, f: impl FnOnce() -> T) -> T {
    let _restore = Restore(SCOPE.with(|s| s.replace(scope)));
    f()
}

/// Runs `f`, a provider's work for a request due by `deadline`, with that deadline known.
pub(crate) fn within<T>(deadline: Instant, f: impl FnOnce() -> T) -> T {
    let budget = deadline.saturating_duration_since(Instant::now());
    scoped(Some(Scope { deadline, budget }), f)
}

/// Runs `f`, what follows a user's answer, with the budget the request had when the provider
/// was called, counted from now (no deadline when none was in force).
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) fn after_user<T>(f: impl FnOnce() -> T) -> T {
    let restarted = SCOPE.with(Cell::get).map(|scope| Scope {
        deadline: crate::transport::deadline_after(Instant::now(), scope.budget),
        budget: scope.budget,
    });
    scoped(restarted, f)
}

/// `limit`, cut to what is left of the deadline of the request being served; at least a
/// millisecond, so that a spent deadline fails the next request at once.
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) fn capped(limit: Duration) -> Duration {
    match SCOPE.with(Cell::get) {
        Some(scope) => {
            let left = scope.deadline.saturating_duration_since(Instant::now());
            limit.min(left.max(Duration::from_millis(1)))
        }
        None => limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_cut_to_the_deadline_in_scope_and_restored_after() {
        let hour = Duration::from_secs(3600);
        assert_eq!(capped(hour), hour);
        let soon = Instant::now() + Duration::from_secs(2);
        within(soon, || {
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
        within(spent, || assert_eq!(capped(hour), Duration::from_millis(1)));
    }
}
