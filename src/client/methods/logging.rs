//! The server's log messages: the level asked for, in either era.

use serde_json::json;

use crate::error::Result;
use crate::types::LoggingLevel;

use super::super::{Client, RequestOptions};

impl Client {
    /// Sets the lowest level of `notifications/message` log lines the server sends, in either
    /// era: `logging/setLevel` in the handshake era (and again at the start of a new session
    /// after the server ends one), the level in every later request's `_meta` in the
    /// stateless era, where nothing is sent now. To ask from the first request on, use
    /// [`Options::with_log_level`](crate::Options::with_log_level).
    ///
    /// ```no_run
    /// use umcp::types::{LoggingLevel, ServerNotification};
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// client.set_logging_level(LoggingLevel::Warning)?;
    /// // The server's log messages now arrive as notifications:
    /// while let Some(notification) = client.notifications().try_recv() {
    ///     if let ServerNotification::LoggingMessage(message) = notification {
    ///         log::warn!("server: {}", message.data);
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// In the handshake era, [`Error::Unsupported`](crate::Error::Unsupported) without the `logging` capability, or any
    /// error of [`Client::request`].
    pub fn set_logging_level(&self, level: LoggingLevel) -> Result<()> {
        self.set_logging_level_with(level, &RequestOptions::default())
    }

    /// [`Client::set_logging_level`] with per-request options.
    ///
    /// See the example on [`Client::set_logging_level`].
    ///
    /// # Errors
    ///
    /// As [`Client::set_logging_level`], plus [`Error::Cancelled`](crate::Error::Cancelled).
    pub fn set_logging_level_with(
        &self,
        level: LoggingLevel,
        options: &RequestOptions,
    ) -> Result<()> {
        let era = &self.shared.era;
        // Stateless servers honour the level in `_meta` whether or not they list `logging`.
        if era.modern_version().is_none() {
            self.require("logging/setLevel", "logging")?;
            let params = json!({ "level": level });
            self.request_raw("logging/setLevel", Some(params), options)?;
        }
        // Stateless requests carry it from now on; a new handshake-era session is told again.
        era.set_log_level(level);
        Ok(())
    }
}
