//! Roots: the directories and files the client lets a server work on.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One root, a `file://` URI the server may operate on.
///
/// See the example on
/// [`Client::notify_roots_list_changed`](crate::Client::notify_roots_list_changed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI; `file://` for now.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The client's answer to `roots/list`.
///
/// See the example on
/// [`Client::notify_roots_list_changed`](crate::Client::notify_roots_list_changed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    #[serde(default)]
    pub roots: Vec<Root>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Root {
    /// A root with a URI and no name.
    ///
    /// See the example on
    /// [`Client::notify_roots_list_changed`](crate::Client::notify_roots_list_changed).
    pub fn new(uri: impl Into<String>) -> Root {
        Root {
            uri: uri.into(),
            name: None,
            meta: None,
        }
    }

    /// Sets the display name.
    ///
    /// See the example on
    /// [`Client::notify_roots_list_changed`](crate::Client::notify_roots_list_changed).
    pub fn with_name(mut self, name: impl Into<String>) -> Root {
        self.name = Some(name.into());
        self
    }
}

impl ListRootsResult {
    /// A result listing `roots`.
    ///
    /// See the example on
    /// [`Client::notify_roots_list_changed`](crate::Client::notify_roots_list_changed).
    pub fn new(roots: Vec<Root>) -> ListRootsResult {
        ListRootsResult { roots, meta: None }
    }

    /// The result without the roots the spec forbids to expose: not `file://`, or with a `..`
    /// segment (even percent-encoded). Each is logged as a warning: it is the client's own
    /// misconfiguration.
    pub(crate) fn file_roots_only(mut self) -> ListRootsResult {
        self.roots.retain(|root| {
            let why = if !root.is_file() {
                "root URIs must be file:// URIs"
            } else if root.climbs() {
                "a root's path must not contain `..`"
            } else {
                return true;
            };
            log::warn!(
                "leaving the root {} out of roots/list: {why}",
                crate::redact::url(&root.uri)
            );
            false
        });
        self
    }
}

impl Root {
    /// Whether the URI has the `file` scheme (schemes are case-insensitive).
    fn is_file(&self) -> bool {
        self.uri
            .get(..7)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("file://"))
    }

    /// Whether the path has a `..` segment, also written `%2e%2e` (any case) or with a
    /// backslash separator.
    fn climbs(&self) -> bool {
        let path = self.uri.get(7..).unwrap_or_default();
        let path = path.split(['?', '#']).next().unwrap_or_default();
        path.split(['/', '\\']).any(|segment| {
            let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
            decoded == ".."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn roots_round_trip() {
        let r = ListRootsResult::new(vec![
            Root::new("file:///home/me/project").with_name("project"),
            Root::new("file:///tmp"),
        ]);
        let v = json!({"roots": [{"uri": "file:///home/me/project", "name": "project"},
                                 {"uri": "file:///tmp"}]});
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        assert_eq!(serde_json::from_value::<ListRootsResult>(v).unwrap(), r);
        assert_eq!(
            serde_json::to_value(ListRootsResult::default()).unwrap(),
            json!({"roots": []})
        );
    }

    #[test]
    fn only_file_roots_are_kept() {
        let all = ListRootsResult::new(vec![
            Root::new("file:///a"),
            Root::new("https://example.com/repo"),
            Root::new("FILE:///B"),
            Root::new("/plain/path"),
            Root::new("file:"),
            Root::new("file:///home/me/project/../../etc"),
            Root::new("file:///home/me/%2E%2e/secrets"),
            Root::new("file:///C:/work\\..\\private"),
            Root::new("file:///home/me/..hidden/v1.2..3"),
        ]);
        let kept: Vec<_> = all
            .file_roots_only()
            .roots
            .into_iter()
            .map(|r| r.uri)
            .collect();
        assert_eq!(
            kept,
            ["file:///a", "FILE:///B", "file:///home/me/..hidden/v1.2..3"]
        );
    }
}
