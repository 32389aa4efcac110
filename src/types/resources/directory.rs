//! Directory resources and `resources/directory/read`, which lists a directory's direct
//! children (defined by the Skills extension, offered when a server declares `directoryRead`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Resource;

/// The `mimeType` of a directory resource: a resource whose children
/// `resources/directory/read` lists.
///
/// See the example on [`ReadResourceDirectoryResult`].
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// Parameters of `resources/directory/read`.
///
/// See the example on [`Client::read_directory`](crate::Client::read_directory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceDirectoryRequestParams {
    /// The URI of the directory, written without a trailing slash.
    pub uri: String,
    /// The cursor of the page to read, from the previous page's `nextCursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// One page of `resources/directory/read`: the directory's direct children, files with their
/// ordinary metadata and subdirectories as directory resources.
///
/// ```
/// use umcp::types::{ReadResourceDirectoryResult, DIRECTORY_MIME_TYPE};
///
/// let page: ReadResourceDirectoryResult = serde_json::from_str(r#"{"resources": [
///     {"uri": "skill://pdf/templates/invoice.md", "name": "invoice.md", "mimeType": "text/markdown"},
///     {"uri": "skill://pdf/templates/regional", "name": "regional", "mimeType": "inode/directory"}
/// ]}"#)?;
/// assert!(!page.resources[0].is_directory());
/// assert_eq!(page.resources[1].mime_type.as_deref(), Some(DIRECTORY_MIME_TYPE));
/// assert!(page.resources[1].is_directory());
/// assert!(page.next_cursor.is_none());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceDirectoryResult {
    /// The children on this page.
    #[serde(default, deserialize_with = "crate::types::lenient::null_as_default")]
    pub resources: Vec<Resource>,
    /// The cursor for the next page; `None` means this was the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Resource {
    /// Whether this is a directory resource (`mimeType` `inode/directory`), whose children
    /// [`Client::read_directory`](crate::Client::read_directory) lists.
    ///
    /// See the example on [`ReadResourceDirectoryResult`].
    pub fn is_directory(&self) -> bool {
        self.mime_type.as_deref() == Some(DIRECTORY_MIME_TYPE)
    }
}
