//! How long a [`Manager`](crate::Manager) waits before reconnecting a server: doubling delays,
//! jittered so servers that failed together do not retry in step.

use std::time::Duration;

use super::ManagerOptions;

impl ManagerOptions {
    /// The delay before retry number `failures` (1 for the first retry).
    pub(crate) fn backoff(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(20);
        self.reconnect_initial
            .saturating_mul(1 << doublings)
            .min(self.reconnect_max)
    }

    /// [`backoff`](Self::backoff) shortened by up to a quarter at random, so servers that
    /// failed together (a network outage, a laptop waking up) do not all retry in step.
    pub(crate) fn backoff_with_jitter(&self, failures: u32, server: &str) -> Duration {
        use std::collections::hash_map::DefaultHasher;
        use std::hash::{Hash, Hasher};
        let mut hasher = DefaultHasher::new();
        std::time::SystemTime::now().hash(&mut hasher);
        server.hash(&mut hasher);
        failures.hash(&mut hasher);
        let unit = (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64;
        // Scaling the whole delay by 0.75..1 overflows (a panic in `mul_f64`) when it is
        // near `Duration::MAX`; scaling only the quarter that may be cut never does.
        let delay = self.backoff(failures);
        delay.saturating_sub((delay / 4).mul_f64(1.0 - unit))
    }
}
