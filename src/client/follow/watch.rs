//! Printing a subscription's events as they arrive, for command-line tools (`watch`).

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Error, Result};

use super::listen::Subscription;
use super::state::{SubscriptionEnd, SubscriptionEvent};

/// How often [`Subscription::for_each_event`] asks its `stop` callback.
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
        let end = self
            .for_each_event(deadline, stop, |event| {
                let line = if json {
                    event.to_json().to_string()
                } else {
                    event.to_text()
                };
                writeln!(out, "{line}").and_then(|()| out.flush())?;
                written = written.saturating_add(1);
                Ok::<(), std::io::Error>(())
            })
            .map_err(Error::io)?;
        Ok((written, end))
    }

    /// Hands each event to `on_event` as it arrives, until `deadline` passes, `stop` returns
    /// `true` (asked at least every 200 ms), `on_event` fails (its error is returned), or the
    /// subscription ends. Returns how the subscription ended, if it did.
    ///
    /// ```no_run
    /// use std::time::{Duration, Instant};
    /// use umcp::types::SubscriptionFilter;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let subscription = client.listen(SubscriptionFilter::new().tools())?;
    /// let deadline = Instant::now() + Duration::from_secs(60);
    /// let seen = std::cell::Cell::new(0);
    /// // Ten events at most, for a minute at most.
    /// let end = subscription.for_each_event(Some(deadline), &|| seen.get() >= 10, |event| {
    ///     seen.set(seen.get() + 1);
    ///     log::info!("{}", event.to_text());
    ///     Ok::<(), std::convert::Infallible>(())
    /// });
    /// log::info!("{} events; ended: {:?}", seen.get(), end);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The first error `on_event` returns.
    pub fn for_each_event<E>(
        &self,
        deadline: Option<Instant>,
        stop: &dyn Fn() -> bool,
        mut on_event: impl FnMut(SubscriptionEvent) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<SubscriptionEnd>, E> {
        loop {
            if stop() {
                return Ok(None);
            }
            let now = Instant::now();
            let wait = match deadline {
                Some(deadline) if deadline <= now => return Ok(None),
                Some(deadline) => (deadline - now).min(STOP_CHECK),
                None => STOP_CHECK,
            };
            match self.recv_timeout(wait) {
                Some(event) => on_event(event)?,
                None => {
                    if let Some(end) = self.ended() {
                        return Ok(Some(end));
                    }
                }
            }
        }
    }
}
