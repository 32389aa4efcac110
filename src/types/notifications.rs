//! Notifications a server sends the client, decoded by method.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::elicitation::ElicitationCompleteNotificationParams;
use super::logging::LoggingMessageNotificationParams;
use super::resources::ResourceUpdatedNotificationParams;
use super::utilities::{CancelledNotificationParams, ProgressNotificationParams};
use crate::jsonrpc::Notification;

/// A notification from the server.
///
/// Decoding never fails: a method this crate does not know, or a known method whose params do
/// not fit, becomes [`ServerNotification::Other`] with the params as received.
///
/// See the example on [`Client::notifications`](crate::Client::notifications).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/progress`.
    Progress(ProgressNotificationParams),
    /// `notifications/message`: a log entry.
    LoggingMessage(LoggingMessageNotificationParams),
    /// `notifications/tools/list_changed`.
    ToolListChanged,
    /// `notifications/resources/list_changed`.
    ResourceListChanged,
    /// `notifications/prompts/list_changed`.
    PromptListChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUpdatedNotificationParams),
    /// `notifications/cancelled`: the server gave up on one of its own requests.
    Cancelled(CancelledNotificationParams),
    /// `notifications/elicitation/complete` (2025-11-25).
    ElicitationComplete(ElicitationCompleteNotificationParams),
    /// Anything else, as received.
    Other {
        /// The method name.
        method: String,
        /// The params, if any.
        params: Option<Value>,
    },
}

const PROGRESS: &str = "notifications/progress";
const MESSAGE: &str = "notifications/message";
const TOOLS_CHANGED: &str = "notifications/tools/list_changed";
const RESOURCES_CHANGED: &str = "notifications/resources/list_changed";
const PROMPTS_CHANGED: &str = "notifications/prompts/list_changed";
const RESOURCE_UPDATED: &str = "notifications/resources/updated";
const CANCELLED: &str = "notifications/cancelled";
const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";

impl ServerNotification {
    /// Decodes a JSON-RPC notification by its method.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::jsonrpc::Notification;
    /// use umcp::types::ServerNotification;
    ///
    /// let params = Some(json!({"uri": "file:///a"}));
    /// let wire = Notification::new("notifications/resources/updated", params);
    /// let decoded = ServerNotification::from_notification(wire.clone());
    /// assert!(matches!(&decoded, ServerNotification::ResourceUpdated(p) if p.uri == "file:///a"));
    /// assert_eq!(decoded.to_notification(), wire);
    /// // Params that do not fit their method are kept as received.
    /// let odd = Notification::new("notifications/progress", Some(json!({"progress": "half"})));
    /// assert!(matches!(ServerNotification::from(odd), ServerNotification::Other { .. }));
    /// ```
    pub fn from_notification(notification: Notification) -> ServerNotification {
        let Notification { method, params } = notification;
        let decoded = match method.as_str() {
            PROGRESS => decode(params.as_ref()).map(ServerNotification::Progress),
            MESSAGE => decode(params.as_ref()).map(ServerNotification::LoggingMessage),
            TOOLS_CHANGED => Some(ServerNotification::ToolListChanged),
            RESOURCES_CHANGED => Some(ServerNotification::ResourceListChanged),
            PROMPTS_CHANGED => Some(ServerNotification::PromptListChanged),
            RESOURCE_UPDATED => decode(params.as_ref()).map(ServerNotification::ResourceUpdated),
            CANCELLED => decode(params.as_ref()).map(ServerNotification::Cancelled),
            ELICITATION_COMPLETE => {
                decode(params.as_ref()).map(ServerNotification::ElicitationComplete)
            }
            _ => None,
        };
        decoded.unwrap_or(ServerNotification::Other { method, params })
    }

    /// The method name, e.g. `notifications/progress`.
    ///
    /// See the example on [`Client::notifications`](crate::Client::notifications).
    pub fn method(&self) -> &str {
        match self {
            ServerNotification::Progress(_) => PROGRESS,
            ServerNotification::LoggingMessage(_) => MESSAGE,
            ServerNotification::ToolListChanged => TOOLS_CHANGED,
            ServerNotification::ResourceListChanged => RESOURCES_CHANGED,
            ServerNotification::PromptListChanged => PROMPTS_CHANGED,
            ServerNotification::ResourceUpdated(_) => RESOURCE_UPDATED,
            ServerNotification::Cancelled(_) => CANCELLED,
            ServerNotification::ElicitationComplete(_) => ELICITATION_COMPLETE,
            ServerNotification::Other { method, .. } => method,
        }
    }

    /// The notification as JSON-RPC, e.g. for a test server to send.
    ///
    /// See the example on [`ServerNotification::from_notification`].
    pub fn to_notification(&self) -> Notification {
        let params = match self {
            ServerNotification::Progress(p) => encode(p),
            ServerNotification::LoggingMessage(p) => encode(p),
            ServerNotification::ResourceUpdated(p) => encode(p),
            ServerNotification::Cancelled(p) => encode(p),
            ServerNotification::ElicitationComplete(p) => encode(p),
            ServerNotification::ToolListChanged
            | ServerNotification::ResourceListChanged
            | ServerNotification::PromptListChanged => None,
            ServerNotification::Other { params, .. } => params.clone(),
        };
        Notification::new(self.method(), params)
    }
}

impl From<Notification> for ServerNotification {
    fn from(notification: Notification) -> ServerNotification {
        ServerNotification::from_notification(notification)
    }
}

/// Decodes params by reference, so the original stays available for `Other` on failure.
fn decode<T: DeserializeOwned>(params: Option<&Value>) -> Option<T> {
    crate::jsonrpc::decode_value(params.unwrap_or(&Value::Null)).ok()
}

fn encode<T: Serialize>(params: &T) -> Option<Value> {
    // These types serialise to JSON objects and cannot fail.
    serde_json::to_value(params).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{LoggingLevel, ProgressToken};
    use serde_json::json;

    fn note(method: &str, params: Option<Value>) -> ServerNotification {
        ServerNotification::from_notification(Notification::new(method, params))
    }

    #[test]
    fn decodes_each_known_method() {
        let p = note(
            PROGRESS,
            Some(json!({"progressToken": 3, "progress": 1, "total": 4})),
        );
        match &p {
            ServerNotification::Progress(p) => {
                assert_eq!(p.progress_token, ProgressToken::from(3));
                assert_eq!(p.total, Some(4.0));
            }
            other => panic!("{other:?}"),
        }
        let m = note(
            MESSAGE,
            Some(json!({"level": "warning", "data": "disk low"})),
        );
        assert!(
            matches!(&m, ServerNotification::LoggingMessage(l) if l.level == LoggingLevel::Warning)
        );
        assert_eq!(
            note(TOOLS_CHANGED, None),
            ServerNotification::ToolListChanged
        );
        assert_eq!(
            note(RESOURCES_CHANGED, Some(json!({}))),
            ServerNotification::ResourceListChanged
        );
        assert_eq!(
            note(PROMPTS_CHANGED, Some(json!({"_meta": {}}))),
            ServerNotification::PromptListChanged
        );
        let u = note(RESOURCE_UPDATED, Some(json!({"uri": "file:///a"})));
        assert!(matches!(&u, ServerNotification::ResourceUpdated(r) if r.uri == "file:///a"));
        let c = note(
            CANCELLED,
            Some(json!({"requestId": "s-1", "reason": "user"})),
        );
        assert!(
            matches!(&c, ServerNotification::Cancelled(c) if c.reason.as_deref() == Some("user"))
        );
        let e = note(ELICITATION_COMPLETE, Some(json!({"elicitationId": "e"})));
        assert!(matches!(&e, ServerNotification::ElicitationComplete(_)));
        for n in [p, m, u, c, e] {
            assert_eq!(ServerNotification::from(n.to_notification()), n);
        }
    }

    #[test]
    fn unknown_methods_are_preserved() {
        let params = json!({"taskId": "t", "status": "working"});
        let n = note("notifications/tasks/status", Some(params.clone()));
        assert_eq!(n.method(), "notifications/tasks/status");
        assert_eq!(
            n,
            ServerNotification::Other {
                method: "notifications/tasks/status".into(),
                params: Some(params.clone())
            }
        );
        assert_eq!(
            n.to_notification(),
            Notification::new("notifications/tasks/status", Some(params))
        );
        assert_eq!(
            note("x", None).to_notification(),
            Notification::new("x", None)
        );
    }

    #[test]
    fn known_methods_with_bad_params_become_other() {
        let bad = json!({"progress": "lots"});
        let n = note(PROGRESS, Some(bad.clone()));
        assert_eq!(
            n,
            ServerNotification::Other {
                method: PROGRESS.into(),
                params: Some(bad)
            }
        );
        assert_eq!(n.method(), PROGRESS);
        assert!(matches!(
            note(RESOURCE_UPDATED, None),
            ServerNotification::Other { params: None, .. }
        ));
        assert!(matches!(
            note(MESSAGE, Some(json!({"level": "verbose", "data": 1}))),
            ServerNotification::Other { .. }
        ));
    }

    #[test]
    fn list_changed_notifications_carry_no_params() {
        for n in [
            ServerNotification::ToolListChanged,
            ServerNotification::ResourceListChanged,
            ServerNotification::PromptListChanged,
        ] {
            let wire = n.to_notification();
            assert!(wire.params.is_none());
            assert!(wire.method.ends_with("/list_changed"));
            assert_eq!(ServerNotification::from(wire), n);
        }
    }
}
