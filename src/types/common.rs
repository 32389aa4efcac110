//! Small pieces shared by many MCP messages: roles, annotations, icons, implementation info.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

mod role;

pub use role::Role;

/// Hints for the client about how to use or display an object (since 2025-03-26).
///
/// ```
/// use serde_json::json;
/// use umcp::types::{ContentBlock, Role};
///
/// let block = ContentBlock::from_value(json!({
///     "type": "text",
///     "text": "Disk almost full",
///     "annotations": { "audience": ["user"], "priority": 0.9 }
/// }));
/// let annotations = block.annotations().cloned().unwrap_or_default();
/// assert_eq!(annotations.audience, Some(vec![Role::User]));
/// assert!(annotations.priority.is_some_and(|p| p > 0.5));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is meant for; may name both roles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// How important the object is, from 0 (optional) to 1 (effectively required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// When the underlying resource last changed, as an ISO 8601 string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// An icon a user interface may show for a server, tool, prompt or resource (since 2025-11-25).
///
/// The library only carries the metadata. Clients that render icons should accept only
/// `https:` and `data:` sources and fetch them without credentials.
///
/// ```
/// use umcp::types::{Icon, Implementation};
///
/// let icon = Icon::new("https://agent.example.com/icon-dark.png")
///     .with_mime_type("image/png")
///     .with_sizes(vec!["48x48".into(), "96x96".into()])
///     .with_theme("dark");
/// let info = Implementation::new("my-agent", "1.0.0")
///     .with_title("My Agent")
///     .with_description("Files and search for the team")
///     .with_website_url("https://agent.example.com")
///     .with_icons(vec![icon]);
/// assert_eq!(info.display_name(), "My Agent");
/// let wire = serde_json::to_value(&info).unwrap_or_default();
/// assert_eq!(wire["icons"][0]["mimeType"], "image/png");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An `https:` URL or a `data:` URI holding the image.
    pub src: String,
    /// The MIME type, when the source's own type is missing or generic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes the icon suits, each `WxH` (e.g. `48x48`) or `any`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The background the icon is drawn for: `light` or `dark`. Kept as a string so a new theme
    /// name never makes a whole listing unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

/// The name and version of an MCP client or server, sent in `initialize`.
///
/// See the example on [`Client::connect_with_options`](crate::Client::connect_with_options).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// The programmatic name.
    pub name: String,
    /// The version. Required by the spec; an omitted or `null` version reads as an empty
    /// string so one sloppy server does not fail the handshake.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub version: String,
    /// A human-readable display name (since 2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the implementation does (since 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons for a user interface (since 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// The implementation's website (since 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

/// Parameters that carry nothing but optional `_meta`, e.g. for `ping`.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EmptyParams {
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A result that carries no data, e.g. for `ping` or `logging/setLevel`.
///
/// It reads from any JSON value, keeping `_meta` when the value is an object, because a server
/// that answers `ping` with `null` still answered.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EmptyResult {
    /// Protocol-level metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Parameters of the paginated list requests (`tools/list`, `resources/list`, …).
///
/// See the example on [`Client::request`](crate::Client::request).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// The opaque `nextCursor` of the previous page; `None` asks for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// `{"type": "object"}`, the schema read when a server omits one it owes.
pub(super) fn object_schema() -> Value {
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    Value::Object(schema)
}

impl Icon {
    /// An icon with only its source.
    ///
    /// See the example on [`types::Icon`](crate::types::Icon).
    pub fn new(src: impl Into<String>) -> Icon {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
        }
    }

    /// Sets the MIME type.
    ///
    /// See the example on [`types::Icon`](crate::types::Icon).
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Icon {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the sizes.
    ///
    /// See the example on [`types::Icon`](crate::types::Icon).
    pub fn with_sizes(mut self, sizes: Vec<String>) -> Icon {
        self.sizes = Some(sizes);
        self
    }

    /// Sets the theme (`light` or `dark`).
    ///
    /// See the example on [`types::Icon`](crate::types::Icon).
    pub fn with_theme(mut self, theme: impl Into<String>) -> Icon {
        self.theme = Some(theme.into());
        self
    }
}

impl Implementation {
    /// An implementation with a name and a version.
    ///
    /// See the example on [`Client::connect_with_options`](crate::Client::connect_with_options).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Implementation {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            icons: None,
            website_url: None,
        }
    }

    /// Sets the display title.
    ///
    /// See the example on [`types::Icon`](crate::types::Icon).
    pub fn with_title(mut self, title: impl Into<String>) -> Implementation {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    ///
    /// See the example on [`types::Icon`](crate::types::Icon).
    pub fn with_description(mut self, description: impl Into<String>) -> Implementation {
        self.description = Some(description.into());
        self
    }

    /// Sets the icons.
    ///
    /// See the example on [`types::Icon`](crate::types::Icon).
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Implementation {
        self.icons = Some(icons);
        self
    }

    /// Sets the website URL.
    ///
    /// See the example on [`types::Icon`](crate::types::Icon).
    pub fn with_website_url(mut self, url: impl Into<String>) -> Implementation {
        self.website_url = Some(url.into());
        self
    }

    /// The name to show a person: the title when present, else the name.
    ///
    /// See the example on [`types::Icon`](crate::types::Icon).
    pub fn display_name(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
}

impl<'de> Deserialize<'de> for EmptyResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<EmptyResult, D::Error> {
        let meta = match Value::deserialize(deserializer)? {
            Value::Object(mut obj) => match obj.remove("_meta") {
                Some(Value::Object(meta)) => Some(meta),
                _ => None,
            },
            _ => None,
        };
        Ok(EmptyResult { meta })
    }
}

impl PaginatedRequestParams {
    /// Parameters asking for the page after `cursor`, or the first page for `None`.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::PaginatedRequestParams;
    ///
    /// let next = PaginatedRequestParams::new(Some("page-2"));
    /// assert_eq!(serde_json::to_value(next)?, json!({"cursor": "page-2"}));
    /// assert_eq!(serde_json::to_value(PaginatedRequestParams::new(None))?, json!({}));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(cursor: Option<&str>) -> PaginatedRequestParams {
        PaginatedRequestParams {
            cursor: cursor.map(str::to_owned),
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn implementation_reads_every_version_and_writes_only_what_is_set() {
        let old: Implementation =
            serde_json::from_value(json!({"name": "srv", "version": "1"})).unwrap();
        assert_eq!(old, Implementation::new("srv", "1"));
        assert_eq!(old.display_name(), "srv");
        assert_eq!(
            serde_json::to_value(&old).unwrap(),
            json!({"name": "srv", "version": "1"})
        );

        let new = json!({
            "name": "srv", "version": "2.1.0", "title": "Server", "description": "does things",
            "websiteUrl": "https://example.com",
            "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png",
                       "sizes": ["48x48"], "theme": "dark"}],
            "futureField": true
        });
        let info: Implementation = serde_json::from_value(new.clone()).unwrap();
        assert_eq!(info.display_name(), "Server");
        assert_eq!(info.website_url.as_deref(), Some("https://example.com"));
        let icon = &info.icons.as_ref().unwrap()[0];
        assert_eq!(icon.theme.as_deref(), Some("dark"));
        let mut expected = new;
        expected.as_object_mut().unwrap().remove("futureField");
        assert_eq!(serde_json::to_value(&info).unwrap(), expected);
    }

    #[test]
    fn implementation_tolerates_a_missing_version() {
        let info: Implementation = serde_json::from_value(json!({"name": "srv"})).unwrap();
        assert_eq!(info.version, "");
        let info: Implementation =
            serde_json::from_value(json!({"name": "srv", "version": null})).unwrap();
        assert_eq!(info.version, "");
    }

    #[test]
    fn builders_fill_fields() {
        let info = Implementation::new("c", "0.1")
            .with_title("C")
            .with_description("d")
            .with_website_url("https://c.example")
            .with_icons(vec![Icon::new("data:image/png;base64,AA==")
                .with_mime_type("image/png")
                .with_sizes(vec!["any".into()])
                .with_theme("light")]);
        let v = serde_json::to_value(&info).unwrap();
        assert_eq!(v["icons"][0]["sizes"], json!(["any"]));
        assert_eq!(v["websiteUrl"], "https://c.example");
        assert_eq!(v["title"], "C");
    }

    #[test]
    fn empty_result_accepts_any_value_and_keeps_meta() {
        let r: EmptyResult = serde_json::from_value(json!({})).unwrap();
        assert_eq!(r, EmptyResult::default());
        let r: EmptyResult = serde_json::from_value(json!(null)).unwrap();
        assert_eq!(r.meta, None);
        let r: EmptyResult = serde_json::from_value(json!({"_meta": {"k": 1}, "x": 2})).unwrap();
        assert_eq!(r.meta.unwrap()["k"], 1);
        assert_eq!(
            serde_json::to_value(EmptyResult::default()).unwrap(),
            json!({})
        );
    }

    #[test]
    fn pagination_params_omit_an_absent_cursor() {
        let first = serde_json::to_value(PaginatedRequestParams::new(None)).unwrap();
        assert_eq!(first, json!({}));
        let next = serde_json::to_value(PaginatedRequestParams::new(Some(""))).unwrap();
        assert_eq!(next, json!({"cursor": ""}));
    }

    #[test]
    fn annotations_round_trip() {
        let v = json!({"audience": ["user", "assistant"], "priority": 0.5,
                       "lastModified": "2025-01-12T15:00:58Z"});
        let a: Annotations = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(a.audience, Some(vec![Role::User, Role::Assistant]));
        assert_eq!(serde_json::to_value(&a).unwrap(), v);
        assert_eq!(Role::Assistant.as_str(), "assistant");
    }
}
