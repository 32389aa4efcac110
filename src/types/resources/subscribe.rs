//! Subscriptions to single resources: the params of `resources/subscribe` and
//! `resources/unsubscribe`, and of the `notifications/resources/updated` they lead to.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Parameters of `resources/subscribe`.
///
/// See the example on [`Client::subscribe_resource`](crate::Client::subscribe_resource).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscribeRequestParams {
    /// The URI to watch.
    pub uri: String,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Parameters of `resources/unsubscribe`.
///
/// See the example on [`Client::subscribe_resource`](crate::Client::subscribe_resource).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnsubscribeRequestParams {
    /// The URI to stop watching.
    pub uri: String,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Parameters of `notifications/resources/updated`.
///
/// See the example on [`Client::subscribe_resource`](crate::Client::subscribe_resource).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdatedNotificationParams {
    /// The URI that changed; possibly a sub-resource of the one subscribed to.
    pub uri: String,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl SubscribeRequestParams {
    /// Parameters subscribing to `uri`.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{
    ///     ResourceUpdatedNotificationParams, SubscribeRequestParams, UnsubscribeRequestParams,
    /// };
    ///
    /// let uri = "file:///project/log.txt";
    /// let on = serde_json::to_value(SubscribeRequestParams::new(uri))?;
    /// let off = serde_json::to_value(UnsubscribeRequestParams::new(uri))?;
    /// let changed = serde_json::to_value(ResourceUpdatedNotificationParams::new(uri))?;
    /// assert!([on, off, changed].iter().all(|params| params == &json!({"uri": uri})));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(uri: impl Into<String>) -> SubscribeRequestParams {
        SubscribeRequestParams {
            uri: uri.into(),
            meta: None,
        }
    }
}

impl UnsubscribeRequestParams {
    /// Parameters unsubscribing from `uri`.
    ///
    /// See the example on [`SubscribeRequestParams::new`].
    pub fn new(uri: impl Into<String>) -> UnsubscribeRequestParams {
        UnsubscribeRequestParams {
            uri: uri.into(),
            meta: None,
        }
    }
}

impl ResourceUpdatedNotificationParams {
    /// Parameters announcing a change to `uri`.
    ///
    /// See the example on [`SubscribeRequestParams::new`].
    pub fn new(uri: impl Into<String>) -> ResourceUpdatedNotificationParams {
        ResourceUpdatedNotificationParams {
            uri: uri.into(),
            meta: None,
        }
    }
}
