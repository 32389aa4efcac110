//! When a broken stateless-era subscription is opened again: at once after a stream that
//! lived a while, after a growing pause when streams keep breaking soon after they open, so
//! that a server that acknowledges and drops every subscription costs a few requests a
//! minute rather than hundreds a second.

use std::time::{Duration, Instant};

/// The first pause after a stream that broke soon after it opened.
pub(super) const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// The longest pause: each quick break doubles it up to this.
pub(super) const LONGEST_PAUSE: Duration = Duration::from_secs(10);

/// A stream open this long that breaks is opened again at once.
const STABLE: Duration = Duration::from_secs(10);

/// The reopening state of one subscription.
pub(super) struct Reopening {
    /// When the current stream was opened.
    opened: Instant,
    /// Streams in a row that broke before they were [`STABLE`].
    quick: u32,
    /// A reopen waiting for its pause to end: why, and when it may go.
    pub(super) waiting: Option<(String, Instant)>,
}

impl Reopening {
    pub(super) fn new() -> Reopening {
        Reopening {
            opened: Instant::now(),
            quick: 0,
            waiting: None,
        }
    }

    /// The stream broke: when it may be opened again.
    pub(super) fn broke(&mut self) -> Instant {
        let now = Instant::now();
        if now.duration_since(self.opened) >= STABLE {
            self.quick = 0;
            return now;
        }
        self.quick = self.quick.saturating_add(1);
        let doublings = self.quick.saturating_sub(1).min(16);
        now + FIRST_PAUSE
            .saturating_mul(1 << doublings)
            .min(LONGEST_PAUSE)
    }

    /// The stream was opened again.
    pub(super) fn opened(&mut self) {
        self.opened = Instant::now();
        self.waiting = None;
    }

    /// An event arrived: the stream works, whatever its age.
    pub(super) fn delivered(&mut self) {
        self.quick = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_breaks_double_the_pause_up_to_the_longest_and_an_event_resets_it() {
        let mut reopening = Reopening::new();
        let mut pauses = Vec::new();
        for _ in 0..10 {
            let at = reopening.broke();
            pauses.push(at.saturating_duration_since(Instant::now()));
            reopening.opened();
        }
        // Within a few milliseconds of 0.1, 0.2, 0.4 ... 10 s.
        let expected = [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000];
        for (pause, ms) in pauses.iter().zip(expected) {
            let ms = Duration::from_millis(ms);
            assert!(
                *pause <= ms && ms - *pause < Duration::from_millis(50),
                "{pauses:?}"
            );
        }
        reopening.delivered();
        let pause = reopening.broke().saturating_duration_since(Instant::now());
        assert!(pause <= FIRST_PAUSE, "{pause:?}");
    }

    #[test]
    fn a_stream_that_lived_a_while_is_opened_again_at_once() {
        let mut reopening = Reopening::new();
        reopening.quick = 5;
        reopening.opened = Instant::now() - STABLE;
        assert!(reopening.broke() <= Instant::now());
        assert_eq!(reopening.quick, 0);
    }
}
