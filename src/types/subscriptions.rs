//! `subscriptions/listen` (2026-07-28): the filter a client opts in with, and what the
//! server answers on the stream.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `notifications/subscriptions/acknowledged`: the first message of a subscription.
///
/// See the example on [`Client::listen`](crate::Client::listen).
pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// The method that opens a subscription.
///
/// See the example on [`Client::listen`](crate::Client::listen).
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

/// Which notifications a subscription wants (`SubscriptionFilter` in the schema). An omitted
/// (here: `false` or empty) field means "not wanted".
///
/// See the example on [`Client::listen`](crate::Client::listen).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// Receive `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub tools_list_changed: bool,
    /// Receive `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub prompts_list_changed: bool,
    /// Receive `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub resources_list_changed: bool,
    /// Receive `notifications/resources/updated` for these resource URIs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_subscriptions: Vec<String>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl SubscriptionFilter {
    /// An empty filter: nothing wanted yet.
    ///
    /// ```
    /// use umcp::types::SubscriptionFilter;
    ///
    /// let wanted = SubscriptionFilter::new().tools().resource("file:///project/logs/");
    /// assert!(wanted.wants("notifications/tools/list_changed", None));
    /// // A resource under a subscribed URI counts too:
    /// let log = Some("file:///project/logs/build.log");
    /// assert!(wanted.wants("notifications/resources/updated", log));
    /// assert!(!wanted.wants("notifications/prompts/list_changed", None));
    /// // What a server honours is what both sides have:
    /// let offered = SubscriptionFilter::all_lists();
    /// let honoured = wanted.intersection(&offered);
    /// assert_eq!(honoured, SubscriptionFilter::new().tools());
    /// assert!(SubscriptionFilter::new().is_empty());
    /// assert!(!SubscriptionFilter::new().prompts().resources().is_empty());
    /// ```
    pub fn new() -> SubscriptionFilter {
        SubscriptionFilter::default()
    }

    /// Every list change: tools, prompts and resources (what a watcher usually wants).
    ///
    /// See the example on
    /// [`types::SubscriptionFilter::new`](crate::types::SubscriptionFilter::new).
    pub fn all_lists() -> SubscriptionFilter {
        SubscriptionFilter::new().tools().prompts().resources()
    }

    /// Adds `notifications/tools/list_changed`.
    ///
    /// See the example on
    /// [`types::SubscriptionFilter::new`](crate::types::SubscriptionFilter::new).
    pub fn tools(mut self) -> SubscriptionFilter {
        self.tools_list_changed = true;
        self
    }

    /// Adds `notifications/prompts/list_changed`.
    ///
    /// See the example on
    /// [`types::SubscriptionFilter::new`](crate::types::SubscriptionFilter::new).
    pub fn prompts(mut self) -> SubscriptionFilter {
        self.prompts_list_changed = true;
        self
    }

    /// Adds `notifications/resources/list_changed`.
    ///
    /// See the example on
    /// [`types::SubscriptionFilter::new`](crate::types::SubscriptionFilter::new).
    pub fn resources(mut self) -> SubscriptionFilter {
        self.resources_list_changed = true;
        self
    }

    /// Adds `notifications/resources/updated` for `uri`.
    ///
    /// See the example on
    /// [`types::SubscriptionFilter::new`](crate::types::SubscriptionFilter::new).
    pub fn resource(mut self, uri: impl Into<String>) -> SubscriptionFilter {
        let uri = uri.into();
        if !self.resource_subscriptions.contains(&uri) {
            self.resource_subscriptions.push(uri);
        }
        self
    }

    /// Whether nothing is wanted.
    ///
    /// See the example on
    /// [`types::SubscriptionFilter::new`](crate::types::SubscriptionFilter::new).
    pub fn is_empty(&self) -> bool {
        *self == SubscriptionFilter::default()
    }

    /// What both filters want.
    ///
    /// See the example on
    /// [`types::SubscriptionFilter::new`](crate::types::SubscriptionFilter::new).
    pub fn intersection(&self, other: &SubscriptionFilter) -> SubscriptionFilter {
        SubscriptionFilter {
            tools_list_changed: self.tools_list_changed && other.tools_list_changed,
            prompts_list_changed: self.prompts_list_changed && other.prompts_list_changed,
            resources_list_changed: self.resources_list_changed && other.resources_list_changed,
            resource_subscriptions: self
                .resource_subscriptions
                .iter()
                .filter(|uri| other.resource_subscriptions.contains(uri))
                .cloned()
                .collect(),
        }
    }

    /// Whether a notification with this method (and, for `notifications/resources/updated`,
    /// this URI) is one the filter wants. An updated URI may be a sub-resource of a
    /// subscribed one, so a prefix match counts.
    ///
    /// See the example on
    /// [`types::SubscriptionFilter::new`](crate::types::SubscriptionFilter::new).
    pub fn wants(&self, method: &str, uri: Option<&str>) -> bool {
        match method {
            "notifications/tools/list_changed" => self.tools_list_changed,
            "notifications/prompts/list_changed" => self.prompts_list_changed,
            "notifications/resources/list_changed" => self.resources_list_changed,
            "notifications/resources/updated" => uri.is_some_and(|uri| {
                self.resource_subscriptions
                    .iter()
                    .any(|s| uri == s || uri.starts_with(s.as_str()))
            }),
            _ => false,
        }
    }
}

/// The params of `subscriptions/listen`.
///
/// See the example on [`Client::listen`](crate::Client::listen).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsListenRequestParams {
    /// The notifications the client opts in to on this stream.
    pub notifications: SubscriptionFilter,
}

impl SubscriptionsListenRequestParams {
    /// Params asking for `notifications`.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{SubscriptionFilter, SubscriptionsListenRequestParams};
    ///
    /// let params = SubscriptionsListenRequestParams::new(SubscriptionFilter::new().tools());
    /// let wire = serde_json::to_value(&params)?;
    /// assert_eq!(wire, json!({"notifications": {"toolsListChanged": true}}));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(notifications: SubscriptionFilter) -> SubscriptionsListenRequestParams {
        SubscriptionsListenRequestParams { notifications }
    }
}

/// The params of `notifications/subscriptions/acknowledged`: the subset the server honours.
///
/// See the example on [`Client::listen`](crate::Client::listen).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// The subset of the requested notification types the server agreed to honour.
    #[serde(default)]
    pub notifications: SubscriptionFilter,
}

/// The result of `subscriptions/listen`, sent only when the server ends the subscription
/// gracefully; apart from `_meta` (which names the subscription) its body is empty.
///
/// See the example on [`Client::listen`](crate::Client::listen).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsListenResult {
    /// `resultType` (`complete`), when present.
    #[serde(
        rename = "resultType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub result_type: Option<String>,
    /// The result's `_meta`, carrying `io.modelcontextprotocol/subscriptionId`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::SubscriptionFilter;
    use serde_json::json;

    #[test]
    fn omitted_means_not_wanted_on_the_wire_and_back() {
        let filter = SubscriptionFilter::all_lists().resource("file:///a");
        let wire = serde_json::to_value(&filter).unwrap();
        assert_eq!(
            wire,
            json!({"toolsListChanged": true, "promptsListChanged": true,
                   "resourcesListChanged": true, "resourceSubscriptions": ["file:///a"]})
        );
        assert_eq!(
            serde_json::to_value(SubscriptionFilter::new().tools()).unwrap(),
            json!({"toolsListChanged": true})
        );
        let back: SubscriptionFilter =
            serde_json::from_value(json!({"toolsListChanged": false})).unwrap();
        assert!(back.is_empty());
    }

    #[test]
    fn updates_of_sub_resources_match_and_others_do_not() {
        let filter = SubscriptionFilter::new().resource("file:///dir/");
        let updated = "notifications/resources/updated";
        assert!(filter.wants(updated, Some("file:///dir/a.txt")));
        assert!(!filter.wants(updated, Some("file:///other")));
        assert!(!filter.wants("notifications/tools/list_changed", None));
        let honoured = filter.intersection(&SubscriptionFilter::all_lists());
        assert!(honoured.is_empty());
    }
}
