//! `resources/directory/read`: a directory resource's direct children, one page or every
//! page, and the whole tree below it, on a server that declares the Skills extension's
//! `directoryRead` (see `docs/skills.md`).

use std::collections::HashSet;

use serde_json::{json, Map};

use crate::error::{Error, Result, Unsupported};
use crate::types::{ReadResourceDirectoryResult, Resource};

use super::engine::request_options::RequestOptions;
use super::handle::Client;
use super::with_options::WithOptions;

/// The method, as the Skills extension names it.
const METHOD: &str = "resources/directory/read";

/// The capability named when the server did not declare `directoryRead`.
const CAPABILITY: &str = "extensions.io.modelcontextprotocol/skills.directoryRead";

/// The deepest [`Client::walk_directory`] goes below the directory it starts from (whose
/// children are at depth 1): far deeper than a skill's tree, and a bound on a server that
/// nests directories without end.
const MAX_WALK_DEPTH: usize = 32;

/// The most entries [`Client::walk_directory`] collects, files and directories together:
/// twenty times the files a skill may have.
const MAX_WALK_ENTRIES: usize = 10_000;

impl Client {
    /// Whether the server declared `directoryRead` in its Skills extension settings, so that
    /// [`Client::read_directory`] may be sent.
    ///
    /// See the example on [`Client::read_directory`].
    pub fn offers_directory_read(&self) -> bool {
        self.skills_settings().is_some_and(|s| s.directory_read)
    }

    /// Reads one page of a directory resource's direct children (`resources/directory/read`):
    /// files with their metadata, subdirectories as directory resources
    /// ([`Resource::is_directory`]). Directory URIs have no trailing slash
    /// (`skill://pdf-processing/templates`). The result is the server's live view, never
    /// answered from the response cache, which no notification would keep current; for a skill whose entry lists its files, the entry is what may be read
    /// ([`LoadedSkill::list_directory`](crate::LoadedSkill::list_directory) answers from it).
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// if client.offers_directory_read() {
    ///     let page = client.read_directory("skill://pdf-processing/templates", None)?;
    ///     for child in &page.resources {
    ///         log::info!("{}{}", child.name, if child.is_directory() { "/" } else { "" });
    ///     }
    ///     // Every page at once, or every level below:
    ///     let children = client.read_whole_directory("skill://pdf-processing")?;
    ///     let tree = client.walk_directory("skill://pdf-processing")?;
    ///     log::info!("{} children, {} entries in all", children.len(), tree.len());
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] when the server did not declare `directoryRead` (nothing is
    /// sent); a URI that is not a directory is [`Error::Rpc`] with code -32602, as the server
    /// sent it; any error of [`Client::request`].
    pub fn read_directory(
        &self,
        uri: &str,
        cursor: Option<&str>,
    ) -> Result<ReadResourceDirectoryResult> {
        self.with(&RequestOptions::default())
            .read_directory(uri, cursor)
    }

    /// Every direct child of a directory resource, following cursors as
    /// [`Client::list_all_tools`] does.
    ///
    /// See the example on [`Client::read_directory`].
    ///
    /// # Errors
    ///
    /// As [`Client::read_directory`], plus [`Error::Protocol`] when the server repeats a
    /// cursor.
    pub fn read_whole_directory(&self, uri: &str) -> Result<Vec<Resource>> {
        self.with(&RequestOptions::default())
            .read_whole_directory(uri)
    }

    /// Every resource below a directory, depth first, each directory followed by its
    /// children. Only children inside their directory (their URI the directory's and a `/`
    /// more) are descended into, each directory once, at most 32 levels down.
    ///
    /// See the example on [`Client::read_directory`].
    ///
    /// # Errors
    ///
    /// As [`Client::read_whole_directory`] for any directory of the tree, plus
    /// [`Error::Protocol`] when the tree holds more than 10,000 entries or goes deeper than
    /// 32 levels.
    pub fn walk_directory(&self, uri: &str) -> Result<Vec<Resource>> {
        self.with(&RequestOptions::default()).walk_directory(uri)
    }

    /// Fails without sending when the server did not declare `directoryRead`.
    fn require_directory_read(&self) -> Result<()> {
        if self.offers_directory_read() {
            return Ok(());
        }
        Err(Error::Unsupported(Unsupported::Capability {
            method: METHOD.to_owned(),
            capability: CAPABILITY,
        }))
    }
}

impl WithOptions<'_> {
    /// [`Client::read_directory`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::read_directory`].
    pub fn read_directory(
        &self,
        uri: &str,
        cursor: Option<&str>,
    ) -> Result<ReadResourceDirectoryResult> {
        self.client.require_directory_read()?;
        let mut params = json!({ "uri": uri });
        if let Some(cursor) = cursor {
            params["cursor"] = json!(cursor);
        }
        self.client.request_as(METHOD, Some(params), self.options)
    }

    /// [`Client::read_whole_directory`] with these options, applied to each page's request.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::read_whole_directory`].
    pub fn read_whole_directory(&self, uri: &str) -> Result<Vec<Resource>> {
        self.client.require_directory_read()?;
        let mut params = Map::new();
        params.insert("uri".into(), json!(uri));
        let options = self.options;
        self.client
            .pages_with(METHOD, &params, "resources", &|| Ok(options.clone()))
    }

    /// [`Client::walk_directory`] with these options, applied to each page's request.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::walk_directory`].
    pub fn walk_directory(&self, uri: &str) -> Result<Vec<Resource>> {
        let mut walk = Walk {
            entries: Vec::new(),
            seen: HashSet::from([uri.to_owned()]),
        };
        walk.descend(self, uri, 1)?;
        Ok(walk.entries)
    }
}

/// What a walk has collected so far, and the directories it has read.
struct Walk {
    entries: Vec<Resource>,
    seen: HashSet<String>,
}

impl Walk {
    /// Reads `uri` (at `depth` below the start), then each child directory inside it.
    fn descend(&mut self, client: &WithOptions<'_>, uri: &str, depth: usize) -> Result<()> {
        let children = client.read_whole_directory(uri)?;
        for child in children {
            if self.entries.len() == MAX_WALK_ENTRIES {
                return Err(Error::Protocol(format!(
                    "the tree below {uri} has more than {MAX_WALK_ENTRIES} entries; \
                     read it a directory at a time"
                )));
            }
            let next = child.is_directory()
                && inside(uri, &child.uri)
                && self.seen.insert(child.uri.clone());
            let child_uri = child.uri.clone();
            self.entries.push(child);
            if !next {
                continue;
            }
            if depth == MAX_WALK_DEPTH {
                return Err(Error::Protocol(format!(
                    "{child_uri} is more than {MAX_WALK_DEPTH} directories deep; \
                     read it a directory at a time"
                )));
            }
            self.descend(client, &child_uri, depth + 1)?;
        }
        Ok(())
    }
}

/// Whether `child` names something inside the directory `dir`: `dir`, a `/`, and a path of
/// non-empty segments none of which is `.` or `..`.
pub(super) fn inside(dir: &str, child: &str) -> bool {
    child
        .strip_prefix(dir)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|path| {
            path.split('/')
                .all(|segment| !matches!(segment, "" | "." | ".."))
        })
}

#[cfg(test)]
mod tests {
    use super::inside;

    #[test]
    fn only_paths_below_the_directory_are_inside_it() {
        assert!(inside("skill://pdf", "skill://pdf/templates"));
        assert!(inside("skill://pdf", "skill://pdf/a/b"));
        assert!(!inside("skill://pdf", "skill://pdf"));
        assert!(!inside("skill://pdf", "skill://pdf2/x"));
        assert!(!inside("skill://pdf", "skill://pdf/"));
        assert!(!inside("skill://pdf", "skill://pdf/../etc"));
        assert!(!inside("skill://pdf", "skill://pdf/a//b"));
        assert!(!inside("skill://pdf", "file:///etc"));
    }
}
