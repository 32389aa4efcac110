//! Printing a subscription's events as they arrive, for command-line tools (`watch`).

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Error, Result};

use super::{Subscription, SubscriptionEnd, SubscriptionEvent};

/// How often [`Subscription::write_events`] asks its `stop` callback.
const STOP_CHECK: Duration = Duration::from_millis(200);

impl SubscriptionEvent {
    /// The event as one JSON object: `{"method", "params"}` for a notification (the params as
    /// the server sent them, without its `_meta`), `{"event": "resubscribed", "reason"}` for
    /// a gap.
    ///
    /// See the example on [`Client::listen`](crate::Client::listen).
    pub fn to_json(&self) -> Value {
        match self {
            SubscriptionEvent::Notification(note) => {
                let mut message = note.to_notification();
                if let Some(Value::Object(params)) = &mut message.params {
                    params.remove("_meta");
                }
                match message.params {
                    Some(params) => json!({ "method": message.method, "params": params }),
                    None => json!({ "method": message.method }),
                }
            }
            SubscriptionEvent::Resubscribed { reason } => {
                json!({ "event": "resubscribed", "reason": reason })
            }
        }
    }

    /// The event as one short line of text: the method and, for a resource update, its URI.
    ///
    /// See the example on [`Client::listen`](crate::Client::listen).
    pub fn to_text(&self) -> String {
        match self {
            SubscriptionEvent::Notification(note) => {
                let message = note.to_notification();
                let uri = message
                    .params
                    .as_ref()
                    .and_then(|p| p.get("uri"))
                    .and_then(Value::as_str);
                match uri {
                    Some(uri) => format!("{} {uri}", message.method),
                    None => message.method,
                }
            }
            SubscriptionEvent::Resubscribed { reason } => {
                format!("re-subscribed ({reason}); notifications may have been missed")
            }
        }
    }
}

impl Subscription {
    /// Writes each event to `out` as it arrives, one line each ([`to_json`] with `json`,
    /// else [`to_text`]), flushing after every line, until `deadline` passes, `stop` returns
    /// `true` (asked at least every 200 ms), or the subscription ends. Returns the number of
    /// lines written and how the subscription ended, if it did.
    ///
    /// [`to_json`]: SubscriptionEvent::to_json
    /// [`to_text`]: SubscriptionEvent::to_text
    ///
    /// ```no_run
    /// use std::time::{Duration, Instant};
    /// use umcp::types::SubscriptionFilter;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let subscription = client.listen(SubscriptionFilter::all_lists())?;
    /// let mut out = Vec::new(); // or a locked stdout, as `umcp watch` does
    /// let deadline = Instant::now() + Duration::from_secs(60);
    /// let (lines, end) = subscription.write_events(&mut out, true, Some(deadline), &|| false)?;
    /// log::info!("{lines} JSON lines; ended: {end:?}");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Writing to `out` failed.
    pub fn write_events(
        &self,
        out: &mut dyn Write,
        json: bool,
        deadline: Option<Instant>,
        stop: &dyn Fn() -> bool,
    ) -> Result<(u64, Option<SubscriptionEnd>)> {
        let mut written = 0u64;
        loop {
            if stop() {
                return Ok((written, None));
            }
            let now = Instant::now();
            let wait = match deadline {
                Some(deadline) if deadline <= now => return Ok((written, None)),
                Some(deadline) => (deadline - now).min(STOP_CHECK),
                None => STOP_CHECK,
            };
            match self.recv_timeout(wait) {
                Some(event) => {
                    let line = if json {
                        event.to_json().to_string()
                    } else {
                        event.to_text()
                    };
                    writeln!(out, "{line}")
                        .and_then(|()| out.flush())
                        .map_err(Error::io)?;
                    written = written.saturating_add(1);
                }
                None => {
                    if let Some(end) = self.ended() {
                        return Ok((written, Some(end)));
                    }
                }
            }
        }
    }
}
