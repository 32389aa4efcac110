//! Progress and cancellation, the notifications that accompany any request.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::jsonrpc::RequestId;

/// The token a request puts in `_meta.progressToken` to ask for progress notifications: a
/// string or an integer, like a request id.
///
/// ```
/// use umcp::types::ProgressToken;
///
/// let (number, text) = (ProgressToken::from(3), ProgressToken::from("copy-1"));
/// assert_eq!((number.as_i64(), number.as_str()), (Some(3), None));
/// assert_eq!((text.as_i64(), text.as_str()), (None, Some("copy-1")));
/// assert_eq!(text.to_value(), serde_json::json!("copy-1"));
/// ```
///
/// [`WithOptions`](crate::WithOptions) shows one in use.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProgressToken(RequestId);

/// Parameters of `notifications/progress`.
///
/// See the example on [`WithOptions`](crate::WithOptions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token of the request this progress belongs to.
    pub progress_token: ProgressToken,
    /// Progress so far; it increases with every notification and may be fractional.
    pub progress: f64,
    /// The total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What is happening (since 2025-03-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Parameters of `notifications/cancelled`.
///
/// See the example on [`CancelHandle`](crate::CancelHandle).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The request being cancelled. Optional only since 2025-11-25, where tasks are cancelled
    /// another way; always set when cancelling a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs or a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ProgressToken {
    /// The integer value, if the token is an integer.
    ///
    /// See the example on [`ProgressToken`].
    pub fn as_i64(&self) -> Option<i64> {
        self.0.as_i64()
    }

    /// The string value, if the token is a string.
    ///
    /// See the example on [`ProgressToken`].
    pub fn as_str(&self) -> Option<&str> {
        self.0.as_str()
    }

    /// The token as a JSON value, ready for `_meta.progressToken`.
    ///
    /// See the example on [`ProgressToken`].
    pub fn to_value(&self) -> Value {
        self.0.to_value()
    }
}

impl From<RequestId> for ProgressToken {
    fn from(id: RequestId) -> ProgressToken {
        ProgressToken(id)
    }
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> ProgressToken {
        ProgressToken(n.into())
    }
}

impl From<i32> for ProgressToken {
    fn from(n: i32) -> ProgressToken {
        ProgressToken(n.into())
    }
}

impl From<String> for ProgressToken {
    fn from(s: String) -> ProgressToken {
        ProgressToken(s.into())
    }
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> ProgressToken {
        ProgressToken(s.into())
    }
}

impl fmt::Display for ProgressToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl ProgressNotificationParams {
    /// Progress `progress` for `token`, with no total or message.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::ProgressNotificationParams;
    ///
    /// let step = ProgressNotificationParams::new("copy-1", 2.0)
    ///     .with_total(5.0)
    ///     .with_message("copying b.txt");
    /// assert_eq!(serde_json::to_value(&step)?, json!({
    ///     "progressToken": "copy-1", "progress": 2.0, "total": 5.0, "message": "copying b.txt",
    /// }));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(token: impl Into<ProgressToken>, progress: f64) -> ProgressNotificationParams {
        ProgressNotificationParams {
            progress_token: token.into(),
            progress,
            total: None,
            message: None,
            meta: None,
        }
    }

    /// Sets the total.
    ///
    /// See the example on [`ProgressNotificationParams::new`].
    pub fn with_total(mut self, total: f64) -> ProgressNotificationParams {
        self.total = Some(total);
        self
    }

    /// Sets the message.
    ///
    /// See the example on [`ProgressNotificationParams::new`].
    pub fn with_message(mut self, message: impl Into<String>) -> ProgressNotificationParams {
        self.message = Some(message.into());
        self
    }
}

impl CancelledNotificationParams {
    /// Cancels the request `request_id`.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::CancelledNotificationParams;
    ///
    /// let cancel = CancelledNotificationParams::new(7.into()).with_reason("gave up");
    /// assert_eq!(serde_json::to_value(&cancel)?, json!({"requestId": 7, "reason": "gave up"}));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(request_id: RequestId) -> CancelledNotificationParams {
        CancelledNotificationParams {
            request_id: Some(request_id),
            reason: None,
            meta: None,
        }
    }

    /// Sets the reason.
    ///
    /// See the example on [`CancelledNotificationParams::new`].
    pub fn with_reason(mut self, reason: impl Into<String>) -> CancelledNotificationParams {
        self.reason = Some(reason.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn progress_tokens_are_strings_or_integers() {
        let int: ProgressToken = serde_json::from_value(json!(42)).unwrap();
        assert_eq!(int.as_i64(), Some(42));
        assert_eq!(int, ProgressToken::from(42));
        assert_eq!(int, ProgressToken::from(RequestId::from(42)));
        let s: ProgressToken = serde_json::from_value(json!("abc")).unwrap();
        assert_eq!(s.as_str(), Some("abc"));
        assert_eq!(s.to_value(), json!("abc"));
        assert_ne!(ProgressToken::from("1"), ProgressToken::from(1));
        assert_eq!(ProgressToken::from(String::from("x")).to_string(), "\"x\"");
        assert!(serde_json::from_value::<ProgressToken>(json!(null)).is_err());
    }

    #[test]
    fn progress_params_read_every_version() {
        // 2024-11-05 had no message; later versions allow fractional progress and totals.
        let old: ProgressNotificationParams =
            serde_json::from_value(json!({"progressToken": 1, "progress": 3})).unwrap();
        assert_eq!(old, ProgressNotificationParams::new(1, 3.0));
        let v = json!({"progressToken": "t", "progress": 0.5, "total": 1.0, "message": "half"});
        let new: ProgressNotificationParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(new.message.as_deref(), Some("half"));
        assert_eq!(serde_json::to_value(&new).unwrap(), v);
        let built = ProgressNotificationParams::new("t", 0.5)
            .with_total(1.0)
            .with_message("half");
        assert_eq!(built, new);
    }

    #[test]
    fn cancelled_params_with_and_without_an_id() {
        let p = CancelledNotificationParams::new(RequestId::from(7)).with_reason("timed out");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"requestId": 7, "reason": "timed out"})
        );
        let no_id: CancelledNotificationParams = serde_json::from_value(json!({})).unwrap();
        assert_eq!(no_id.request_id, None);
        let s: CancelledNotificationParams =
            serde_json::from_value(json!({"requestId": "r"})).unwrap();
        assert_eq!(s.request_id, Some(RequestId::from("r")));
    }
}
