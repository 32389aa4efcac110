//! Waiting for the user without outliving the call: a pause that ends at an instant, or at once
//! when the connection the call serves closes (or the caller cancels a sign-in), and the
//! deadline such a wait may not pass.

use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, RecvTimeoutError};

use crate::error::{AuthError, AuthStep};
use crate::sync::deadline_after;
use crate::transport::http::provider_deadline;

/// Why a wait for the user ended before its time.
pub(crate) fn interrupted() -> AuthError {
    AuthError::new(
        AuthStep::Authorization,
        "the sign-in was ended (the connection closed or the caller cancelled it)",
    )
}

/// The instant a wait of at most `limit` must end by: `limit` from now, cut to the deadline of
/// the call being served (`None`: no limit at all).
pub(crate) fn deadline_within(limit: Duration) -> Option<Instant> {
    let limit = provider_deadline::capped(limit);
    (limit != Duration::MAX).then(|| deadline_after(Instant::now(), limit))
}

/// Sleeps until `until`, or fails at once when the call's connection closes meanwhile.
pub(crate) fn until(until: Instant) -> Result<(), AuthError> {
    let (woken, wake) = bounded::<()>(1);
    // This end stays here, so the channel never disconnects: outside a call the hook is
    // dropped at once, and the wait is a plain sleep.
    let hook = woken.clone();
    let Some(_hook) = provider_deadline::on_close(move || {
        let _ = hook.try_send(());
    }) else {
        return Err(interrupted());
    };
    let left = until.saturating_duration_since(Instant::now());
    let woke = wake.recv_timeout(left);
    drop(woken);
    match woke {
        Err(RecvTimeoutError::Timeout) => Ok(()),
        Ok(()) | Err(RecvTimeoutError::Disconnected) => Err(interrupted()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Closed;
    use crate::transport::http::provider_deadline::{within, CloseSignal};
    use std::sync::Arc;

    #[test]
    fn a_pause_ends_at_its_instant_or_at_once_on_close() {
        let start = Instant::now();
        until(start + Duration::from_millis(60)).unwrap();
        assert!(start.elapsed() >= Duration::from_millis(60));

        let signal = Arc::new(CloseSignal::default());
        let closer = Arc::clone(&signal);
        let far = Instant::now() + Duration::from_secs(60);
        let started = Instant::now();
        let waited = within(far, &signal, || {
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                closer.close(Arc::new(Closed::default()));
            });
            until(Instant::now() + Duration::from_secs(30))
        });
        assert!(waited.is_err());
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        // Once closed, a new pause fails without waiting.
        let again = within(far, &signal, || {
            until(Instant::now() + Duration::from_secs(30))
        });
        assert!(again.is_err());
    }

    #[test]
    fn a_wait_is_cut_to_the_call_deadline() {
        assert_eq!(deadline_within(Duration::MAX), None);
        let signal = Arc::new(CloseSignal::default());
        let soon = Instant::now() + Duration::from_secs(2);
        let cut = within(soon, &signal, || deadline_within(Duration::from_secs(600)));
        assert!(cut.is_some_and(|d| d <= soon + Duration::from_millis(5)));
    }
}
