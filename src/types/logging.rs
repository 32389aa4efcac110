//! Server logging: `logging/setLevel` and `notifications/message`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A log severity, as in RFC 5424. Ordered from least (`Debug`) to most severe (`Emergency`).
///
/// See the example on [`Client::set_logging_level`](crate::Client::set_logging_level).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug-level messages.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant conditions.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// Parameters of `logging/setLevel`.
///
/// See the example on [`Client::set_logging_level`](crate::Client::set_logging_level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLevelRequestParams {
    /// The least severe level the server should send.
    pub level: LoggingLevel,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Parameters of `notifications/message`: one log entry from the server.
///
/// See the example on [`Client::set_logging_level`](crate::Client::set_logging_level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// The entry's severity.
    pub level: LoggingLevel,
    /// The name of the logger that wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The entry: a string or any JSON value.
    #[serde(default)]
    pub data: Value,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl LoggingLevel {
    /// Every level, least severe first.
    ///
    /// See the example on
    /// [`types::LoggingLevel::from_name`](crate::types::LoggingLevel::from_name).
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The wire name, e.g. `warning`.
    ///
    /// See the example on
    /// [`types::LoggingLevel::from_name`](crate::types::LoggingLevel::from_name).
    pub const fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }

    /// The level with the given wire name.
    ///
    /// ```
    /// use umcp::types::LoggingLevel;
    ///
    /// assert_eq!(LoggingLevel::from_name("warning"), Some(LoggingLevel::Warning));
    /// assert_eq!(LoggingLevel::Warning.as_str(), "warning");
    /// assert!(LoggingLevel::Error > LoggingLevel::Warning);
    /// assert_eq!(LoggingLevel::ALL.first(), Some(&LoggingLevel::Debug));
    /// ```
    pub fn from_name(name: &str) -> Option<LoggingLevel> {
        LoggingLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl SetLevelRequestParams {
    /// Parameters asking for `level` and above.
    ///
    /// ```
    /// use umcp::types::{LoggingLevel, SetLevelRequestParams};
    ///
    /// let params = SetLevelRequestParams::new(LoggingLevel::Warning);
    /// assert_eq!(serde_json::to_value(&params)?, serde_json::json!({"level": "warning"}));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(level: LoggingLevel) -> SetLevelRequestParams {
        SetLevelRequestParams { level, meta: None }
    }
}

impl LoggingMessageNotificationParams {
    /// An entry at `level` with `data`.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{LoggingLevel, LoggingMessageNotificationParams};
    ///
    /// let data = json!({"disk": "full"});
    /// let entry = LoggingMessageNotificationParams::new(LoggingLevel::Error, data)
    ///     .with_logger("storage");
    /// assert_eq!(serde_json::to_value(&entry)?, json!({
    ///     "level": "error", "logger": "storage", "data": {"disk": "full"},
    /// }));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(level: LoggingLevel, data: Value) -> LoggingMessageNotificationParams {
        LoggingMessageNotificationParams {
            level,
            logger: None,
            data,
            meta: None,
        }
    }

    /// Sets the logger name.
    ///
    /// See the example on [`LoggingMessageNotificationParams::new`].
    pub fn with_logger(mut self, logger: impl Into<String>) -> LoggingMessageNotificationParams {
        self.logger = Some(logger.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn levels_use_lowercase_names_and_order_by_severity() {
        for level in LoggingLevel::ALL {
            let v = serde_json::to_value(level).unwrap();
            assert_eq!(v, json!(level.as_str()));
            assert_eq!(serde_json::from_value::<LoggingLevel>(v).unwrap(), level);
            assert_eq!(LoggingLevel::from_name(level.as_str()), Some(level));
            assert_eq!(level.to_string(), level.as_str());
        }
        assert!(LoggingLevel::Debug < LoggingLevel::Warning);
        assert!(LoggingLevel::Alert < LoggingLevel::Emergency);
        assert_eq!(LoggingLevel::from_name("warn"), None);
        assert!(serde_json::from_value::<LoggingLevel>(json!("WARNING")).is_err());
    }

    #[test]
    fn set_level_params() {
        assert_eq!(
            serde_json::to_value(SetLevelRequestParams::new(LoggingLevel::Notice)).unwrap(),
            json!({"level": "notice"})
        );
    }

    #[test]
    fn message_params_round_trip() {
        let v = json!({"level": "error", "logger": "db", "data": {"error": "timeout", "ms": 5000}});
        let p: LoggingMessageNotificationParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.level, LoggingLevel::Error);
        assert_eq!(p.data["ms"], 5000);
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        let built =
            LoggingMessageNotificationParams::new(LoggingLevel::Info, json!("up")).with_logger("s");
        assert_eq!(
            serde_json::to_value(&built).unwrap(),
            json!({"level": "info", "logger": "s", "data": "up"})
        );
    }
}
